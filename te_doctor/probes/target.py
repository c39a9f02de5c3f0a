"""Which interpreter te-doctor diagnoses, and why: the one users mean, not te-doctor's own.

A diagnostics tool is best installed on its own (pipx, uvx, its own venv) so that installing it
never changes the stack it diagnoses. Run that way inside an activated environment, the user
means the activated one: ``VIRTUAL_ENV`` (a venv, also inside conda), else ``CONDA_PREFIX``.
``--python PATH`` names one; ``--python self`` keeps te-doctor's own. The Python API
(``select_path``) always diagnoses the process that calls it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: ``--python self``: diagnose the interpreter te-doctor runs in.
SELF = "self"
#: Why an interpreter given as ``--python PATH`` is diagnosed.
NAMED = "named by --python"
#: The environment variables that name an activated environment, innermost first.
ACTIVE_ENVIRONMENTS = (
    ("VIRTUAL_ENV", "the active virtual environment"),
    ("CONDA_PREFIX", "the active conda environment"),
)


@dataclass(frozen=True, slots=True)
class Target:
    """The interpreter to diagnose (None: te-doctor's own) and why, in words for the header."""

    python: str | None
    why: str


def own_interpreter(why: str) -> Target:
    """te-doctor's own interpreter, for the stated reason."""
    return Target(None, why)


def choose_target(
    option: str | None,
    env: Mapping[str, str],
    *,
    own_prefix: str = sys.prefix,
    is_file: Callable[[str], bool] = os.path.isfile,
) -> Target:
    """The interpreter for ``--python option`` (None when not given) in environment ``env``."""
    if option == SELF:
        return own_interpreter("te-doctor's own interpreter (--python self)")
    if option:
        return Target(option, NAMED)
    for variable, meaning in ACTIVE_ENVIRONMENTS:
        prefix = env.get(variable, "")
        if not prefix:
            continue
        if _same_directory(prefix, own_prefix):
            return own_interpreter(f"te-doctor's own interpreter, which is {meaning}")
        python = next((p for p in _interpreters(prefix) if is_file(p)), None)
        if python is None:
            return own_interpreter(
                f"te-doctor's own interpreter: {variable}={prefix} has no bin/python"
            )
        return Target(
            python,
            f"{meaning} ({variable}); te-doctor itself runs in {own_prefix} "
            "(--python self diagnoses that one)",
        )
    return own_interpreter("te-doctor's own interpreter (no other environment is active)")


def _interpreters(prefix: str) -> tuple[str, ...]:
    base = prefix.rstrip("/")
    return (f"{base}/bin/python", f"{base}/bin/python3")


def _same_directory(first: str, second: str) -> bool:
    return os.path.realpath(first) == os.path.realpath(second)
