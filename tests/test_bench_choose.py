"""Which paths the bench runs where: viable GPU paths, CPU paths without a GPU, skips."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.bench.choose import PathChoiceError, PlannedPath
from te_doctor.bench.pipeline import plan_paths
from te_doctor.bench.workload import build_workload
from te_doctor.snapshot.file import load

FIXTURES = Path(__file__).parent / "fixtures"


def plan(fixture: str, *requested: str, **sizes: int) -> dict[str, PlannedPath]:
    workload = build_workload(None, **sizes)
    return {p.id: p for p in plan_paths(load(FIXTURES / f"{fixture}.json"), workload, requested)}


def test_an_h100_with_te_benchmarks_every_viable_gpu_path() -> None:
    planned = plan("h100-cuda12-te-ok")
    assert list(planned) == [
        "te-fp8-current",
        "te-fp8-delayed",
        "torch-fp8",
        "te-bf16",
        "torch-amp-bf16",
        "te-fp16",
        "torch-amp-fp16",
        "torch-fp32",
    ]
    assert {p.device for p in planned.values()} == {"cuda"}
    assert not any(p.skip_reason for p in planned.values())


def test_a_machine_without_a_gpu_benchmarks_the_cpu_paths() -> None:
    planned = plan("no-gpu-laptop")
    assert list(planned) == ["torch-fp8", "cpu-bf16", "cpu"]
    assert {p.device for p in planned.values()} == {"cpu"}
    assert planned["torch-fp8"].note == "no CUDA GPU here: runs on the CPU"


def test_an_ampere_gpu_has_no_fp8_path_to_run() -> None:
    planned = plan("a100")
    assert not any(p in planned for p in ("te-fp8-current", "torch-fp8"))
    assert "te-bf16" in planned and "torch-amp-bf16" in planned


def test_asking_for_a_path_that_is_not_viable_skips_it_with_the_reasons() -> None:
    planned = plan("a100", "te-fp8-current")
    assert planned["te-fp8-current"].skip_reason.startswith("not viable here: ")
    assert "te-bf16" not in planned  # no baseline for a path that does not run


def test_fp8_alone_gets_its_bf16_baseline() -> None:
    planned = plan("h100-cuda12-te-ok", "te-fp8-current")
    assert list(planned) == ["te-fp8-current", "te-bf16"]
    assert planned["te-bf16"].note == "the BF16 baseline"
    torch_only = plan("h100-cuda12-te-ok", "torch-fp8")
    assert list(torch_only) == ["torch-fp8", "torch-amp-bf16"]


def test_te_paths_need_a_gpu() -> None:
    planned = plan("no-gpu-laptop", "te-bf16", "cpu")
    assert planned["te-bf16"].skip_reason == "needs a CUDA GPU and a CUDA build of torch"
    assert planned["cpu"].skip_reason == ""


def test_misaligned_shapes_skip_the_fp8_paths_only() -> None:
    planned = plan("h100-cuda12-te-ok", seq_len=1000)
    assert "divisible by 16" in planned["te-fp8-current"].skip_reason
    assert planned["te-bf16"].skip_reason == ""


def test_shapes_too_big_for_the_gpu_are_skipped_with_the_estimate() -> None:
    planned = plan("h100-cuda12-te-ok", hidden_size=65536, num_heads=64, seq_len=65536)
    reason = planned["te-bf16"].skip_reason
    assert reason.startswith("these shapes need about ") and "cuda:0 has 79.6 GiB" in reason


def test_unknown_paths_are_named() -> None:
    with pytest.raises(PathChoiceError, match="--paths: unknown path 'fp9'; known: te-nvfp4, "):
        plan("h100-cuda12-te-ok", "fp9")
