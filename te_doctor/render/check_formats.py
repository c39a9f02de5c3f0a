"""Machine-readable and paste-able check reports: JSON, Markdown and JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from te_doctor.check.report import Report
from te_doctor.engine.evaluate import Outcome
from te_doctor.engine.rule_model import Severity
from te_doctor.render.style import Style
from te_doctor.snapshot.codec import to_data


def render_check_json(report: Report, style: Style) -> str:
    """The report as versioned JSON (``schema``: te-doctor/report/v2); all findings included."""
    return json.dumps(to_data(report), indent=2, ensure_ascii=False) + "\n"


def render_check_markdown(report: Report, style: Style) -> str:
    """A Markdown report for a GitHub step summary or a bug report."""
    machine = report.machine
    verdict = "PASS" if report.gate.passed else "FAIL"
    lines = [
        f"## te-doctor check: {verdict}",
        "",
        f"- GPUs: {machine.gpus}",
        f"- Driver: {machine.driver}; torch: {machine.torch}; "
        f"Transformer Engine: {machine.transformer_engine}",
        f"- Diagnosed: {machine.python}",
        f"- Best execution path now: `{report.recommendation.path or 'none'}`",
    ]
    lines += [f"- Gate: {reason}" for reason in report.gate.reasons]
    if report.measured is not None:
        lines.append(f"- Measured here ({report.measured.created_at}): {report.measured.verdict}")
    shown = [f for f in report.findings if f.outcome is Outcome.FIRED or style.verbose]
    if shown:
        lines += ["", "| | Rule | Finding | Fix |", "|---|---|---|---|"]
        for finding in shown:
            mark = _severity_word(finding.severity) if finding.fired else finding.outcome.value
            lines.append(
                f"| {mark} | `{finding.rule_id}` {finding.name} | {_cell(finding.message)} "
                f"| {_cell(finding.fix)} |"
            )
    lines += ["", "| Path | Viable | Why not |", "|---|---|---|"]
    lines += [
        f"| `{v.id}` | {'yes' if v.viable else 'no'} | {_cell('; '.join(v.reasons))} |"
        for v in report.recommendation.ranking
    ]
    return "\n".join(lines) + "\n"


def render_check_junit(report: Report, style: Style) -> str:
    """JUnit XML: one test case per rule, plus one per gate condition, so CI shows each."""
    threshold = 3 if report.options.fail_on == "never" else Severity(report.options.fail_on).rank
    suite = ET.Element("testsuite", name="te-doctor", tests=str(len(report.findings) + 1))
    failures = skipped = 0
    for finding in report.findings:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"te-doctor.{finding.category}",
            name=f"{finding.rule_id} {finding.name}",
        )
        if finding.fired and finding.severity.rank >= threshold:
            failures += 1
            failure = ET.SubElement(
                case, "failure", type=finding.severity.value, message=finding.message
            )
            failure.text = f"{finding.message}\nfix: {finding.fix}"
        elif finding.fired:
            ET.SubElement(case, "system-out").text = f"{finding.severity.value}: {finding.message}"
        elif finding.outcome is Outcome.UNDECIDED:
            skipped += 1
            missing = "; ".join(f"{m.path}: {m.reason}" for m in finding.missing)
            ET.SubElement(case, "skipped", message=f"could not decide: {missing}")
    gate = ET.SubElement(suite, "testcase", classname="te-doctor.gate", name="gate")
    if not report.gate.passed:
        failures += 1
        ET.SubElement(gate, "failure", type="gate", message="; ".join(report.gate.reasons))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _severity_word(severity: Severity) -> str:
    return {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "info"}[severity]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
