"""The doctor-style report: one line per area, then each finding with its fix, then paths."""

from __future__ import annotations

from te_doctor.engine import Finding, Outcome
from te_doctor.render.style import Style
from te_doctor.report import Report

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
        "",
    ]
    for area, categories in AREAS:
        lines += _area(area, [f for f in report.findings if f.category in categories], style)
    for probe in report.probe_errors:
        lines.append(f"{style.mark('undecided')} probe {probe.name} failed: {probe.detail}")
    lines += ["", "Execution paths (best first):"]
    lines += _paths(report, style)
    best = next((v for v in report.paths if v.id == report.best_path), None)
    lines += ["", f"Best path now: {best.id} ({best.title})" if best else "Best path now: none"]
    lines.append(_verdict(report, style))
    return "\n".join(lines) + "\n"


def _paths(report: Report, style: Style) -> list[str]:
    """Viable paths, and why each better path is ruled out (every path with --verbose)."""
    lines = []
    better = True
    for verdict in report.paths:
        better = better and verdict.id != report.best_path
        if verdict.viable:
            lines.append(f"  {style.mark('ok')} {verdict.id}: {verdict.title}")
        elif better or style.verbose:
            why = "; ".join(verdict.reasons) or "undecided: facts missing"
            lines.append(f"  {style.mark('error')} {verdict.id}: ruled out: {why}")
    return lines


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
