"""Machine-readable and paste-able check reports: JSON, Markdown and JUnit XML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from te_doctor.check.report import Report
from te_doctor.engine.evaluate import Finding, Outcome
from te_doctor.engine.recommend import PathVerdict
from te_doctor.engine.rule_model import Severity
from te_doctor.render.check_text import headline_lines, not_here_words
from te_doctor.render.style import Style
from te_doctor.snapshot.codec import to_data

_STATUS_WORDS = {
    "ok": "ok",
    "error": "**error**",
    "warning": "warning",
    "info": "info",
    "undecided": "undecided",
    "absent": "not here",
}
_OUTCOME_WORDS = {
    Outcome.PASSED: "passed",
    Outcome.NOT_APPLICABLE: "not applicable",
    Outcome.UNDECIDED: "could not decide",
}


def render_check_json(report: Report, style: Style) -> str:
    """The report as versioned JSON (``schema``: te-doctor/report/v3); all findings included."""
    return json.dumps(to_data(report), indent=2, ensure_ascii=False) + "\n"


def render_check_markdown(report: Report, style: Style) -> str:
    """A Markdown report for a GitHub step summary or a bug report."""
    plain = Style(unicode=style.unicode)
    machine = report.machine
    verdict = "PASS" if report.gate.passed else "FAIL"
    lines = [f"## te-doctor check: {verdict}", ""]
    lines += [f"**{line.strip()}**  " for line in headline_lines(report, plain)]
    lines += [
        "",
        f"- GPUs: {machine.gpus}; driver: {machine.driver}; torch: {machine.torch}; "
        f"Transformer Engine: {machine.transformer_engine}",
        f"- Diagnosed: {machine.python}",
        f"- Best execution path now: `{report.recommendation.path or 'none'}`",
    ]
    lines += [f"- Gate: {reason}" for reason in report.gate.reasons]
    if report.measured is not None:
        lines.append(f"- Measured here ({report.measured.created_at}): {report.measured.verdict}")
    lines += ["", "| | Area | Found |", "|---|---|---|"]
    for area in report.areas:
        hint = f" → `{area.hint}`" if area.hint else ""
        lines.append(f"| {_STATUS_WORDS[area.status]} | {area.name} | {_cell(area.found)}{hint} |")
    lines += _findings_table(report, style)
    lines += _start_here(report)
    lines += ["", "| Path | Viable | Why not |", "|---|---|---|"]
    lines += [
        f"| `{v.id}` | {'yes' if v.viable else 'no'} | {_cell(_why_not(v))} |"
        for v in report.recommendation.ranking
    ]
    return "\n".join(lines) + "\n"


def _why_not(verdict: PathVerdict) -> str:
    """Findings by id (the table above says them in words), anything else in words."""
    said = [f"ruled out by {', '.join(verdict.rules)} (findings above)"] if verdict.rules else []
    return "; ".join(said + list(verdict.reasons[len(verdict.rules) :]))


def _findings_table(report: Report, style: Style) -> list[str]:
    """Fired findings by area (every finding with --verbose), each with its fix."""
    by_id = {f.rule_id: f for f in report.findings}
    started = set(report.start.rules) if report.start else set()
    rows = []
    for area in report.areas:
        for finding in (by_id[r] for r in area.findings):
            if not (finding.fired or style.verbose):
                continue
            if finding.fired:
                said, fix = finding.message, finding.fix
                fix = "see Start here" if finding.rule_id in started else fix
                mark = finding.severity.value
            else:
                said, fix, mark = _quiet(finding), "", _OUTCOME_WORDS[finding.outcome]
            rows.append(
                f"| {mark} | {area.name} | `{finding.rule_id}` {finding.name} | {_cell(said)} "
                f"| {_cell(fix)} |"
            )
    if not rows:
        return []
    return ["", "| | Area | Rule | Finding | Fix |", "|---|---|---|---|---|", *rows]


def _quiet(finding: Finding) -> str:
    if finding.outcome is Outcome.NOT_APPLICABLE:
        return not_here_words(finding)
    return "; ".join(f"{m.path}: {m.reason}" for m in finding.missing)


def _start_here(report: Report) -> list[str]:
    start = report.start
    if start is None:
        return []
    lines = ["", f"### Start here: {start.title.rstrip('. ')} ({', '.join(start.rules)})", ""]
    if start.text:
        lines += [start.text]
    if start.steps:
        lines += ["```bash", *start.steps, report.rerun, "```"]
    return lines


def render_check_junit(report: Report, style: Style) -> str:
    """JUnit XML: one test case per rule, by area, plus one for the gate, so CI shows each.

    A rule that fired at the ``--fail-on`` level fails; one that could not decide, or does
    not apply here, is skipped with why; one that was checked and passed passes.
    """
    threshold = 3 if report.options.fail_on == "never" else Severity(report.options.fail_on).rank
    suite = ET.Element("testsuite", name="te-doctor", tests=str(len(report.findings) + 1))
    by_id = {f.rule_id: f for f in report.findings}
    failures = skipped = 0
    for area in report.areas:
        for finding in (by_id[r] for r in area.findings):
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"te-doctor.{_slug(area.name)}",
                name=f"{finding.rule_id} {finding.name}",
            )
            if finding.fired and finding.severity.rank >= threshold:
                failures += 1
                failure = ET.SubElement(
                    case, "failure", type=finding.severity.value, message=finding.message
                )
                failure.text = f"{finding.message}\nfix: {finding.fix}"
            elif finding.fired:
                ET.SubElement(
                    case, "system-out"
                ).text = f"{finding.severity.value}: {finding.message}"
            elif finding.outcome is not Outcome.PASSED:
                skipped += 1
                words = f"{_OUTCOME_WORDS[finding.outcome]}: {_quiet(finding)}"
                ET.SubElement(case, "skipped", message=words)
    gate = ET.SubElement(suite, "testcase", classname="te-doctor.gate", name="gate")
    if not report.gate.passed:
        failures += 1
        ET.SubElement(gate, "failure", type="gate", message="; ".join(report.gate.reasons))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
