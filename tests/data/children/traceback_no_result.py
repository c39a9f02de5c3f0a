"""Stand-in smoke child: dies with a traceback before writing any result."""

raise ImportError(
    "/venv/lib/python3.12/site-packages/transformer_engine_torch.so: "
    "undefined symbol: _ZN3c104cuda9SetDeviceEi"
)
