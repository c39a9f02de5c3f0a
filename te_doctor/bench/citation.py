"""What ``te-doctor check`` says about a bench result measured on this machine."""

from __future__ import annotations

from pathlib import Path

from te_doctor.bench.analysis import analyse
from te_doctor.bench.peaks import load_peaks
from te_doctor.bench.store import bench_machine, latest, machine_key
from te_doctor.bench.workload import COMPONENTS
from te_doctor.check.report import BenchCitation
from te_doctor.snapshot.model import Snapshot


def cite(snapshot: Snapshot, path: str, store: Path | None = None) -> BenchCitation | None:
    """The citation for ``path`` from the latest result saved for this machine, if any."""
    found = latest(machine_key(bench_machine(snapshot)), store)
    if found is None:
        return None
    run, file = found
    analysis = analyse(run, load_peaks())
    measured = [r for r in analysis.results if r.path == path and r.speedup is not None]
    best = max(measured, key=lambda r: COMPONENTS.index(r.component), default=None)
    return BenchCitation(
        file=str(file),
        created_at=run.created_at,
        workload=run.workload.name,
        verdict=analysis.verdict.text,
        path=path if best else "",
        component=best.component if best else "",
        baseline=best.baseline if best else "",
        speedup=best.speedup if best else None,
    )
