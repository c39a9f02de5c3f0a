"""Reading a directory of node reports, whatever state the files are in.

Each file becomes an ``Entry`` (a node report, a bare snapshot or a check report), a
``RunManifest`` (written by ``te-doctor fleet run``: how many tasks were launched), or a
``Skipped`` line saying why it cannot be used. Nothing here raises for a bad file.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from te_doctor.errors import SnapshotError
from te_doctor.fleet.configuration import configuration_key, node_summary
from te_doctor.fleet.node_report import NODE_REPORT_SCHEMA
from te_doctor.snapshot.file import parse_json

RUN_MANIFEST_SCHEMA = "te-doctor/fleet-run/v1"
#: Check reports this te-doctor reads: v2 added ``recommendation.closest``; v3 added areas, the
#: headline and the start here, and "not-applicable" findings; fleet reads only what all share
#: (the gate, the recommended path, the fired findings).
CHECK_REPORT_SCHEMAS = ("te-doctor/report/v1", "te-doctor/report/v2", "te-doctor/report/v3")
NODE_STATES = ("ok", "timed-out", "failed")
MESSAGE_LIMIT = 200
#: Directories this large are read by several processes (JSON parsing dominates).
PARALLEL_FROM = 2000
MAX_WORKERS = 8
CHUNKS_PER_WORKER = 4


@dataclass(frozen=True, slots=True)
class Entry:
    """One usable report: who wrote it, with which te-doctor, and what it holds."""

    file: str
    kind: str
    node: str
    job_id: str
    task_id: str
    created_at: str
    version: str
    state: str
    detail: str
    configuration: str
    summary: Mapping[str, str]
    snapshot: Mapping[str, Any] | None
    check: CheckResult | None


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What a node's own ``te-doctor check --format json`` concluded."""

    passed: bool
    recommended: str
    fired: tuple[str, ...]
    fp8_viable: bool = False
    severities: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunManifest:
    """What ``fleet run`` launched: the tasks that should each write a report."""

    file: str
    launcher: str
    job_name: str
    expected_tasks: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that was not used, and why."""

    file: str
    reason: str


def report_files(sources: Iterable[Path]) -> list[Path]:
    """The JSON files named, and those directly inside named directories, sorted."""
    files: list[Path] = []
    for source in sources:
        files += sorted(source.glob("*.json")) if source.is_dir() else [source]
    return files


def read_all(
    files: Sequence[Path], workers: int | None = None
) -> list[Entry | RunManifest | Skipped]:
    """Every file read, in order; large directories by several processes.

    A snapshot is kept only on the first entry of its configuration (per process): 10,000
    nodes share a handful, and holding every parsed snapshot would take gigabytes.
    """
    if workers is None:
        workers = min(os.cpu_count() or 1, MAX_WORKERS) if len(files) >= PARALLEL_FROM else 1
    if workers <= 1:
        return _read_chunk(files)
    size = -(-len(files) // (workers * CHUNKS_PER_WORKER))
    chunks = [files[start : start + size] for start in range(0, len(files), size)]
    try:
        with ProcessPoolExecutor(workers) as pool:
            return [item for chunk in pool.map(_read_chunk, chunks) for item in chunk]
    except (OSError, BrokenProcessPool):  # no processes here (a sandbox): read them in turn
        return _read_chunk(files)


def _read_chunk(files: Sequence[Path]) -> list[Entry | RunManifest | Skipped]:
    seen: set[str] = set()
    items: list[Entry | RunManifest | Skipped] = []
    for file in files:
        item = read(file)
        if isinstance(item, Entry) and item.snapshot is not None:
            if item.configuration in seen:
                item = replace(item, snapshot=None)
            seen.add(item.configuration)
        items.append(item)
    return items


def read(file: Path) -> Entry | RunManifest | Skipped:
    """Classify one file; every problem becomes a ``Skipped`` with one line of reason."""
    try:
        data = parse_json(file.read_text(encoding="utf-8"), name=str(file))
        return _classify(file, data)
    except OSError as exc:
        return Skipped(str(file), f"unreadable: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        return Skipped(str(file), f"not UTF-8 text: {exc.reason} at byte {exc.start}")
    except SnapshotError as exc:
        return Skipped(str(file), _line(str(exc).removeprefix(f"{file}: ")))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return Skipped(str(file), _line(f"not a te-doctor report ({type(exc).__name__}: {exc})"))


def _line(text: str) -> str:
    return (text.splitlines() or [""])[0][:MESSAGE_LIMIT]


def _classify(file: Path, data: Any) -> Entry | RunManifest | Skipped:
    if not isinstance(data, dict):
        return Skipped(str(file), f"expected a JSON object, got {type(data).__name__}")
    schema = data.get("schema")
    if schema == RUN_MANIFEST_SCHEMA:
        return RunManifest(
            str(file), str(data["launcher"]), str(data["job_name"]), int(data["expected_tasks"])
        )
    if schema == NODE_REPORT_SCHEMA:
        return _node_report(file, data)
    if schema in CHECK_REPORT_SCHEMAS:
        return _check_report(file, data)
    if isinstance(schema, str) and schema.startswith("te-doctor/"):
        return Skipped(str(file), f"schema {schema!r} is not one this te-doctor reads")
    if "schema_version" in data:
        return _snapshot(file, data)
    return Skipped(str(file), "not a te-doctor node report, snapshot or check report")


def _node_report(file: Path, data: Mapping[str, Any]) -> Entry | Skipped:
    state = str(data["status"])
    if state not in NODE_STATES:
        return Skipped(str(file), f"status: {state!r} is not one of {', '.join(NODE_STATES)}")
    snapshot = data["snapshot"]
    if state == "ok" and not isinstance(snapshot, dict):
        return Skipped(str(file), "status is ok but the report holds no snapshot")
    return Entry(
        file=str(file),
        kind="node-report",
        node=str(data["node"]),
        job_id=str(data["job_id"]),
        task_id=str(data["task_id"]),
        created_at=str(data["created_at"]),
        version=str(data["te_doctor_version"]),
        state=state,
        detail=str(data["detail"]),
        configuration=configuration_key(snapshot) if state == "ok" else "",
        summary=node_summary(snapshot) if state == "ok" else {},
        snapshot=snapshot if state == "ok" else None,
        check=None,
    )


def _snapshot(file: Path, data: Mapping[str, Any]) -> Entry:
    meta = data.get("meta", {})
    host = data.get("host", {}).get("hostname", {})
    return Entry(
        file=str(file),
        kind="snapshot",
        node=str(host.get("value") or file.stem),
        job_id=str(data.get("host", {}).get("slurm_job_id", {}).get("value") or ""),
        task_id="",
        created_at=str(meta.get("created_at", "")),
        version=str(meta.get("te_doctor_version", "")),
        state="ok",
        detail="",
        configuration=configuration_key(data),
        summary=node_summary(data),
        snapshot=data,
        check=None,
    )


def _check_report(file: Path, data: Mapping[str, Any]) -> Entry:
    fired = [f for f in data["findings"] if f["outcome"] == "fired"]
    check = CheckResult(
        passed=bool(data["gate"]["passed"]),
        recommended=str(data["recommendation"]["path"]),
        fired=tuple(str(f["rule_id"]) for f in fired),
        fp8_viable=any(
            v["viable"] and "fp8" in v["families"] for v in data["recommendation"]["ranking"]
        ),
        severities=dict(Counter(str(f["severity"]) for f in fired)),
    )
    return Entry(
        file=str(file),
        kind="check-report",
        node=file.stem,
        job_id="",
        task_id="",
        created_at=str(data["machine"].get("recorded_at", "")),
        version=str(data["te_doctor_version"]),
        state="ok",
        detail="",
        configuration="",
        summary={},
        snapshot=None,
        check=check,
    )
