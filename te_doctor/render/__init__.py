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
from te_doctor.render.framework_settings import framework_markdown, framework_text
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
CheckRenderer = Callable[[Report, Style], str]


def _then(first: CheckRenderer, second: CheckRenderer) -> CheckRenderer:
    """``first``'s text followed by ``second``'s (``check --for`` settings after the snippet)."""

    def render(report: Report, style: Style) -> str:
        return first(report, style) + second(report, style)

    return render


CHECK_RENDERERS: dict[CheckFormat, CheckRenderer] = {
    CheckFormat.TEXT: _then(render_check_text, framework_text),
    CheckFormat.JSON: render_check_json,
    CheckFormat.MARKDOWN: _then(render_check_markdown, framework_markdown),
    CheckFormat.JUNIT: render_check_junit,
}
