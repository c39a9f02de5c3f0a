"""The fleet's gate: may the reservation go ahead, and every reason it may not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from te_doctor.check.report import GateOptions
from te_doctor.fleet.node import Node
from te_doctor.fleet.reading import Entry, RunManifest, Skipped

NAMES_IN_REASON = 5


@dataclass(frozen=True, slots=True)
class FleetOptions:
    """The per-node gate, and what the fleet as a whole must show."""

    gate: GateOptions = field(default_factory=GateOptions)
    min_healthy: int | None = None
    expect_nodes: int | None = None


@dataclass(frozen=True, slots=True)
class FleetGate:
    """Whether the reservation may go ahead: healthy nodes and every reason it may not."""

    passed: bool
    healthy: int
    min_healthy: int | None
    problems: tuple[str, ...]


def missing_tasks(
    manifests: Sequence[RunManifest], entries: Sequence[Entry], expect_nodes: int | None
) -> tuple[str, ...]:
    """Launched tasks without a report, and nodes short of ``--expect-nodes``."""
    seen = {e.task_id for e in entries}
    missing = [
        f"task {task} of {m.job_name} ({m.launcher})"
        for m in manifests
        for task in range(m.expected_tasks)
        if str(task) not in seen
    ]
    if expect_nodes is not None and len(entries) < expect_nodes:
        missing.append(f"{expect_nodes - len(entries)} of --expect-nodes {expect_nodes} nodes")
    return tuple(missing)


def judge(
    nodes: Sequence[Node],
    skipped: Sequence[Skipped],
    missing: Sequence[str],
    options: FleetOptions,
) -> FleetGate:
    """Without ``--min-healthy`` every node must pass; with it, that many must."""
    healthy = sum(1 for n in nodes if n.passed)
    problems = []
    for verdict, what in (
        ("fail", "failed the check"),
        ("timed out", "timed out"),
        ("probe failed", "could not be probed"),
    ):
        names = [n.name for n in nodes if n.verdict == verdict]
        if names:
            problems.append(f"{len(names)} node(s) {what}: {_shorten(names)}")
    if missing:
        problems.append(f"never reported: {_shorten(list(missing))}")
    if skipped:
        problems.append(
            f"{len(skipped)} report(s) could not be used: "
            f"{_shorten([Path(s.file).name for s in skipped])}"
        )
    if options.min_healthy is None:
        passed = not problems and bool(nodes)
        if not nodes:
            problems.append("no node reported")
    else:
        passed = healthy >= options.min_healthy
        if not passed:
            problems.insert(
                0, f"{healthy} healthy node(s), fewer than --min-healthy {options.min_healthy}"
            )
    return FleetGate(passed, healthy, options.min_healthy, tuple(problems))


def _shorten(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMES_IN_REASON])
    return shown + (
        f" and {len(names) - NAMES_IN_REASON} more" if len(names) > NAMES_IN_REASON else ""
    )
