"""Where a command's result goes: stdout, or the ``--output`` file, created only on success."""

from __future__ import annotations

from pathlib import Path

import click

from te_doctor.errors import OutputClosedError, TeDoctorError


def write(text: str, output: Path | None, *, color: bool = False) -> None:
    """Write to ``output`` (created only now, after success) or stdout."""
    if output is None:
        try:
            click.echo(text, nl=False, color=color or None)  # None: click strips codes off a tty
        except BrokenPipeError:
            raise OutputClosedError(
                "stdout was closed before the output was written (its reader exited early)"
            ) from None
        return
    try:
        # Non-UTF-8 bytes from the environment or a path (decoded as surrogates) stay readable
        # as \xNN instead of failing the write.
        output.write_text(text, encoding="utf-8", errors="backslashreplace")
    except OSError as exc:
        raise TeDoctorError(f"--output {output}: cannot write: {exc.strerror or exc}") from None
    click.echo(f"te-doctor: wrote {output}", err=True)
