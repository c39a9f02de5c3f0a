"""`te-doctor plan` on the recorded planning machines, with the shipped rules and release data.

Each row was reviewed against its machine (tests/machines.py): the TE release and core the plan
proposes, the blockers it names, the warnings/notes it shows, and its exit code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from te_doctor.engine.evaluate import evaluate
from te_doctor.engine.flatten import FlatFacts, flatten
from te_doctor.engine.rule_model import Severity
from te_doctor.plan.data import load_plan_rules
from te_doctor.plan.planner import Plan, make_plan
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.file import load

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass(frozen=True)
class Expected:
    te_version: str
    core: str
    blockers: tuple[str, ...]
    notes: tuple[str, ...]  # fired warnings and info
    exit_code: int
    #: Newer releases that do not fit, each with the rule that rules it out.
    skipped: tuple[tuple[str, str], ...] = ()


#: torch <= 2.8 CUDA 12 wheels pin cuDNN < 9.12, which TE 2.20 refuses (TED912): TE 2.19.0.
CUDNN_TOO_OLD_FOR_2_20 = (("2.20.2", "TED912"),)
#: The releases TED938 rules out on torch < 2.6 (rules/plan/releases.toml), newest first.
TE_2_10_TO_2_19 = (
    "2.19.0",
    "2.18.0",
    "2.17.1",
    "2.16.1",
    "2.15.0",
    "2.14.1",
    "2.13.0",
    "2.12.0",
    "2.11.0",
    "2.10.0",
)
EXPECTED = {
    # Everything installed: a sound plan, TE 2.19.0 since torch 2.8's cuDNN 9.10 is < 9.12.
    "plan-h100-fresh": Expected(
        "2.19.0", "transformer-engine-cu12", (), (), 0, CUDNN_TOO_OLD_FOR_2_20
    ),
    # setup.py parses torch.version.cuda (None): the build cannot even start.
    "plan-cpu-torch-on-gpu-box": Expected(
        "2.19.0", "transformer-engine-cu12", ("TED921",), (), 1, CUDNN_TOO_OLD_FOR_2_20
    ),
    # nvcc 11.8 is found first (CUDA_HOME) and torch is 2.5.1+cu121: TE 2.10+ would not import
    # on torch < 2.6 (TED938, rule-audit FG2), so the newest release that fits is 2.9.0.
    "plan-nvcc-11-8": Expected(
        "2.9.0",
        "transformer-engine-cu12",
        ("TED927", "TED928"),
        (),
        1,
        (("2.20.2", "TED912"), *((v, "TED938") for v in TE_2_10_TO_2_19)),
    ),
    # TE >= 2.4 builds without nvcc, from PyTorch's nvidia-* wheels: only notes.
    "plan-no-nvcc": Expected(
        "2.19.0",
        "transformer-engine-cu12",
        (),
        ("TED914", "TED931"),
        0,
        CUDNN_TOO_OLD_FOR_2_20,
    ),
    # 7845 MiB for 8 CPUs: MAX_JOBS=1, explained.
    "plan-8gb-ram": Expected(
        "2.19.0", "transformer-engine-cu12", (), ("TED914", "TED936"), 0, CUDNN_TOO_OLD_FOR_2_20
    ),
    # Driver 550 (CUDA 12.4), no torch: the cu12 core; system cuDNN 9.13 admits TE 2.20.2.
    "plan-old-driver-cu13": Expected("2.20.2", "transformer-engine-cu12", ("TED920",), (), 1),
    # No driver, no GPU: TE installs (CUDA 12 core from torch +cu128), nothing can run here.
    "plan-no-gpu": Expected(
        "2.19.0", "transformer-engine-cu12", (), ("TED914", "TED937"), 0, CUDNN_TOO_OLD_FOR_2_20
    ),
}


def plan_of(slug: str) -> Plan:
    return make_plan(load(FIXTURES / f"{slug}.json"))


def test_every_planning_fixture_has_a_row() -> None:
    assert sorted(EXPECTED) == sorted(p.stem for p in FIXTURES.glob("plan-*.json"))


@pytest.mark.parametrize("slug", sorted(EXPECTED))
def test_plan_on_the_recorded_machine(slug: str) -> None:
    expected = EXPECTED[slug]
    plan = plan_of(slug)
    assert (plan.te_version, plan.core_package) == (expected.te_version, expected.core)
    assert plan.fits
    assert tuple(sorted(f.rule_id for f in plan.blockers)) == expected.blockers
    notes = sorted(f.rule_id for f in plan.findings if f.fired and f.severity is not Severity.ERROR)
    assert tuple(notes) == expected.notes
    assert plan.exit_code == expected.exit_code
    assert len(plan.version_reasons) == len(expected.skipped), plan.version_reasons
    for reason, (version, rule_id) in zip(plan.version_reasons, expected.skipped, strict=True):
        assert reason.startswith(version) and rule_id in reason, reason


def test_the_build_environment_follows_the_machine() -> None:
    assert plan_of("plan-8gb-ram").env["MAX_JOBS"] == "1"
    assert plan_of("plan-h100-fresh").env["NVTE_CUDA_ARCHS"] == "90"
    assert "NVTE_CUDA_ARCHS" not in plan_of("plan-no-gpu").env  # no GPU to restrict it to
    assert "CUDA_HOME" not in plan_of("plan-no-nvcc").env
    # the only toolkit is CUDA 11.8, torch is +cu121: the plan never points the build at it
    # (TED927 is its blocker), so CUDA_HOME is not set
    assert "CUDA_HOME" not in plan_of("plan-nvcc-11-8").env


def test_torch_comes_first_when_it_is_missing() -> None:
    plan = plan_of("plan-old-driver-cu13")
    assert "CUDA 12 build of PyTorch" in plan.steps[0].title
    assert '"transformer_engine[pytorch,core_cu12]==2.20.2"' in plan.steps[-2].command


def test_blockers_say_why_and_what_to_type() -> None:
    (cpu,) = plan_of("plan-cpu-torch-on-gpu-box").blockers
    assert "CPU-only" in cpu.message and "download.pytorch.org/whl/cu128" in cpu.fix
    nvcc = {f.rule_id: f for f in plan_of("plan-nvcc-11-8").blockers}
    assert "CUDA 11.8.0" in nvcc["TED927"].message and "12.1" in nvcc["TED927"].message
    assert "export CUDA_HOME=/usr/local/cuda-12.1" in nvcc["TED927"].fix


def test_the_container_route_is_offered_while_blockers_remain() -> None:
    cpu_torch = plan_of("plan-cpu-torch-on-gpu-box")  # driver 570.124.06
    assert cpu_torch.alternative.startswith("NGC PyTorch 25.01 (CUDA 12.8")
    assert plan_of("plan-no-gpu").alternative == ""  # no driver to run a container


def test_a_cu13_core_is_refused_on_a_cuda_12_driver() -> None:
    """The planner never offers cu13 here; asked to consider it, TED906 rules it out."""
    facts = flatten(load(FIXTURES / "plan-old-driver-cu13.json"))
    overlay: dict[str, Fact[Any]] = {
        "plan.framework": Fact.of("pytorch", "test"),
        "plan.te_version": Fact.of("2.20.2", "test"),
        "plan.core_cuda_major": Fact.of(13, "test"),
        "plan.max_jobs": Fact.of(24, "test"),
    }
    findings = evaluate(FlatFacts({**facts.values, **overlay}, facts.gpus), load_plan_rules())
    fired = {f.rule_id for f in findings if f.fired}
    assert "TED906" in fired and "TED905" not in fired
