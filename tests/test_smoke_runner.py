"""The smoke parent against stand-in children: every way a child can end becomes a fact."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from te_doctor.smoke.runner import run_smoke
from te_doctor.snapshot.facts import FactState
from te_doctor.snapshot.model import SmokeFacts

CHILDREN = Path(__file__).parent / "data" / "children"


def smoke(name: str, timeout_s: float = 20.0) -> SmokeFacts:
    return run_smoke(sys.executable, timeout_s=timeout_s, child=CHILDREN / f"{name}.py")


def test_ok_child_and_its_checks() -> None:
    facts = smoke("ok")
    assert facts.outcome.value == "ok"
    assert facts.stage.state is FactState.ABSENT and facts.error_text.state is FactState.ABSENT
    assert [(c.name, c.status) for c in facts.checks] == [
        ("cpu", "ok"),
        ("torch-fp8", "ok"),
        ("te-bf16", "skipped"),
    ]
    assert facts.checks[1].rel_error.value == pytest.approx(0.021)
    assert facts.torch_cuda_available.value is False


@pytest.mark.parametrize(
    ("child", "signal_name", "stage"),
    [("segfault", "SIGSEGV", "gemm"), ("abort", "SIGABRT", "import-te")],
)
def test_killed_by_a_signal_names_it_and_the_stage(
    child: str, signal_name: str, stage: str
) -> None:
    facts = smoke(child)
    assert facts.outcome.value == "signal"
    assert facts.stage.value == stage
    assert f"killed by {signal_name} during {stage}" in (facts.error_text.value or "")


def test_abort_keeps_the_stderr_tail() -> None:
    assert "std::runtime_error" in (smoke("abort").error_text.value or "")


def test_a_hanging_child_is_killed_at_the_timeout() -> None:
    started = time.monotonic()
    facts = smoke("hang", timeout_s=1.0)
    assert time.monotonic() - started < 5
    assert facts.outcome.value == "timeout"
    assert facts.stage.value == "device"
    assert "did not finish within 1 s during device" in (facts.error_text.value or "")


def test_a_traceback_without_a_result_is_crashed_with_its_text() -> None:
    facts = smoke("traceback_no_result")
    assert facts.outcome.value == "crashed"
    assert "undefined symbol: _ZN3c104cuda9SetDeviceEi" in (facts.error_text.value or "")


def test_out_of_memory() -> None:
    facts = smoke("oom")
    assert facts.outcome.value == "oom" and facts.stage.value == "gemm"
    assert "CUDA out of memory" in (facts.error_text.value or "")


def test_junk_instead_of_a_result() -> None:
    facts = smoke("junk_result")
    assert facts.outcome.value == "crashed"
    assert "without a readable result" in (facts.error_text.value or "")


def test_import_failure_keeps_the_exception_text_for_rules() -> None:
    facts = smoke("import_failure")
    assert facts.outcome.value == "failed" and facts.stage.value == "import-te"
    assert facts.error_text.value == "Traceback ...\nRuntimeError: cudnn shared object not found."
    assert [c.status for c in facts.checks] == ["ok"]


def test_wrong_numbers_are_a_failure_not_a_success() -> None:
    facts = smoke("numerics")
    assert facts.outcome.value == "failed" and facts.stage.value == "gemm"
    assert "torch-fp8 on cpu: numerics" in (facts.error_text.value or "")


def test_an_interpreter_that_cannot_start() -> None:
    facts = run_smoke("/nonexistent/python", child=CHILDREN / "ok.py")
    assert facts.outcome.value == "crashed"
    assert "cannot start" in (facts.error_text.value or "")


def test_the_gemm_that_crashed_the_child_is_a_failed_check() -> None:
    facts = smoke("segfault")
    assert "(in the te-fp8-current check)" in (facts.error_text.value or "")
    (crashed,) = facts.checks
    assert (crashed.name, crashed.device, crashed.status) == ("te-fp8-current", "cuda:0", "failed")
