"""The ``--format`` choices of ``te-doctor probe`` and the renderer of each.

Apart from the check report's renderers, so that ``probe`` loads no rule engine.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from te_doctor.render.text import render_snapshot_text
from te_doctor.snapshot.file import dumps
from te_doctor.snapshot.model import Snapshot


class OutputFormat(str, enum.Enum):
    """The ``--format`` choices of ``te-doctor probe``."""

    TEXT = "text"
    JSON = "json"


SNAPSHOT_RENDERERS: dict[OutputFormat, Callable[[Snapshot], str]] = {
    OutputFormat.TEXT: render_snapshot_text,
    OutputFormat.JSON: dumps,
}
