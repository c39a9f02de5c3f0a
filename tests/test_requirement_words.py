"""Unmet path requirements read as sentences with this machine's facts, never as conditions."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.engine.condition_parser import parse_leaf
from te_doctor.engine.flatten import FlatFacts, flatten
from te_doctor.engine.paths import load_paths
from te_doctor.engine.requirement_words import needs, requirement_sentences
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.file import load

FIXTURES = Path(__file__).parent / "fixtures"


def reasons(fixture: str, path_id: str) -> tuple[str, ...]:
    report = run_check(load(FIXTURES / f"{fixture}.json"), GateOptions(fail_on="never"))
    return next(v for v in report.recommendation.ranking if v.id == path_id).reasons


@pytest.mark.parametrize(
    ("fixture", "path_id", "expected"),
    [
        (
            "l40s-no-te",
            "te-mxfp8",
            "needs a GPU of compute capability 10.0 or newer (Blackwell); this NVIDIA L40S is 8.9",
        ),
        (
            "l40s-no-te",
            "te-fp8-delayed",
            "needs Transformer Engine with its PyTorch extension; "
            "Transformer Engine is not installed",
        ),
        (
            "plan-cpu-torch-on-gpu-box",
            "te-fp8-current",
            "needs a CUDA build of PyTorch; PyTorch 2.8.0+cpu is a CPU-only build",
        ),
        (
            "h100-smoke-verified",
            "te-fp8-block",
            "needs PyTorch built for CUDA 12.9 or newer; "
            "PyTorch 2.6.0+cu124 is built for CUDA 12.4",
        ),
        (
            "h100-smoke-verified",
            "te-nvfp4",
            "needs Transformer Engine 2.8 or newer; this is Transformer Engine 2.3.0",
        ),
    ],
)
def test_sentences_on_recorded_machines(fixture: str, path_id: str, expected: str) -> None:
    assert expected in reasons(fixture, path_id)


def test_the_gpu_comes_first_and_one_fact_answers_once() -> None:
    said = reasons("l40s-no-te", "te-nvfp4")
    assert said[0].startswith("needs a GPU of compute capability 10.0")
    assert sum("Transformer Engine is not installed" in s for s in said) == 1
    assert any("and Transformer Engine 2.8 or newer" in s for s in said)


def test_a_blocking_rule_is_its_message_with_its_id() -> None:
    said = reasons("t4", "te-fp8-current")
    assert said == ("Tesla T4 has compute capability 7.5: FP8 needs 8.9 (Ada) or newer (TED102)",)


def test_every_requirement_in_paths_toml_reads_as_words() -> None:
    """No leaf of any path comes out with its fact path or operator."""
    laptop = flatten(load(FIXTURES / "no-gpu-laptop.json"))
    for path in load_paths():
        for leaf in path.requires.leaves():
            said = needs(leaf)
            assert leaf.path not in said and leaf.text not in said, said
            assert "satisfies" not in said and " is present" not in said, said
            (sentence,) = requirement_sentences([leaf], laptop)
            assert sentence.startswith("needs ") and "; " in sentence, sentence


def test_an_unknown_fact_says_te_doctor_could_not_tell() -> None:
    leaf = parse_leaf("torch.cuda_version >= 12.8")
    unknown = FlatFacts(
        {"torch.cuda_version": Fact.unknown("torch/version.py unreadable", "t")}, ()
    )
    (sentence,) = requirement_sentences([leaf], unknown)
    assert sentence == (
        "needs PyTorch built for CUDA 12.8 or newer; "
        "te-doctor could not tell here (torch/version.py unreadable)"
    )


@pytest.mark.parametrize(
    ("outcome", "stage", "said"),
    [
        (
            "failed",
            "import-torch",
            "the smoke test stopped in stage import-torch, before its GEMM checks",
        ),
        (
            "failed",
            "gemm",
            "the smoke test ran, and this check did not pass or was not among its checks",
        ),
        (
            "ok",
            "done",
            "the smoke test ran, and this check did not pass or was not among its checks",
        ),
    ],
)
def test_a_smoke_check_that_never_ran_says_where_the_test_stopped(
    outcome: str, stage: str, said: str
) -> None:
    leaf = parse_leaf('smoke.verified contains "cpu-bf16"')
    smoke = FlatFacts(
        {
            "smoke.outcome": Fact.of(outcome, "smoke"),
            "smoke.stage": Fact.of(stage, "smoke"),
            "smoke.verified": Fact.of((), "smoke"),
        },
        (),
    )
    (sentence,) = requirement_sentences([leaf], smoke)
    assert (
        sentence == f"needs the smoke test to have run its cpu-bf16 check and matched FP32; {said}"
    )
