"""Renderers turn a snapshot into text; they format and decide nothing."""

from __future__ import annotations

import enum
from collections.abc import Callable

from te_doctor.render.text import render_snapshot_text
from te_doctor.snapshot import Snapshot
from te_doctor.snapshot_file import dumps


class OutputFormat(str, enum.Enum):
    """The ``--format`` choices of ``te-doctor probe``."""

    TEXT = "text"
    JSON = "json"


SNAPSHOT_RENDERERS: dict[OutputFormat, Callable[[Snapshot], str]] = {
    OutputFormat.TEXT: render_snapshot_text,
    OutputFormat.JSON: dumps,
}
