"""Commands in fixes, filled for the diagnosed interpreter: ``pip`` runs under it.

A bare ``pip`` may belong to another environment than the one te-doctor diagnosed (``--python``
or a recorded snapshot's interpreter), so every ``pip install`` / ``pip uninstall`` in a fix
or a start-here step becomes ``<interpreter> -m pip ...``; the closing ``te-doctor check``
carries ``--python`` when the check was given one.
"""

from __future__ import annotations

import re
import shlex

_PIP = re.compile(r"(?<![\w./-])pip (install|uninstall)\b")


def with_interpreter(text: str, python: str) -> str:
    """``text`` with each ``pip install``/``pip uninstall`` run by ``python`` (if known)."""
    if not python:
        return text
    return _PIP.sub(lambda m: f"{shlex.quote(python)} -m pip {m.group(1)}", text)


def rerun_command(python: str | None) -> str:
    """The ``te-doctor check`` that checks the same interpreter again."""
    return "te-doctor check" + (f" --python {shlex.quote(python)}" if python else "")
