"""`te-doctor fleet` output: the gate, verdicts, paths, findings, odd nodes; formatting only."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from te_doctor.fleet.aggregate import Fleet
from te_doctor.render.fleet_prometheus import fleet_prometheus
from te_doctor.snapshot.codec import to_data

FLEET_SCHEMA = "te-doctor/fleet/v1"
_NAMES = 8


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:_NAMES])
    return shown + (f" and {len(names) - _NAMES} more" if len(names) > _NAMES else "")


def _gate_line(fleet: Fleet) -> str:
    gate = fleet.gate
    needed = f"; --min-healthy {gate.min_healthy}" if gate.min_healthy is not None else ""
    word = "PASS" if gate.passed else "FAIL"
    return f"Gate: {word}: {gate.healthy} of {len(fleet.nodes)} node(s) healthy{needed}"


def _groups(title: str, groups: Mapping[str, tuple[str, ...]]) -> list[str]:
    lines = [f"{title}:"]
    lines += [f"  {key}: {len(names)} node(s): {_names(names)}" for key, names in groups.items()]
    return [*lines, "  (none)"] if not groups else lines


def fleet_text(fleet: Fleet) -> str:
    """For a terminal or a log: the gate first, then what to act on."""
    lines = [
        f"te-doctor fleet: {len(fleet.nodes)} node(s), {fleet.configurations} distinct "
        f"configuration(s), {len(fleet.skipped)} report(s) set aside, "
        f"{len(fleet.missing)} missing",
        _gate_line(fleet),
        *(f"  - {problem}" for problem in fleet.gate.problems),
        "",
        *_groups("Verdict", fleet.by_verdict),
        "",
        *_groups("Recommended path", fleet.by_recommendation),
        "",
        *_groups("Findings", fleet.by_finding),
        "",
        "Odd nodes out:",
    ]
    for label, entries in fleet.odd_nodes.items():
        lines += [f"  {label}: {entry}" for entry in entries[:_NAMES]]
        if len(entries) > _NAMES:
            lines.append(f"  {label}: ... and {len(entries) - _NAMES} more")
    if not fleet.odd_nodes:
        lines.append("  (none: every node agrees on driver, CUDA, GPUs, torch, cuDNN and TE)")
    problems = [n for n in fleet.nodes if n.state != "ok"]
    if problems:
        lines += ["", "Not probed:"]
        lines += [f"  {n.name}: {n.verdict}: {n.detail}" for n in problems]
    if fleet.missing:
        lines += ["", "Never reported:", *(f"  {entry}" for entry in fleet.missing)]
    if fleet.skipped or fleet.duplicates:
        lines += ["", "Set aside:"]
        lines += [f"  {s.file}: {s.reason}" for s in (*fleet.skipped, *fleet.duplicates)]
    return "\n".join(lines) + "\n"


def fleet_markdown(fleet: Fleet) -> str:
    """For a runbook or a ticket."""
    lines = [
        f"## te-doctor fleet: {len(fleet.nodes)} node(s)",
        "",
        f"**{_gate_line(fleet)}**",
        "",
        *(f"- {problem}" for problem in fleet.gate.problems),
        "",
        "| Verdict | Nodes |",
        "|---|---|",
    ]
    lines += [f"| {k} | {len(v)}: {_names(v)} |" for k, v in fleet.by_verdict.items()]
    lines += ["", "| Recommended path | Nodes |", "|---|---|"]
    lines += [f"| `{k}` | {len(v)}: {_names(v)} |" for k, v in fleet.by_recommendation.items()]
    lines += ["", "| Finding | Nodes |", "|---|---|"]
    lines += [f"| `{k}` | {len(v)}: {_names(v)} |" for k, v in fleet.by_finding.items()]
    lines += ["", "**Odd nodes out**", ""]
    lines += [
        f"- {label}: {entry}" for label, entries in fleet.odd_nodes.items() for entry in entries
    ] or ["- none: every node agrees on driver, CUDA, GPUs, torch, cuDNN and TE"]
    if fleet.missing:
        lines += ["", "**Never reported**", "", *(f"- {entry}" for entry in fleet.missing)]
    if fleet.skipped or fleet.duplicates:
        lines += ["", "**Set aside**", ""]
        lines += [f"- `{s.file}`: {s.reason}" for s in (*fleet.skipped, *fleet.duplicates)]
    return "\n".join(lines) + "\n"


def fleet_json(fleet: Fleet) -> str:
    """Everything, versioned."""
    data: dict[str, Any] = {"schema": FLEET_SCHEMA, **to_data(fleet)}
    return json.dumps(data, indent=2) + "\n"


FLEET_RENDERERS = {
    "text": fleet_text,
    "markdown": fleet_markdown,
    "json": fleet_json,
    "prometheus": fleet_prometheus,
}
