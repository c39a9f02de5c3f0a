"""``check --for``: each framework's settings for the recommended path, after the snippet.

Text and Markdown; both say when a framework cannot express the recommended path, why, and
which path it can (``te_doctor.engine.frameworks.advise`` chose it).
"""

from __future__ import annotations

from te_doctor.check.report import Report
from te_doctor.engine.frameworks import FrameworkAdvice
from te_doctor.render.style import Style


def framework_text(report: Report, style: Style) -> str:
    """One block per ``--for`` framework; empty without ``--for``."""
    lines: list[str] = []
    for advice in report.frameworks:
        lines += ["", *_headline(advice, code="")]
        if advice.path:
            lines += [f"    {line}" for line in advice.settings.splitlines()]
            lines += [f"    {line}" for line in _facts(advice)]
    return "\n".join(lines) + "\n" if lines else ""


def framework_markdown(report: Report, style: Style) -> str:
    """A section per ``--for`` framework, for a job summary or a ticket."""
    lines: list[str] = []
    for advice in report.frameworks:
        lines += ["", f"### {advice.name} settings", "", *_headline(advice, code="`")]
        if advice.path:
            lines += ["", "```", *advice.settings.splitlines(), "```", ""]
            lines += [f"- {line}" for line in _facts(advice)]
    return "\n".join(lines) + "\n" if lines else ""


def _headline(advice: FrameworkAdvice, code: str) -> list[str]:
    """What the settings are for, or why there are none for the recommended path."""
    name, recommended, path = advice.name, advice.recommended, advice.path

    def quoted(path_id: str) -> str:
        return f"{code}{path_id}{code}"

    if not recommended:
        return [f"{name}: nothing runs here yet, so there is nothing to set."]
    if not advice.cannot:
        return [f"{name}, for {quoted(path)} ({advice.form}):"]
    lines = [f"{name} cannot express {quoted(recommended)}: {advice.cannot}."]
    if not path:
        return [*lines, f"No other path viable here is one {name} can express."]
    return [*lines, f"The closest it can, viable here: {quoted(path)} ({advice.form}):"]


def _facts(advice: FrameworkAdvice) -> list[str]:
    facts = [f"versions: {advice.versions}"]
    facts += [f"note: {advice.note}"] if advice.note else []
    return [*facts, f"source: {advice.source}"]
