"""Like the real child when `import transformer_engine.pytorch` fails."""

from _common import write

write(
    finished=True,
    error={
        "type": "OSError",
        "text": "Traceback ...\nOSError: libcudnn.so.9: cannot open shared object file",
    },
)
