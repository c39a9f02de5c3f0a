"""Renderers turn a snapshot or a check report into text; they format and decide nothing."""

from __future__ import annotations

import enum
from collections.abc import Callable

from te_doctor.check.report import Report
from te_doctor.render.check_formats import (
    render_check_json,
    render_check_junit,
    render_check_markdown,
)
from te_doctor.render.check_text import render_check_text
from te_doctor.render.style import Style
from te_doctor.render.text import render_snapshot_text
from te_doctor.snapshot.file import dumps
from te_doctor.snapshot.model import Snapshot


class OutputFormat(str, enum.Enum):
    """The ``--format`` choices of ``te-doctor probe``."""

    TEXT = "text"
    JSON = "json"


class CheckFormat(str, enum.Enum):
    """The ``--format`` choices of ``te-doctor check``."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    JUNIT = "junit"


SNAPSHOT_RENDERERS: dict[OutputFormat, Callable[[Snapshot], str]] = {
    OutputFormat.TEXT: render_snapshot_text,
    OutputFormat.JSON: dumps,
}
CHECK_RENDERERS: dict[CheckFormat, Callable[[Report, Style], str]] = {
    CheckFormat.TEXT: render_check_text,
    CheckFormat.JSON: render_check_json,
    CheckFormat.MARKDOWN: render_check_markdown,
    CheckFormat.JUNIT: render_check_junit,
}
