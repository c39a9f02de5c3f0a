"""``te-doctor bench`` end to end: choose the paths, run one child each, record the run."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence

from te_doctor import __version__
from te_doctor.bench.choose import PlannedPath, choose_paths
from te_doctor.bench.record import BENCH_SCHEMA, BenchRun, BenchSettings
from te_doctor.bench.runner import run_paths
from te_doctor.bench.store import bench_machine, machine_key
from te_doctor.bench.workload import Workload
from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.engine.flatten import flatten
from te_doctor.snapshot.model import Snapshot


def plan_paths(
    snapshot: Snapshot, workload: Workload, requested: Sequence[str] = ()
) -> tuple[PlannedPath, ...]:
    """The recommender's ranking for this machine, turned into the paths to benchmark."""
    report = run_check(snapshot, GateOptions(fail_on="never"))
    return choose_paths(report.recommendation.ranking, flatten(snapshot), workload, requested)


def run_bench(
    snapshot: Snapshot,
    python: str,
    workload: Workload,
    settings: BenchSettings,
    planned: Sequence[PlannedPath],
    *,
    progress: Callable[[str], None] = lambda line: None,
    env: Mapping[str, str] | None = None,
) -> BenchRun:
    """Benchmark the ``planned`` paths under ``python`` and record the run."""
    paths = run_paths(python, planned, workload, settings, progress=progress, env=env)
    machine = bench_machine(snapshot)
    return BenchRun(
        schema=BENCH_SCHEMA,
        te_doctor_version=__version__,
        created_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        machine_key=machine_key(machine),
        machine=machine,
        workload=workload,
        settings=settings,
        paths=paths,
    )
