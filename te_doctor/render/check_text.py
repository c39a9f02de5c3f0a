"""The doctor-style report: one line per area, then each finding with its fix, then paths."""

from __future__ import annotations

from te_doctor.check.report import Report
from te_doctor.engine.evaluate import Finding, Outcome
from te_doctor.render.style import Style

#: Report areas, in print order, and the rule categories each one gathers.
AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("GPU and FP8 hardware", ("unsupported-gpu-fp8", "shape-alignment", "runtime-numerics")),
    ("NVIDIA driver", ("driver-too-old",)),
    ("CUDA libraries", ("cuda-mismatch",)),
    ("cuDNN", ("cudnn",)),
    ("PyTorch", ("torch-version",)),
    (
        "Transformer Engine install",
        ("install-build", "import-abi", "missing-lib", "multiple-installs"),
    ),
    ("flash-attn", ("flash-attn",)),
    ("Configuration and platform", ("config", "other")),
)


def render_check_text(report: Report, style: Style) -> str:
    """The report for a terminal or a log."""
    machine = report.machine
    lines = [
        f"te-doctor {report.te_doctor_version} check: {machine.gpus}; driver {machine.driver}; "
        f"torch {machine.torch}; Transformer Engine {machine.transformer_engine}",
        f"Diagnosed: {machine.python}",
        _headline(report, style),
        "",
    ]
    for area, categories in AREAS:
        lines += _area(area, [f for f in report.findings if f.category in categories], style)
    for probe in report.probe_errors:
        lines.append(f"{style.mark('undecided')} probe {probe.name} failed: {probe.detail}")
    lines += _smoke(report, style)
    lines += ["", "Execution paths (best first):"]
    lines += _paths(report, style)
    lines += ["", _verdict(report, style), *_recommendation(report, style)]
    return "\n".join(lines) + "\n"


def _headline(report: Report, style: Style) -> str:
    """FP8 ready or not, in one line, with the rules that decide it."""
    fp8 = [v for v in report.recommendation.ranking if "fp8" in v.families]
    ready = [v.id for v in fp8 if v.viable]
    if ready:
        return style.paint(f"FP8: possible here ({', '.join(ready)})", "ok")
    reasons = [r for v in fp8 for r in v.reasons]
    rules = sorted({r for r in reasons if r[:3].isupper() and r[3:].isdigit()})
    smoke = sorted({r.split(":")[0] for r in reasons if r.startswith("smoke check")})
    why = ", ".join(rules + smoke) or "; ".join(dict.fromkeys(reasons))
    return style.paint(f"FP8: not possible here ({why or 'facts missing'})", "error")


def _smoke(report: Report, style: Style) -> list[str]:
    """What the real GEMMs did, each against its FP32 reference (skipped ones with --verbose)."""
    smoke = report.smoke
    if not smoke.outcome.known:
        return ["", f"Smoke test: not run ({smoke.outcome.reason})"]
    lines = [
        "",
        f"Smoke test ({smoke.outcome.value}, {smoke.duration_ms / 1000:.1f} s, {smoke.python}):",
    ]
    if smoke.outcome.value != "ok" and smoke.stage.known:
        first = (smoke.error_text.value or "").strip().splitlines()[-1:] or [""]
        lines.append(f"  {style.mark('error')} stage {smoke.stage.value}: {first[0][:200]}")
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
        lines.append(f"  {style.mark(kind)} {where}: {check.status}, {measured}")
    return lines


def _recommendation(report: Report, style: Style) -> list[str]:
    """The last thing a user reads: what to use, how sure we are, and what to paste."""
    chosen = report.recommendation
    if not chosen.path:
        closest = next((v for v in chosen.ranking if v.id == chosen.closest), None)
        tail = f"; closest: {closest.id}, which {'; '.join(closest.reasons)}" if closest else ""
        return [style.paint(f"Use: nothing runs here yet{tail}", "error")]
    if chosen.verification == "verified":
        proof = f"Verified here: {chosen.evidence}."
    else:
        proof = "Predicted from the rules (the smoke test did not run or did not cover this path)."
    lines = [style.paint(f"Use: {chosen.path}: {chosen.title}. {proof}", "ok")]
    lines += [f"    {line}" for line in chosen.snippet.splitlines()]
    lines += [f"    export {name}={value}" for name, value in chosen.env.items()]
    return lines + _measured(report)


def _measured(report: Report) -> list[str]:
    """The last bench result for this machine, when there is one."""
    measured = report.measured
    if measured is None:
        return []
    when = f"te-doctor bench, {measured.created_at}, {measured.workload}"
    lines = [f"Measured here ({when}): {measured.verdict}"]
    if measured.speedup is not None:
        lines.append(
            f"    {measured.path}: {measured.speedup:.3g}x the speed of {measured.baseline} "
            f"({measured.component}); details: te-doctor bench --load {measured.file}"
        )
    return lines


def _paths(report: Report, style: Style) -> list[str]:
    """Viable paths, and why each better path is ruled out (every path with --verbose).

    Consecutive paths ruled out for the same reasons share one line.
    """
    names = {f.rule_id: f.name for f in report.findings}
    lines: list[str] = []
    group: list[str] = []
    group_why = ""
    better = True
    for verdict in report.recommendation.ranking:
        better = better and verdict.id != report.recommendation.path
        shown = not verdict.viable and (better or style.verbose)
        why = "; ".join(f"{r} {names[r]}" if r in names else r for r in verdict.reasons)
        if group and (not shown or why != group_why):
            lines.append(_ruled_out(group, group_why, style))
            group = []
        if verdict.viable:
            note = f" ({why})" if why else ""
            lines.append(f"  {style.mark('ok')} {verdict.id}: {verdict.title}{note}")
        elif shown:
            group.append(verdict.id)
            group_why = why or "facts missing (undecided)"
    if group:
        lines.append(_ruled_out(group, group_why, style))
    return lines


def _ruled_out(paths: list[str], why: str, style: Style) -> str:
    reason = why if why.startswith("needs ") else f"ruled out by {why}"
    return f"  {style.mark('error')} {', '.join(paths)}: {reason}"


def _area(area: str, findings: list[Finding], style: Style) -> list[str]:
    fired = [f for f in findings if f.outcome is Outcome.FIRED]
    undecided = [f for f in findings if f.outcome is Outcome.UNDECIDED]
    passed = [f for f in findings if f.outcome is Outcome.PASSED]
    worst = max((f.severity.rank for f in fired), default=-1)
    kind = {2: "error", 1: "warning", 0: "info"}.get(worst, "undecided" if undecided else "ok")
    counts = (
        f"{len(passed)} passed"
        + (f", {len(fired)} found" if fired else "")
        + (f", {len(undecided)} undecided" if undecided else "")
    )
    lines = [f"{style.mark(kind)} {area} ({counts})"]
    for finding in fired:
        mark = style.mark({2: "error", 1: "warning", 0: "info"}[finding.severity.rank])
        lines.append(f"    {mark} {finding.rule_id} {finding.name}: {finding.message}")
        if finding.fix:
            lines.append(f"        fix: {finding.fix}")
    if style.verbose:
        for finding in undecided:
            missing = "; ".join(f"{m.path}: {m.reason}" for m in finding.missing)
            head = f"    {style.mark('undecided')} {finding.rule_id} {finding.name}"
            lines.append(f"{head}: could not decide ({missing})")
        lines += [f"    {style.mark('ok')} {f.rule_id} {f.name}" for f in passed]
    return lines


def _verdict(report: Report, style: Style) -> str:
    if report.gate.passed:
        return style.paint(f"Verdict: PASS (--fail-on {report.options.fail_on})", "ok")
    return style.paint("Verdict: FAIL: " + "; ".join(report.gate.reasons), "error")
