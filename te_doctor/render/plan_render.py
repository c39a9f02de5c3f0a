"""``te-doctor plan`` as numbered steps (text or Markdown) or JSON; formatting only."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from te_doctor.engine.evaluate import Finding, Outcome
from te_doctor.engine.rule_model import Severity
from te_doctor.plan.pip_predict import PipPrediction
from te_doctor.plan.planner import Plan
from te_doctor.render.wrap import flow
from te_doctor.snapshot.codec import to_data

PLAN_SCHEMA = "te-doctor/plan/v1"


def plan_text(plan: Plan, pip: PipPrediction | None, not_asked: str = "--no-pip") -> str:
    """The plan for a terminal: blockers as step 0, the numbered steps, then the checks.

    ``not_asked`` says why pip was not asked when ``pip`` is None.
    """
    verdict = "a sound plan" if plan.exit_code == 0 else f"{len(plan.blockers)} blocker(s) first"
    lines = [
        f"te-doctor plan: Transformer Engine {plan.te_version} for {plan.framework} "
        f"({plan.core_package}): {verdict}",
        "",
    ]
    if plan.blockers:
        lines.append("0. Fix these first (the steps below fail until they are fixed):")
        for finding in plan.blockers:
            lines.append(f"   - {finding.message.rstrip('. ')} ({finding.rule_id})")
            lines.append(f"     fix: {flow(finding.fix)}")
    for number, step in enumerate(plan.steps, 1):
        lines += [f"{number}. {step.title}", f"   {step.command}"]
    lines += ["", _pip_line(pip, not_asked)]
    if plan.version_reasons:
        lines += ["", "Newer or requested versions that do not fit:"]
        lines += [f"  - {reason}" for reason in plan.version_reasons[:8]]
    lines += _section(
        "Warnings and notes",
        [f for f in plan.findings if f.fired and f.severity is not Severity.ERROR],
    )
    passed = sum(f.outcome is Outcome.PASSED for f in plan.findings)
    undecided = [f.rule_id for f in plan.findings if f.outcome is Outcome.UNDECIDED]
    lines += ["", f"Checks passed: {passed} planning rules (the JSON output lists them)."]
    if undecided:
        lines.append(f"Could not decide (facts missing): {', '.join(undecided)}")
    if plan.blockers and plan.alternative:
        lines += ["", f"No sound pip route yet? Alternative: {plan.alternative}"]
    return "\n".join(lines) + "\n"


def plan_markdown(plan: Plan, pip: PipPrediction | None, not_asked: str = "--no-pip") -> str:
    """The plan as Markdown (a runbook or a bug report): blockers first, then the steps."""
    lines = [
        f"## te-doctor plan: TE {plan.te_version} for {plan.framework} ({plan.core_package})",
        "",
    ]
    if plan.blockers:
        lines += ["0. Fix these first:", ""]
        lines += [
            f"   - **`{f.rule_id}`** {flow(f.message)} Fix: {flow(f.fix)}" for f in plan.blockers
        ]
    for number, step in enumerate(plan.steps, 1):
        lines += [f"{number}. {step.title}", "", "   ```bash", f"   {step.command}", "   ```"]
    lines += ["", f"- {_pip_line(pip, not_asked)}"]
    lines += [
        f"- {f.severity.value} `{f.rule_id}` {f.message}"
        for f in plan.findings
        if f.fired and f.severity is not Severity.ERROR
    ]
    if plan.blockers and plan.alternative:
        lines.append(f"- Alternative: {plan.alternative}")
    return "\n".join(lines) + "\n"


def plan_json(plan: Plan, pip: PipPrediction | None, not_asked: str = "--no-pip") -> str:
    """The plan as versioned JSON, every finding included."""
    data: dict[str, Any] = {"schema": PLAN_SCHEMA, **to_data(plan)}
    data["blockers"] = [f.rule_id for f in plan.blockers]
    data["exit_code"] = plan.exit_code
    data["pip"] = to_data(pip) if pip is not None else None
    return json.dumps(data, indent=2) + "\n"


def _section(title: str, findings: list[Finding]) -> list[str]:
    if not findings:
        return []
    lines = ["", f"{title}:"]
    for finding in findings:
        lines.append(f"  - {finding.rule_id} {finding.name}: {finding.message}")
        if finding.fix:
            lines.append(f"    fix: {flow(finding.fix)}")
    return lines


def _pip_line(pip: PipPrediction | None, not_asked: str) -> str:
    if pip is None:
        return f"pip was not asked ({not_asked}): the plan is predicted from te-doctor's rule data."
    if not pip.reachable:
        return f"pip could not be asked ({pip.problem}): the plan is predicted from rule data."
    if pip.problem:
        return f"pip's own resolver: {pip.problem}"
    return (
        "pip's own resolver (dry run) would take: "
        + "; ".join(pip.resolved)
        + "; the framework extension is an sdist, compiled here."
    )


PLAN_RENDERERS: dict[str, Callable[[Plan, PipPrediction | None, str], str]] = {
    "text": plan_text,
    "markdown": plan_markdown,
    "json": plan_json,
}
