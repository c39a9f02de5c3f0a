"""Where a command's result goes: stdout, or the ``--output`` file, created only on success."""

from __future__ import annotations

from pathlib import Path

import click

from te_doctor.errors import TeDoctorError


def write(text: str, output: Path | None, *, color: bool = False) -> None:
    """Write to ``output`` (created only now, after success) or stdout."""
    if output is None:
        click.echo(text, nl=False, color=color or None)  # None: click strips codes off a tty
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TeDoctorError(f"--output {output}: cannot write: {exc.strerror or exc}") from None
    click.echo(f"te-doctor: wrote {output}", err=True)
