"""The plan never walks into its own blockers: one CUDA major for toolkit, torch and core;
blockers first (step 0); --python carried to the closing check; the NGC JAX container for
JAX; "pip was not asked" only with the reason it was not."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from te_doctor.plan.planner import make_plan
from te_doctor.render.plan_render import plan_text
from te_doctor.snapshot.facts import Fact, Version
from te_doctor.snapshot.file import load
from te_doctor.snapshot.model import Snapshot, ToolkitFacts

FIXTURES = Path(__file__).parent / "fixtures"


def with_toolkit(snapshot: Snapshot, version: str, path: str) -> Snapshot:
    """The snapshot with one CUDA toolkit, the one a build would use (CUDA_HOME)."""
    toolkit = ToolkitFacts(
        path=path,
        version=Fact.of(Version(version), "test"),
        nvcc=Fact.of(f"{path}/bin/nvcc", "test"),
        found_by="CUDA_HOME",
    )
    cuda = dataclasses.replace(
        snapshot.cuda,
        toolkit_version=Fact.of(Version(version), "test"),
        toolkit_path=Fact.of(path, "test"),
        toolkits=(toolkit,),
    )
    return dataclasses.replace(snapshot, cuda=cuda)


def test_a_cuda_13_toolkit_without_a_driver_plans_cuda_13_throughout() -> None:
    """This machine's case: CPU torch, no driver, a CUDA 13.0 toolkit at /usr/local/cuda."""
    laptop = with_toolkit(load(FIXTURES / "no-gpu-laptop.json"), "13.0.88", "/usr/local/cuda")
    plan = make_plan(laptop)
    assert plan.core_package == "transformer-engine-cu13"
    assert plan.env["CUDA_HOME"] == "/usr/local/cuda"
    assert any("core_cu13" in step.command for step in plan.steps)
    blocker = next(f for f in plan.blockers if f.rule_id == "TED921")
    assert "download.pytorch.org/whl/cu130" in blocker.fix and "cu128" not in blocker.fix
    assert "TED927" not in [f.rule_id for f in plan.blockers]


def test_a_cuda_12_driver_keeps_cuda_12_and_never_points_at_the_13_toolkit() -> None:
    box = load(FIXTURES / "plan-cpu-torch-on-gpu-box.json")  # driver 570 (CUDA 12.8)
    plan = make_plan(with_toolkit(box, "13.0.88", "/usr/local/cuda-13.0"))
    assert plan.core_package == "transformer-engine-cu12"
    assert "CUDA_HOME" not in plan.env  # a CUDA 13 toolkit is what TED927 forbids here
    blocker = next(f for f in plan.blockers if f.rule_id == "TED921")
    assert "download.pytorch.org/whl/cu128" in blocker.fix


def test_a_toolkit_of_the_torch_major_is_chosen_over_the_default() -> None:
    h100 = load(FIXTURES / "h100-cuda12-te-ok.json")  # torch +cu124
    default = ToolkitFacts(
        path="/usr/local/cuda-13.0",
        version=Fact.of(Version("13.0.88"), "test"),
        nvcc=Fact.of("/usr/local/cuda-13.0/bin/nvcc", "test"),
        found_by="CUDA_HOME",
    )
    matching = dataclasses.replace(
        default, path="/usr/local/cuda-12.4", version=Fact.of(Version("12.4.1"), "t")
    )
    cuda = dataclasses.replace(
        h100.cuda,
        toolkit_version=Fact.of(Version("13.0.88"), "test"),
        toolkit_path=Fact.of("/usr/local/cuda-13.0", "test"),
        toolkits=(default, matching),
    )
    plan = make_plan(dataclasses.replace(h100, cuda=cuda))
    assert plan.env["CUDA_HOME"] == "/usr/local/cuda-12.4"
    assert "TED927" not in [f.rule_id for f in plan.blockers]


def test_blockers_come_first_as_step_0_and_the_check_carries_python() -> None:
    box = load(FIXTURES / "plan-cpu-torch-on-gpu-box.json")
    plan = make_plan(box, python="/srv/train/.venv/bin/python3")
    text = plan_text(plan, None, "a saved snapshot")
    assert text.index("0. Fix these first") < text.index("\n1. ")
    assert "(TED921)" in text.split("\n1. ")[0]
    assert "Blockers (fix these first)" not in text
    assert plan.steps[-1].command == "te-doctor check --python /srv/train/.venv/bin/python3"
    assert "pip was not asked (a saved snapshot)" in text and "--no-pip" not in text
    assert "/srv/train/.venv/bin/python3 -m pip install --force-reinstall torch" in text


def test_jax_is_offered_the_ngc_jax_container() -> None:
    box = load(FIXTURES / "plan-cpu-torch-on-gpu-box.json")  # driver 570.124.06
    jax = make_plan(box, framework="jax")
    assert "nvcr.io/nvidia/jax:24.04-py3" in jax.alternative
    assert "pytorch" not in jax.alternative
    assert "nvcr.io/nvidia/pytorch:25.01-py3" in make_plan(box).alternative
