"""``te-doctor diff`` as text or JSON; formatting only."""

from __future__ import annotations

import json
from typing import Any

from te_doctor.snapshot.codec import to_data
from te_doctor.triage.diff import Comparison

DIFF_SCHEMA = "te-doctor/diff/v1"


def diff_text(comparison: Comparison) -> str:
    """For a terminal: likely causes first, then the findings, then every difference."""
    left, right = comparison.left_name, comparison.right_name
    lines = [
        f"te-doctor diff: {left} vs {right}: {len(comparison.differences)} rule-relevant "
        f"difference(s), {len(comparison.one_sided)} finding(s) on one side only",
        "",
    ]
    values = {d.path: d for d in comparison.differences}
    if comparison.likely_causes:
        lines.append("Most likely explanation:")
        for path, count in comparison.likely_causes:
            d = values[path]
            lines.append(
                f"  {path}: {d.left} ({left}) vs {d.right} ({right}); explains {count} finding(s)"
            )
        lines.append("")
    for entry in comparison.one_sided:
        why = ", ".join(entry.explained_by) or "no single differing fact"
        lines.append(
            f"only on {entry.side}: [{entry.finding.severity.value}] {entry.finding.rule_id} "
            f"{entry.finding.name}: {entry.finding.message} (because of: {why})"
        )
    lines += ["", "Differences among the facts the rules read:"]
    width = max((len(d.path) for d in comparison.differences), default=10)
    lines += [f"  {d.path:<{width}}  {d.left}  |  {d.right}" for d in comparison.differences]
    return "\n".join(lines) + "\n"


def diff_json(comparison: Comparison) -> str:
    """Everything, versioned."""
    data: dict[str, Any] = {"schema": DIFF_SCHEMA, **to_data(comparison)}
    return json.dumps(data, indent=2) + "\n"


DIFF_RENDERERS = {"text": diff_text, "json": diff_json}
