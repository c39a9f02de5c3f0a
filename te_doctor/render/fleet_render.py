"""`te-doctor fleet` output: verdicts, paths, findings and odd nodes; formatting only."""

from __future__ import annotations

import json
from typing import Any

from te_doctor.codec import to_data
from te_doctor.fleet import Fleet

FLEET_SCHEMA = "te-doctor/fleet/v1"
_NAMES = 8


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:_NAMES])
    return shown + (f" and {len(names) - _NAMES} more" if len(names) > _NAMES else "")


def fleet_text(fleet: Fleet) -> str:
    """For a terminal or a log."""
    lines = [
        f"te-doctor fleet: {len(fleet.nodes)} node(s), {fleet.configurations} distinct "
        f"configuration(s), {len(fleet.unreadable)} unreadable",
        "",
    ]
    for title, groups in (
        ("Verdict", fleet.by_verdict),
        ("Recommended path", fleet.by_recommendation),
        ("Findings", fleet.by_finding),
    ):
        lines.append(f"{title}:")
        lines += [
            f"  {key}: {len(names)} node(s): {_names(names)}" for key, names in groups.items()
        ]
        if not groups:
            lines.append("  (none)")
        lines.append("")
    lines.append("Odd nodes out:")
    for label, entries in fleet.odd_nodes.items():
        lines += [f"  {label}: {entry}" for entry in entries[:_NAMES]]
        if len(entries) > _NAMES:
            lines.append(f"  {label}: ... and {len(entries) - _NAMES} more")
    if not fleet.odd_nodes:
        lines.append("  (none: every node agrees on driver, CUDA, GPUs, torch, cuDNN and TE)")
    lines += [f"Unreadable: {entry}" for entry in fleet.unreadable]
    return "\n".join(lines) + "\n"


def fleet_markdown(fleet: Fleet) -> str:
    """For a runbook or a ticket."""
    lines = [
        f"## te-doctor fleet: {len(fleet.nodes)} nodes",
        "",
        "| Verdict | Nodes |",
        "|---|---|",
    ]
    lines += [f"| {k} | {len(v)}: {_names(v)} |" for k, v in fleet.by_verdict.items()]
    lines += ["", "| Finding | Nodes |", "|---|---|"]
    lines += [f"| `{k}` | {len(v)}: {_names(v)} |" for k, v in fleet.by_finding.items()]
    lines += ["", "**Odd nodes out**", ""]
    lines += [
        f"- {label}: {entry}" for label, entries in fleet.odd_nodes.items() for entry in entries
    ]
    return "\n".join(lines) + "\n"


def fleet_json(fleet: Fleet) -> str:
    """Everything, versioned."""
    data: dict[str, Any] = {"schema": FLEET_SCHEMA, **to_data(fleet)}
    return json.dumps(data, indent=2) + "\n"


FLEET_RENDERERS = {"text": fleet_text, "markdown": fleet_markdown, "json": fleet_json}
