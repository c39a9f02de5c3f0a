"""Whether text output is coloured: ``--color``, then the conventions users set in the shell.

``--color always|never`` wins. With ``auto``: ``NO_COLOR`` (any non-empty value, no-color.org)
turns colour off; otherwise ``FORCE_COLOR`` or ``CLICOLOR_FORCE`` (any value but empty or ``0``,
force-color.org and the CLICOLOR convention) turn it on even off a terminal, as in CI logs that
render ANSI codes; otherwise colour appears on a terminal whose ``TERM`` is not ``dumb``.
"""

from __future__ import annotations

from collections.abc import Mapping

FORCING = ("FORCE_COLOR", "CLICOLOR_FORCE")


def wants_colour(choice: str, *, to_terminal: bool, to_file: bool, env: Mapping[str, str]) -> bool:
    """The colour decision for ``--color choice``; ``auto`` never colours an ``--output`` file."""
    if choice != "auto":
        return choice == "always"
    if to_file or env.get("NO_COLOR", ""):
        return False
    if any(env.get(name, "") not in ("", "0") for name in FORCING):
        return True
    return to_terminal and env.get("TERM") != "dumb"
