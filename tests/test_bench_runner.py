"""The bench parent against stand-in children, and the real child on the CPU and broken TE."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from te_doctor.bench.choose import PlannedPath
from te_doctor.bench.record import BenchSettings, PathRun
from te_doctor.bench.runner import run_path, run_paths
from te_doctor.bench.workload import build_workload
from tests.conftest import need_torch

CHILDREN = Path(__file__).parent / "data" / "bench_children"
TINY = build_workload(
    None, hidden_size=64, ffn_hidden_size=128, num_heads=4, num_kv_heads=2, seq_len=32, batch_size=2
)
SETTINGS = BenchSettings(warmup=2, repeats=4, budget_s=20.0)


def stand_in(name: str, timeout_s: float = 20.0) -> PathRun:
    plan = PlannedPath("torch-amp-bf16", "cpu", "", "")
    return run_path(
        sys.executable, plan, TINY, SETTINGS, child=CHILDREN / f"{name}.py", timeout_s=timeout_s
    )


def statuses(run: PathRun) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in run.components]


def test_a_child_that_measured_everything() -> None:
    run = stand_in("ok")
    assert (run.status, run.reason) == ("ran", "")
    assert statuses(run) == [("gemms", "ok"), ("mlp", "ok"), ("layer", "ok")]
    assert run.components[0].samples_s == (0.01, 0.01, 0.01)
    assert run.components[0].warmup_s == (0.05,)


def test_a_hanging_child_is_killed_and_what_it_finished_is_kept() -> None:
    started = time.monotonic()
    run = stand_in("hang", timeout_s=1.5)
    assert time.monotonic() - started < 6
    assert run.status == "timeout"
    assert statuses(run) == [("gemms", "ok"), ("mlp", "timeout"), ("layer", "timeout")]
    assert run.components[1].reason == "timed out after 2 s while running mlp"


def test_a_crash_is_named_with_the_component_it_hit() -> None:
    run = stand_in("segfault")
    assert run.status == "crashed" and run.reason == "killed by SIGSEGV"
    assert statuses(run) == [("gemms", "ok"), ("mlp", "crashed"), ("layer", "crashed")]
    assert run.components[1].reason == "killed by SIGSEGV while running mlp"


def test_junk_instead_of_a_result_is_a_crash_not_an_exception() -> None:
    run = stand_in("junk")
    assert run.status == "crashed" and run.reason == "exited with code 0"
    assert {c.status for c in run.components} == {"crashed"}


def test_an_import_error_fails_the_path_with_its_last_line() -> None:
    run = stand_in("import_error")
    assert run.status == "failed"
    assert run.reason == "OSError: libcudnn.so.9: cannot open shared object file"
    assert {c.reason for c in run.components} == {run.reason}


def test_an_interpreter_that_does_not_exist() -> None:
    plan = PlannedPath("cpu", "cpu", "", "")
    run = run_path("/nonexistent/python", plan, TINY, SETTINGS)
    assert run.status == "crashed" and run.reason.startswith("cannot start /nonexistent/python")


def test_skipped_paths_are_recorded_not_run() -> None:
    lines: list[str] = []
    runs = run_paths(
        sys.executable,
        [PlannedPath("te-fp8-current", "cuda", "", "no GPU")],
        TINY,
        SETTINGS,
        progress=lines.append,
        child=CHILDREN / "hang.py",
    )
    assert runs[0].status == "skipped" and {c.reason for c in runs[0].components} == {"no GPU"}
    assert lines == ["[1/1] te-fp8-current on cuda: skipped (no GPU)"]


# --------------------------------------------------------------------------- the real child


@pytest.mark.torch
def test_the_real_child_times_the_cpu_path() -> None:
    torch = need_torch()
    run = run_path(sys.executable, PlannedPath("cpu", "cpu", "", ""), TINY, SETTINGS)
    assert run.status == "ran", run.reason
    assert run.torch_version == torch.__version__ and run.device_name == "cpu"
    for component in run.components:
        assert component.status == "ok", component.reason
        assert len(component.warmup_s) >= 2 and len(component.samples_s) == 4
        assert component.rel_error == 0.0  # FP32 against FP32: the same computation
        assert component.memory_kind == "peak-rss" and (component.memory_bytes or 0) > 10**7


@pytest.mark.torch
@pytest.mark.parametrize(("path_id", "tolerance"), [("torch-amp-bf16", 0.02), ("torch-fp8", 0.1)])
def test_the_real_child_checks_low_precision_against_fp32(path_id: str, tolerance: float) -> None:
    run = run_path(sys.executable, PlannedPath(path_id, "cpu", "", ""), TINY, SETTINGS)
    assert run.status == "ran", run.reason
    for component in run.components:
        assert component.status == "ok", component.reason
        assert component.rel_error is not None and 1e-5 < component.rel_error < tolerance


@pytest.mark.slow  # builds the real TE venv on a cold cache
def test_the_real_child_reports_a_te_path_on_a_broken_install(venv_python: Path) -> None:
    """The real TE 2.20.2 wheels without cuDNN: the import fails and says why."""
    run = run_path(str(venv_python), PlannedPath("te-bf16", "cuda", "", ""), TINY, SETTINGS)
    assert run.status == "failed"
    assert "cudnn" in run.reason.lower()
