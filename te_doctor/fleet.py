"""``te-doctor fleet``: many nodes' snapshots or check reports, aggregated.

Nodes of one fleet are mostly identical, so snapshots are grouped by a key of everything but
their per-node identity (hostname, GPU UUIDs, timestamps, ...) and the rules run once per
distinct configuration: 10,000 nodes cost little more than the handful of configurations
they share. The odd nodes out are the ones whose driver, CUDA, cuDNN, torch, TE or GPU count
differs from the majority.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from te_doctor import __version__
from te_doctor.errors import SnapshotError
from te_doctor.flatten import flatten
from te_doctor.paths import ExecutionPath
from te_doctor.report import GateOptions, Report, build_report
from te_doctor.rules import Rule
from te_doctor.snapshot_file import loads

#: What makes a node "odd" when it differs from the majority.
SUMMARY = ("driver", "CUDA (driver)", "GPUs", "GPU", "torch", "cuDNN", "Transformer Engine")


@dataclass(frozen=True, slots=True)
class Node:
    """One node's result."""

    name: str
    passed: bool
    recommended: str
    fired: tuple[str, ...]
    summary: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Fleet:
    """The fleet at a glance."""

    nodes: tuple[Node, ...]
    configurations: int
    unreadable: tuple[str, ...]
    by_verdict: Mapping[str, tuple[str, ...]]
    by_recommendation: Mapping[str, tuple[str, ...]]
    by_finding: Mapping[str, tuple[str, ...]]
    odd_nodes: Mapping[str, tuple[str, ...]]


def report_files(sources: Iterable[Path]) -> list[Path]:
    """The JSON files named, and those inside named directories."""
    files: list[Path] = []
    for source in sources:
        files += sorted(source.glob("*.json")) if source.is_dir() else [source]
    return files


def aggregate(
    files: Sequence[Path],
    rules: Sequence[Rule],
    paths: Sequence[ExecutionPath],
    options: GateOptions | None = None,
) -> Fleet:
    """Read every node's file and aggregate; unreadable files are listed, never fatal."""
    options = options or GateOptions()
    results: dict[str, Report] = {}
    nodes: list[Node] = []
    unreadable: list[str] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
            data = json.loads(text)
            node = _node(file, text, data, results, rules, paths, options)
        except (OSError, UnicodeDecodeError, ValueError, SnapshotError, KeyError, TypeError) as exc:
            unreadable.append(f"{file}: {str(exc).splitlines()[0][:200]}")
            continue
        nodes.append(node)
    return Fleet(
        nodes=tuple(nodes),
        configurations=len(results),
        unreadable=tuple(unreadable),
        by_verdict=_group(nodes, lambda n: ["pass" if n.passed else "fail"]),
        by_recommendation=_group(nodes, lambda n: [n.recommended or "none"]),
        by_finding=_group(nodes, lambda n: list(n.fired)),
        odd_nodes=_odd(nodes),
    )


def _node(
    file: Path,
    text: str,
    data: Any,
    results: dict[str, Report],
    rules: Sequence[Rule],
    paths: Sequence[ExecutionPath],
    options: GateOptions,
) -> Node:
    if isinstance(data, dict) and data.get("schema") == "te-doctor/report/v1":
        return Node(
            file.stem,
            bool(data["gate"]["passed"]),
            str(data["recommendation"]["path"]),
            tuple(f["rule_id"] for f in data["findings"] if f["outcome"] == "fired"),
            {},
        )
    key = _configuration(data)
    if key not in results:
        snapshot = loads(text, name=str(file))
        results[key] = build_report(snapshot, flatten(snapshot), rules, paths, options, __version__)
    report = results[key]
    host = data.get("host", {}).get("hostname", {})
    name = str(host.get("value") or file.stem)
    return Node(
        name,
        report.gate.passed,
        report.recommendation.path,
        tuple(f.rule_id for f in report.fired()),
        _summary(data),
    )


def _configuration(data: Any) -> str:
    """A hash of the snapshot without its per-node fields (identity, timing, evidence text)."""
    config = {key: value for key, value in data.items() if key not in ("meta", "probes")}
    config["probes"] = [(p.get("name"), p.get("state"), p.get("detail")) for p in data["probes"]]
    config["host"] = _without(data["host"], ("hostname", "user", "slurm_job_id"))
    config["driver"] = _without(data["driver"], ("visible_devices", "evidence"))
    config["gpus"] = [_without(gpu, ("uuid", "serial", "pci_bus_id")) for gpu in data["gpus"]]
    if isinstance(data.get("smoke"), dict):
        config["smoke"] = _without(data["smoke"], ("duration_ms",))
    return hashlib.sha256(json.dumps(config).encode()).hexdigest()


def _without(table: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in table.items() if key not in keys}


def _summary(data: Mapping[str, Any]) -> dict[str, str]:
    def value(section: str, name: str) -> str:
        fact = data.get(section, {}).get(name, {})
        return str(fact.get("value", "-")) if isinstance(fact, dict) else "-"

    gpus = [g for g in data.get("gpus", []) if g.get("visible")]
    return {
        "driver": value("driver", "version"),
        "CUDA (driver)": value("driver", "cuda_version"),
        "GPUs": str(len(gpus)),
        "GPU": str(gpus[0].get("name", {}).get("value", "-")) if gpus else "-",
        "torch": value("torch", "version"),
        "cuDNN": value("cudnn", "version"),
        "Transformer Engine": value("transformer_engine", "version"),
    }


def _group(nodes: Sequence[Node], keys: Any) -> dict[str, tuple[str, ...]]:
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
