"""How a report is drawn: colour, Unicode markers, verbosity. Decided once by the CLI."""

from __future__ import annotations

from dataclasses import dataclass

import click

UNICODE_MARKS = {
    "ok": "✓",
    "warning": "!",
    "error": "✗",
    "undecided": "?",
    "info": "i",
    "absent": "–",
}
ASCII_MARKS = {
    "ok": "[ok]",
    "warning": "[!!]",
    "error": "[xx]",
    "undecided": "[??]",
    "info": "[ii]",
    "absent": "[--]",
}
_COLOURS = {
    "ok": "green",
    "warning": "yellow",
    "error": "red",
    "undecided": "magenta",
    "info": "cyan",
    "absent": "blue",
}


@dataclass(frozen=True, slots=True)
class Style:
    """Rendering choices; the default is plain ASCII-safe output, as in files and CI logs."""

    color: bool = False
    unicode: bool = True
    verbose: bool = False
    #: Wrap text at this many columns (a terminal's width); None: never wrap.
    width: int | None = None

    def mark(self, kind: str) -> str:
        """The status marker for ``kind`` (ok, warning, error, undecided, info, absent)."""
        text = (UNICODE_MARKS if self.unicode else ASCII_MARKS)[kind]
        return click.style(text, fg=_COLOURS[kind], bold=True) if self.color else text

    @property
    def arrow(self) -> str:
        """Points at the command to run next."""
        return "→" if self.unicode else "->"

    @property
    def ellipsis(self) -> str:
        """Ends a line shortened to fit."""
        return "…" if self.unicode else "..."

    def paint(self, text: str, kind: str) -> str:
        """``text`` in the colour of ``kind`` when colour is on."""
        return click.style(text, fg=_COLOURS[kind]) if self.color else text


def can_encode(encoding: str | None) -> bool:
    """True when the stream's encoding can print the Unicode markers."""
    try:
        "".join(UNICODE_MARKS.values()).encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True
