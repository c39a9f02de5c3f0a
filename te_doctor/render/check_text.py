"""The doctor-style report: the FP8 headline, one line per area with what was found and its
findings, where to start, then the execution paths, the verdict and what to use."""

from __future__ import annotations

from te_doctor.check.areas import Area
from te_doctor.check.report import Report
from te_doctor.engine.evaluate import Finding, Outcome
from te_doctor.render.check_paths import paths_lines, recommendation_lines
from te_doctor.render.style import Style
from te_doctor.render.wrap import flow, hang

_SEVERITY_KIND = {2: "error", 1: "warning", 0: "info"}
_OUTCOME_WORDS = {
    Outcome.PASSED: "passed",
    Outcome.NOT_APPLICABLE: "not applicable",
    Outcome.UNDECIDED: "could not decide",
}
_OUTCOME_KIND = {
    Outcome.PASSED: "ok",
    Outcome.NOT_APPLICABLE: "absent",
    Outcome.UNDECIDED: "undecided",
}


def render_check_text(report: Report, style: Style) -> str:
    """The report for a terminal or a log."""
    machine = report.machine
    driver = "no NVIDIA driver" if machine.driver == "no driver" else f"driver {machine.driver}"
    lines = [
        f"te-doctor {report.te_doctor_version} check: {machine.gpus}; {driver}; "
        f"torch {machine.torch}; Transformer Engine {machine.transformer_engine}",
        f"Diagnosed: {machine.python}",
        *headline_lines(report, style),
        "",
    ]
    findings = {f.rule_id: f for f in report.findings}
    started = set(report.start.rules) if report.start else set()
    for area in report.areas:
        lines += _area(area, [findings[r] for r in area.findings], started, report, style)
    for probe in report.probe_errors:
        lines.append(f"{style.mark('undecided')} probe {probe.name} failed: {probe.detail}")
    lines += _start_here(report, style)
    lines += ["", "Execution paths (best first):", *paths_lines(report, style)]
    lines += ["", _verdict(report, style), *recommendation_lines(report, style)]
    return "\n".join(lines) + "\n"


def render_check_line(report: Report, style: Style) -> str:
    """One line for scripts (``--quiet``): verdict, FP8 in brief, the path to use."""
    verdict = "PASS" if report.gate.passed else "FAIL"
    fp8 = report.headline
    if fp8.te_fp8 or fp8.fp8_paths:
        said = f"FP8 possible ({', '.join(fp8.fp8_paths)})"
    else:
        said = "FP8 not possible" + (f": {fp8.causes[0]}" if fp8.causes else "")
    use = report.recommendation.path or "nothing runs yet"
    return f"te-doctor check: {verdict}; {said}; use {use}\n"


def headline_lines(report: Report, style: Style) -> list[str]:
    """FP8 here in at most two lines: the viable paths, or the causes that matter."""
    fp8 = report.headline
    if fp8.te_fp8:
        said = hang("FP8: possible here ", f"({', '.join(fp8.fp8_paths)})", style.width, 4)
        return [style.paint(line, "ok") for line in said[:2]]
    causes = list(fp8.causes) or ["facts are missing (see below)"]
    if fp8.fp8_paths:
        first = f"FP8: possible here with {', '.join(fp8.fp8_paths)}; not with Transformer Engine: "
        kind = "warning"
    else:
        first, kind = "FP8: not possible here: ", "error"
    more = f" (and {fp8.more} more below)" if fp8.more else ""
    if len(causes) > 1:
        lines = [first + causes[0], f"    and: {causes[1]}{more}"]
        if style.width is None or all(len(line) <= style.width for line in lines):
            return [style.paint(line, kind) for line in lines]
        more = f" (and {fp8.more + 1} more below)"  # a narrow terminal: the first cause only
    return [style.paint(line, kind) for line in _fit(first, causes[0], more, style)]


def _fit(lead: str, text: str, more: str, style: Style) -> list[str]:
    """``lead + text + more`` in at most two lines, ``text`` shortened to fit if it must."""
    width = style.width
    lines = hang(lead, text + more, width, 4)
    if width is None or (len(lines) <= 2 and all(len(line) <= width for line in lines)):
        return lines
    if len(lead) + 15 > width:  # the lead takes the first line, the cause the second
        return [_cut(lead.rstrip(), "", width, style), _cut(f"    {text}", more, width, style)]
    first, *rest = hang(lead, text, width, 4)
    return [first, _cut("    " + " ".join(line.strip() for line in rest), more, width, style)]


def _cut(text: str, more: str, width: int, style: Style) -> str:
    """``text + more`` in ``width`` columns, ``text`` cut at a word with an ellipsis."""
    if len(text) + len(more) <= width:
        return text + more
    room = width - len(more) - len(style.ellipsis)
    return text[:room].rsplit(" ", 1)[0] + style.ellipsis + more


def _area(
    area: Area, findings: list[Finding], started: set[str], report: Report, style: Style
) -> list[str]:
    hint = f" {style.arrow} {area.hint}" if area.hint else ""
    counts = f" [{_counts(findings)}]" if style.verbose and findings else ""
    lines = hang(
        f"{style.mark(area.status)} {area.name}: ", f"{area.found}{hint}{counts}", style.width, 4
    )
    for finding in (f for f in findings if f.fired):
        mark = style.mark(_SEVERITY_KIND[finding.severity.rank])
        said = f"{flow(finding.message).rstrip('. ')} ({finding.rule_id})"
        lines += hang(f"    {mark} ", said, style.width, 6)
        if finding.rule_id in started:
            lines.append("      fix: see Start here below")
        elif finding.fix:
            lines += hang("      fix: ", flow(finding.fix), style.width, 11)
    if area.name == "Smoke test":
        lines += _smoke_checks(report, style)
    if style.verbose:
        for finding in (f for f in findings if not f.fired):
            lines += _quiet_finding(finding, style)
    return lines


def _quiet_finding(finding: Finding, style: Style) -> list[str]:
    words = _OUTCOME_WORDS[finding.outcome]
    if finding.outcome is Outcome.UNDECIDED:
        missing = "; ".join(f"{m.path}: {m.reason}" for m in finding.missing)
        words += f" ({missing})"
    elif finding.outcome is Outcome.NOT_APPLICABLE:
        words += f" ({not_here_words(finding)})"
    head = f"    {style.mark(_OUTCOME_KIND[finding.outcome])} {finding.rule_id} {finding.name}: "
    return hang(head, words, style.width, 6)


def not_here_words(finding: Finding) -> str:
    """Why a finding is not applicable: the first two things it reads that are not here."""
    reasons = list(dict.fromkeys(m.reason for m in finding.absent if m.reason))
    return "; ".join(reasons[:2]) or "what it checks is not here"


def _counts(findings: list[Finding]) -> str:
    order = [Outcome.FIRED, Outcome.UNDECIDED, Outcome.PASSED, Outcome.NOT_APPLICABLE]
    words = {Outcome.FIRED: "found", **_OUTCOME_WORDS}
    counted = [(sum(f.outcome is o for f in findings), words[o]) for o in order]
    return ", ".join(f"{n} {word}" for n, word in counted if n)


def _smoke_checks(report: Report, style: Style) -> list[str]:
    """What the real GEMMs did, each against its FP32 reference (skipped ones with --verbose)."""
    smoke = report.smoke
    lines = [f"    ran under {smoke.python}"] if smoke.outcome.known and smoke.python else []
    if smoke.outcome.known and smoke.outcome.value != "ok" and smoke.stage.known:
        last = (smoke.error_text.value or "").strip().splitlines()[-1:] or [""]
        lines += hang(
            f"    {style.mark('error')} ",
            f"stage {smoke.stage.value}: {last[0][:200]}",
            style.width,
            6,
        )
    for check in smoke.checks:
        if check.status == "skipped" and not style.verbose:
            continue
        kind = {"ok": "ok", "skipped": "info"}.get(check.status, "error")
        error = check.rel_error.value
        measured = (
            f"relative error {error:.2e} vs FP32 (tolerance {check.tolerance:g})"
            if error is not None
            else check.detail[:160]
        )
        where = f"{check.name} on {check.device or '-'}"
        lines += hang(
            f"    {style.mark(kind)} ", f"{where}: {check.status}, {measured}", style.width, 6
        )
    return lines


def _start_here(report: Report, style: Style) -> list[str]:
    start = report.start
    if start is None:
        return []
    title = f"{start.title.rstrip('. ')} ({', '.join(start.rules)})"
    lines = ["", *hang("Start here: ", title, style.width, 4)]
    if start.text:
        lines += hang("    ", flow(start.text), style.width)
    if start.steps:
        steps = [*start.steps, report.rerun]
        lines += [f"    {number}. {step}" for number, step in enumerate(steps, 1)]
    return lines


def _verdict(report: Report, style: Style) -> str:
    if report.gate.passed:
        return style.paint(f"Verdict: PASS (--fail-on {report.options.fail_on})", "ok")
    return style.paint("Verdict: FAIL: " + "; ".join(report.gate.reasons), "error")
