"""The ``--format`` choices of ``te-doctor check`` and the renderer of each."""

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


class CheckFormat(str, enum.Enum):
    """The ``--format`` choices of ``te-doctor check``."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    JUNIT = "junit"


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
