"""Assembling the snapshot: a probe that raises becomes a fact, and the run goes on."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from te_doctor.engine.flatten import flatten
from te_doctor.probes.collect import PROBES, Probe, collect_snapshot
from te_doctor.probes.context import ProbeContext
from te_doctor.snapshot.codec import to_data
from te_doctor.snapshot.facts import FactState
from te_doctor.snapshot.model import CudaFacts
from tests.fakes import FakeMachine

PROBES_BY_NAME = {p.name: p for p in PROBES}


def explode(ctx: ProbeContext) -> CudaFacts:
    raise RuntimeError("probe bug")


def test_a_crashing_probe_is_recorded_and_the_others_still_run(tmp_path: Path) -> None:
    probes = tuple(
        Probe(p.name, p.sections, explode) if p.name in ("cuda", "nvidia") else p for p in PROBES
    )
    snapshot = collect_snapshot(FakeMachine(tmp_path).context(), probes)
    states = {p.name: p.state for p in snapshot.probes}
    assert states["cuda"] == "error" and states["nvidia"] == "error"
    assert states["host"] == "ok" and states["packages"] == "ok"
    assert snapshot.cuda.toolkit_version.state is FactState.UNKNOWN
    assert snapshot.cuda.toolkit_version.reason == "probe cuda failed: RuntimeError: probe bug"
    assert snapshot.driver.version.state is FactState.UNKNOWN
    assert snapshot.gpus == ()
    assert snapshot.host.os_name.known


#: The flattened fact paths each snapshot section fills (``env.*`` and ``packages.*`` are
#: families, asked for by name).
SECTION_FACTS = {
    "host": ("host.",),
    "driver": ("driver.",),
    "gpus": ("gpu.", "gpus."),
    "cuda": ("cuda.",),
    "cudnn": ("cudnn.",),
    "packages": ("packages.",),
    "torch": ("torch.",),
    "transformer_engine": ("te.",),
    "environment": ("env.",),
    "build": ("build.",),
}


@pytest.mark.parametrize("crashing", [p.name for p in PROBES])
def test_any_probe_that_raises_becomes_an_error_status(tmp_path: Path, crashing: str) -> None:
    """Its status says so, its own facts carry the error, and every fact it would have filled
    is unknown (never a value, never "absent") for the rules."""
    probes = tuple(Probe(p.name, p.sections, explode) if p.name == crashing else p for p in PROBES)
    snapshot = collect_snapshot(FakeMachine(tmp_path).context(), probes)
    for status in snapshot.probes:
        assert status.state == ("error" if status.name == crashing else "ok"), status
    (failed,) = (p for p in PROBES if p.name == crashing)
    data = to_data(snapshot)
    message = f"probe {crashing} failed: RuntimeError: probe bug"
    for section in failed.sections:
        assert set(_reasons(data[section])) <= {message}
    facts = flatten(snapshot)
    prefixes = tuple(p for section in failed.sections for p in SECTION_FACTS[section])
    paths = [path for path in facts.values if path.startswith(prefixes)]
    paths += [p for p in ("packages.torch", "env.MAX_JOBS") if p.startswith(prefixes)]
    assert paths
    for path in paths:
        assert facts.get(path).state is FactState.UNKNOWN, (path, facts.get(path))


def _reasons(data: object) -> list[str]:
    """Every absent/unknown reason inside a section's JSON data."""
    if isinstance(data, dict):
        own = [data["unknown"]] if "unknown" in data else []
        return own + [r for value in data.values() for r in _reasons(value)]
    if isinstance(data, list):
        return [r for item in data for r in _reasons(item)]
    return []


def test_every_probe_reports_a_status_and_duration(tmp_path: Path) -> None:
    snapshot = collect_snapshot(FakeMachine(tmp_path).context())
    assert [p.name for p in snapshot.probes] == [p.name for p in PROBES]
    assert all(p.state == "ok" and p.duration_ms >= 0 for p in snapshot.probes)


def test_every_snapshot_section_is_filled_by_exactly_one_probe() -> None:
    from te_doctor.snapshot.codec import field_types
    from te_doctor.snapshot.model import Snapshot

    sections = [s for p in PROBES for s in p.sections]
    assert sorted(sections) == sorted(
        set(field_types(Snapshot)) - {"schema_version", "meta", "probes", "smoke"}
    )


def test_early_probes_run_alongside_the_others_and_keep_their_place(tmp_path: Path) -> None:
    """Early probes start before the rest, together: here one waits for a signal that a later
    one gives, which only works when both run at the same time."""
    signal = threading.Event()

    def waits(ctx: ProbeContext) -> Any:
        if not signal.wait(timeout=10):
            raise RuntimeError("ran alone: the signal never came")
        return PROBES_BY_NAME["cuda"].run(ctx)

    def signals(ctx: ProbeContext) -> Any:
        signal.set()
        return PROBES_BY_NAME["build"].run(ctx)

    probes = tuple(
        Probe(p.name, p.sections, waits, early=True)
        if p.name == "cuda"
        else Probe(p.name, p.sections, signals, early=True)
        if p.name == "build"
        else p
        for p in PROBES
    )
    snapshot = collect_snapshot(FakeMachine(tmp_path).context(), probes)
    assert [s.name for s in snapshot.probes] == [p.name for p in PROBES]
    assert {s.name: s.state for s in snapshot.probes}["cuda"] == "ok"
    assert snapshot.build == collect_snapshot(FakeMachine(tmp_path).context()).build


def test_an_early_probe_that_raises_is_an_error_status_like_any_other(tmp_path: Path) -> None:
    probes = tuple(
        Probe(p.name, p.sections, explode, early=True) if p.name == "build" else p for p in PROBES
    )
    snapshot = collect_snapshot(FakeMachine(tmp_path).context(), probes)
    status = {s.name: s for s in snapshot.probes}["build"]
    assert (status.state, status.detail) == ("error", "RuntimeError: probe bug")
    assert snapshot.build.cxx.reason == "probe build failed: RuntimeError: probe bug"


def test_the_nvidia_and_build_probes_start_early() -> None:
    """They mostly wait (NVML's start-up, nvidia-smi, compilers' --version)."""
    assert {p.name for p in PROBES if p.early} == {"nvidia", "build"}
