"""``te-doctor fleet``: many nodes' reports, aggregated into something to act on and gate with.

Nodes of one fleet are mostly identical, so snapshots are grouped by a key of everything but
their per-node identity (hostname, GPU UUIDs, timestamps, ...) and the rules run once per
distinct configuration: 10,000 nodes cost little more than the handful of configurations
they share. The odd nodes out are the ones whose driver, CUDA, cuDNN, torch, TE or GPU count
differs from the majority. Duplicated reports (the same node and task twice) keep the newest;
reports made by another te-doctor version than the majority's are set aside, like unreadable
ones; tasks that were launched but never reported are named.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from te_doctor import __version__
from te_doctor.check.report import GateOptions, Report, build_report
from te_doctor.engine.flatten import flatten
from te_doctor.engine.paths import ExecutionPath
from te_doctor.engine.rule_model import Rule
from te_doctor.fleet.configuration import SUMMARY
from te_doctor.fleet.gate import FleetGate, FleetOptions, judge, missing_tasks
from te_doctor.fleet.node import Node
from te_doctor.fleet.reading import CheckResult, Entry, RunManifest, Skipped, read_all
from te_doctor.snapshot.file import from_json_data


@dataclass(frozen=True, slots=True)
class Fleet:
    """The fleet at a glance."""

    nodes: tuple[Node, ...]
    configurations: int
    te_doctor_version: str
    skipped: tuple[Skipped, ...]
    duplicates: tuple[Skipped, ...]
    missing: tuple[str, ...]
    by_verdict: Mapping[str, tuple[str, ...]]
    by_recommendation: Mapping[str, tuple[str, ...]]
    by_finding: Mapping[str, tuple[str, ...]]
    odd_nodes: Mapping[str, tuple[str, ...]]
    gate: FleetGate


def aggregate(
    files: Iterable[Path],
    rules: Sequence[Rule],
    paths: Sequence[ExecutionPath],
    options: FleetOptions | None = None,
) -> Fleet:
    """Read every file, set aside what cannot be used, evaluate the rest, judge the fleet."""
    options = options or FleetOptions()
    entries: list[Entry] = []
    manifests: list[RunManifest] = []
    skipped: list[Skipped] = []
    for item in read_all(list(files)):
        if isinstance(item, Entry):
            entries.append(item)
        elif isinstance(item, RunManifest):
            manifests.append(item)
        else:
            skipped.append(item)
    snapshots: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        if entry.snapshot is not None:
            snapshots.setdefault(entry.configuration, entry.snapshot)
    entries, duplicates = _newest_per_task(entries)
    entries, version, mixed = _majority_version(entries)
    skipped += mixed
    results: dict[str, Report] = {}
    nodes = _named([_node(e, snapshots, results, rules, paths, options.gate) for e in entries])
    missing = missing_tasks(manifests, entries, options.expect_nodes)
    return Fleet(
        nodes=tuple(nodes),
        configurations=len(results),
        te_doctor_version=version,
        skipped=tuple(skipped),
        duplicates=tuple(duplicates),
        missing=missing,
        by_verdict=_group(nodes, lambda n: [n.verdict]),
        by_recommendation=_group(
            nodes, lambda n: [n.recommended or "none"] if n.state == "ok" else []
        ),
        by_finding=_group(nodes, lambda n: list(n.fired)),
        odd_nodes=_odd(nodes),
        gate=judge(nodes, skipped, missing, options),
    )


def _newest_per_task(entries: Sequence[Entry]) -> tuple[list[Entry], list[Skipped]]:
    """One report per (node, task): the newest; the others are duplicates."""
    newest: dict[tuple[str, str], Entry] = {}
    duplicates: list[Skipped] = []
    for entry in sorted(entries, key=lambda e: (e.created_at, e.file), reverse=True):
        key = (entry.node, entry.task_id)
        if key in newest:
            kept = newest[key].file
            duplicates.append(Skipped(entry.file, f"an older report of the same node: {kept}"))
        else:
            newest[key] = entry
    order = {id(e): i for i, e in enumerate(entries)}
    return sorted(newest.values(), key=lambda e: order[id(e)]), duplicates


def _majority_version(entries: Sequence[Entry]) -> tuple[list[Entry], str, list[Skipped]]:
    """Reports by the te-doctor version most nodes ran; the others are set aside."""
    counts = Counter(e.version for e in entries)
    if len(counts) < 2:
        return list(entries), next(iter(counts), ""), []
    majority = counts.most_common(1)[0][0]
    mixed = [
        Skipped(e.file, f"made by te-doctor {e.version}, most by {majority}: rerun it")
        for e in entries
        if e.version != majority
    ]
    return [e for e in entries if e.version == majority], majority, mixed


def _node(
    entry: Entry,
    snapshots: Mapping[str, Mapping[str, Any]],
    results: dict[str, Report],
    rules: Sequence[Rule],
    paths: Sequence[ExecutionPath],
    options: GateOptions,
) -> Node:
    def node(check: CheckResult, summary: Mapping[str, str]) -> Node:
        return Node(
            entry.node,
            entry.file,
            entry.job_id,
            entry.task_id,
            entry.state,
            entry.detail,
            check.passed,
            check.recommended,
            check.fired,
            summary,
            check.fp8_viable,
            check.severities,
        )

    if entry.check is not None:
        return node(entry.check, {})
    if entry.state != "ok":
        return node(CheckResult(False, "", ()), {})
    key = entry.configuration
    if key not in results:
        snapshot = from_json_data(dict(snapshots[key]), name=entry.file)
        results[key] = build_report(snapshot, flatten(snapshot), rules, paths, options, __version__)
    report = results[key]
    fired = report.fired()
    result = CheckResult(
        passed=report.gate.passed,
        recommended=report.recommendation.path,
        fired=tuple(f.rule_id for f in fired),
        fp8_viable=any(v.viable and "fp8" in v.families for v in report.recommendation.ranking),
        severities=dict(Counter(f.severity.value for f in fired)),
    )
    return node(result, entry.summary)


def _named(nodes: Sequence[Node]) -> list[Node]:
    """Node names as shown: ``name[task]`` where several tasks ran on one node."""
    counts = Counter(n.name for n in nodes)
    return [
        replace(n, name=f"{n.name}[{n.task_id}]") if counts[n.name] > 1 and n.task_id else n
        for n in nodes
    ]


def _group(nodes: Sequence[Node], keys: Callable[[Node], list[str]]) -> dict[str, tuple[str, ...]]:
    groups: dict[str, list[str]] = {}
    for node in nodes:
        for key in keys(node):
            groups.setdefault(key, []).append(node.name)
    return {k: tuple(v) for k, v in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))}


def _odd(nodes: Sequence[Node]) -> dict[str, tuple[str, ...]]:
    """For each summary field: the nodes that differ from the majority value."""
    odd: dict[str, tuple[str, ...]] = {}
    for label in SUMMARY:
        values = Counter(n.summary[label] for n in nodes if label in n.summary)
        if len(values) < 2:
            continue
        majority = values.most_common(1)[0][0]
        odd[label] = tuple(
            f"{n.name} ({n.summary[label]}; most have {majority})"
            for n in nodes
            if n.summary.get(label, majority) != majority
        )
    return odd
