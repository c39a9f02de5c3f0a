"""take_snapshot (check/snapshot_source.py): the smoke child first, the probes meanwhile."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import te_doctor.probes.collect
import te_doctor.smoke.runner
from te_doctor.check.snapshot_source import take_snapshot
from te_doctor.snapshot.absent import not_run
from te_doctor.snapshot.file import load
from te_doctor.snapshot.model import SmokeFacts, Snapshot

A100 = Path(__file__).parent / "fixtures" / "a100.json"


def test_the_probes_run_while_the_smoke_test_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    smoke_started = threading.Event()
    events: list[str] = []

    def slow_smoke(python: str, *, timeout_s: float, progress: object = None) -> SmokeFacts:
        smoke_started.set()
        time.sleep(0.3)
        events.append("smoke done")
        return not_run("a stand-in smoke result", python)

    def probe(context: Any) -> Snapshot:
        assert smoke_started.wait(5), "the smoke test had not started when the probes ran"
        events.append("probed")
        return load(A100)

    monkeypatch.setattr(te_doctor.smoke.runner, "run_smoke", slow_smoke)
    monkeypatch.setattr(te_doctor.probes.collect, "collect_snapshot", probe)
    snapshot = take_snapshot(None, None, smoke=True)
    assert events == ["probed", "smoke done"]  # the probes did not wait for the smoke test
    assert snapshot.smoke.outcome.reason == "a stand-in smoke result"


def test_a_smoke_runner_that_raises_is_a_smoke_test_without_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(python: str, *, timeout_s: float, progress: object = None) -> SmokeFacts:
        raise RuntimeError("a te-doctor bug")

    monkeypatch.setattr(te_doctor.smoke.runner, "run_smoke", broken)
    monkeypatch.setattr(te_doctor.probes.collect, "collect_snapshot", lambda context: load(A100))
    snapshot = take_snapshot(None, None, smoke=True)
    assert snapshot.smoke.outcome.reason == (
        "the smoke test ended without a result (RuntimeError: a te-doctor bug)"
    )
