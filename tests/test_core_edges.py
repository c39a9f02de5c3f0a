"""Edge cases of the core that the fixtures never reach (test-audit §6: the surviving mutants).

Each test pins one behaviour a plausible one-line bug would break: a GEMM with wrong numbers
ruling its path out, a skipped smoke check never counting as "verified", an unknown GPU count
failing ``--expect-gpus``, NVML errors other than a missing library staying "unknown", a hidden
GPU 0, exact-element ``contains``, worst-first finding order, ``missing`` only on undecided
findings, two cuDNN patch releases in a collect_env list, and environment rules on a paste.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pynvml
import pytest

from te_doctor.check.pipeline import load_rule_set, run_check
from te_doctor.check.report import GateOptions
from te_doctor.engine.condition_parser import parse_leaf
from te_doctor.engine.conditions import Truth
from te_doctor.engine.evaluate import Outcome
from te_doctor.engine.flatten import FlatFacts, flatten
from te_doctor.probes.nvidia import probe_nvidia
from te_doctor.snapshot.facts import Fact, FactState
from te_doctor.snapshot.file import load
from te_doctor.snapshot.model import Snapshot
from te_doctor.triage.diagnose import pasted_facts
from te_doctor.triage.parsers import parse_report
from tests.fakes import FakeMachine, FakeNvml, ok
from tests.snapshots import busy_snapshot

FIXTURES = Path(__file__).parent / "fixtures"


def with_check_status(snapshot: Snapshot, name: str, status: str) -> Snapshot:
    """The snapshot with one smoke check's status replaced."""
    checks = tuple(
        dataclasses.replace(c, status=status) if c.name == name else c
        for c in snapshot.smoke.checks
    )
    return dataclasses.replace(snapshot, smoke=dataclasses.replace(snapshot.smoke, checks=checks))


def recommended(snapshot: Snapshot) -> tuple[str, str]:
    report = run_check(snapshot, GateOptions())
    return report.recommendation.path, report.recommendation.verification


def test_wrong_numbers_on_the_best_gpu_path_rule_it_out() -> None:
    verified = load(FIXTURES / "h100-smoke-verified.json")
    assert recommended(verified) == ("te-fp8-current", "verified")
    broken = with_check_status(verified, "te-fp8-current", "numerics")
    assert recommended(broken) == ("te-fp8-delayed", "verified")
    report = run_check(broken, GateOptions())
    current = next(v for v in report.recommendation.ranking if v.id == "te-fp8-current")
    assert not current.viable and "wrong numbers" in current.reasons[0]


def test_a_skipped_smoke_check_is_predicted_never_verified() -> None:
    skipped = with_check_status(
        load(FIXTURES / "h100-smoke-verified.json"), "te-fp8-current", "skipped"
    )
    assert recommended(skipped) == ("te-fp8-current", "predicted")


def test_an_unknown_gpu_count_fails_expect_gpus() -> None:
    wedged = load(FIXTURES / "wedged-driver.json")
    gate = run_check(wedged, GateOptions(fail_on="never", expect_gpus=8)).gate
    assert not gate.passed
    assert gate.reasons[0].startswith("--expect-gpus 8: unknown (")
    known = run_check(load(FIXTURES / "h100-mig.json"), GateOptions(fail_on="never")).gate
    assert known.passed


@pytest.mark.parametrize(
    ("error", "smi", "state"),
    [
        (pynvml.NVML_ERROR_NO_PERMISSION, False, FactState.UNKNOWN),
        (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, False, FactState.UNKNOWN),
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, False, FactState.UNKNOWN),
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, False, FactState.ABSENT),
        (pynvml.NVML_ERROR_NO_PERMISSION, True, FactState.UNKNOWN),
    ],
)
def test_nvml_errors_other_than_a_missing_library_are_unknown(
    tmp_path: Path, error: int, smi: bool, state: FactState
) -> None:
    """Only "no NVML library and no nvidia-smi" means no driver; anything else could not tell."""
    machine = FakeMachine(tmp_path)
    machine.nvml = FakeNvml(init_error=error)
    if smi:
        machine.executable("/usr/bin/nvidia-smi")
        machine.runner.replies["nvidia-smi"] = ok("Failed to initialize NVML: Unknown Error\n")
    driver = probe_nvidia(machine.context()).driver
    assert driver.version.state is state, driver.version


def test_gpu_facts_describe_the_first_visible_gpu(tmp_path: Path) -> None:
    snapshot = busy_snapshot(tmp_path)  # CUDA_VISIBLE_DEVICES names GPU 1's UUID only
    assert [g.visible for g in snapshot.gpus] == [False, True]
    facts = flatten(snapshot)
    assert facts.get("gpu.index").value == 1
    assert facts.get("gpus.count").value == 1


@pytest.mark.parametrize(
    ("leaf", "truth"),
    [
        ('torch.cuda_arch_list contains "sm_90"', Truth.TRUE),
        ('torch.cuda_arch_list contains "sm_9"', Truth.FALSE),  # no substring matches
        ('torch.cuda_arch_list contains "sm_90a"', Truth.FALSE),
        ('torch.cuda_arch_list not contains "sm_9"', Truth.TRUE),
    ],
)
def test_list_contains_means_an_exact_element(leaf: str, truth: Truth) -> None:
    facts = FlatFacts({"torch.cuda_arch_list": Fact.of(("sm_80", "sm_90"), "t")}, ())
    assert parse_leaf(leaf).evaluate(facts)[0] is truth


def test_findings_come_worst_first_and_fired_before_undecided() -> None:
    report = run_check(load(FIXTURES / "v100.json"), GateOptions())
    fired = [f for f in report.findings if f.outcome is Outcome.FIRED]
    ranks = [f.severity.rank for f in fired]
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) >= 2
    wedged = run_check(load(FIXTURES / "wedged-driver.json"), GateOptions()).findings
    outcomes = [f.outcome for f in wedged]
    assert Outcome.FIRED in outcomes and Outcome.UNDECIDED in outcomes
    order = {Outcome.FIRED: 0, Outcome.UNDECIDED: 1, Outcome.PASSED: 2, Outcome.NOT_APPLICABLE: 3}
    assert outcomes == sorted(outcomes, key=order.__getitem__)


def test_only_undecided_findings_list_missing_facts() -> None:
    report = run_check(load(FIXTURES / "wedged-driver.json"), GateOptions())
    assert any(f.missing for f in report.findings if f.outcome is Outcome.UNDECIDED)
    assert all(not f.missing for f in report.findings if f.outcome is not Outcome.UNDECIDED)


def test_two_patch_releases_of_one_cudnn_state_no_single_version() -> None:
    text = (
        "cuDNN version: Probably one of the following:\n"
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2\n"
        "/usr/local/cuda/lib64/libcudnn.so.8.9.7\n"
        "HIP runtime version: N/A\n"
    )
    parsed = parse_report("PyTorch version: 2.1.0+cu121\n" + text)
    assert "cudnn.version" not in parsed.facts
    one = parse_report("PyTorch version: 2.1.0+cu121\n" + text.replace("8.9.7", "8.9.2"))
    assert one.facts.get("cudnn.version") == "8.9.2"


def test_environment_rules_stay_undecided_on_a_paste() -> None:
    """A paste does not list every variable: ``env.X is missing`` must not fire on it."""
    facts = pasted_facts({"torch.version": "2.4.0"}, {}, "")
    assert facts.get("env.MAX_JOBS").state is FactState.UNKNOWN
    rules, _paths = load_rule_set()
    env_missing = [
        rule
        for rule in rules
        if any(
            leaf.path.startswith("env.") and leaf.op == "is missing" for leaf in rule.when.leaves()
        )
    ]
    assert env_missing
    for rule in env_missing:
        assert rule.when.evaluate(facts)[0] is not Truth.TRUE, rule.id


def test_closest_path_is_one_this_hardware_can_run() -> None:
    """An H100 with no torch: nothing runs; the closest path is never an NVFP4/MXFP8 one."""
    report = run_check(load(FIXTURES / "plan-old-driver-cu13.json"), GateOptions())
    assert report.recommendation.path == ""
    assert report.recommendation.closest == "te-fp8-block"  # te-nvfp4/te-mxfp8 need cc >= 10
    laptop = run_check(load(FIXTURES / "no-gpu-laptop.json"), GateOptions()).recommendation
    assert laptop.path == "cpu" and laptop.closest == ""
