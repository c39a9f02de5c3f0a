"""Wrapping for the terminal: long lines fold at the width with a hanging indent.

Without a width (a pipe, a file, a golden test) lines are left whole. Commands are never
passed through here: a command must stay one line to paste. Colour codes in a prefix take no
columns.
"""

from __future__ import annotations

import re
import textwrap

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def visible_length(text: str) -> int:
    """Columns ``text`` takes on a terminal (colour codes take none)."""
    return len(_ANSI.sub("", text))


def flow(text: str) -> str:
    """A rule's text as one paragraph: its line breaks are the rule file's, not the reader's."""
    return " ".join(text.split())


def hang(first: str, text: str, width: int | None, indent: int | None = None) -> list[str]:
    """``first`` + ``text``, wrapped at ``width`` with following lines under the text.

    ``indent`` overrides where the following lines start (default: under ``text``).
    """
    shown = visible_length(first)
    if width is None or shown + len(text) <= width:
        return [f"{first}{text}"]
    lead = " " * (shown if indent is None else indent)
    lines = textwrap.wrap(
        text,
        width=max(width, len(lead) + 20),
        initial_indent=" " * shown,
        subsequent_indent=lead,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [first + lines[0][shown:], *lines[1:]] if lines else [first]
