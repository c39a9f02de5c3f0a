"""CUDA forward compatibility as a fact: which GPUs it covers and what CUDA it gives."""

from __future__ import annotations

import pytest

from te_doctor.engine.forward_compat import forward_compat_cuda, gpu_supports_forward_compat
from te_doctor.snapshot.facts import Fact, FactState


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", True),
        ("NVIDIA A100-SXM4-80GB", True),
        ("Tesla V100-SXM2-32GB", True),
        ("NVIDIA L4", True),
        ("NVIDIA L40S", True),
        ("NVIDIA A10G", True),
        ("NVIDIA GB200", True),
        ("NVIDIA GeForce RTX 4090", False),
        ("NVIDIA TITAN RTX", False),
        ("NVIDIA RTX A6000", None),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", None),
    ],
)
def test_which_gpus_the_guide_covers(name: str, expected: bool | None) -> None:
    fact = gpu_supports_forward_compat(Fact.of(name, "nvml"))
    assert fact.value is expected
    if expected is None:
        assert fact.state is FactState.UNKNOWN and "NGC Server Ready" in fact.reason


H100 = Fact.of(True, "derived")
DRIVER_535 = Fact.of("535.161.08", "nvml")


def test_a_newer_libcuda_on_a_covered_gpu_gives_its_branchs_cuda() -> None:
    compat = forward_compat_cuda(Fact.of("580.65.06", "libcuda"), DRIVER_535, [H100, H100])
    assert compat.value == "13.0"
    r570 = forward_compat_cuda(Fact.of("570.124.06", "libcuda"), DRIVER_535, [H100])
    assert r570.value == "12.8"


@pytest.mark.parametrize(
    ("libcuda", "gpus", "why"),
    [
        (Fact.of("535.161.08", "libcuda"), [H100], "the driver's own"),
        (Fact.of("580.65.06", "libcuda"), [H100, Fact.of(False, "derived")], "GeForce or TITAN"),
        (Fact.of("580.65.06", "libcuda"), [Fact.unknown("RTX A6000: ...", "derived")], "A6000"),
        (Fact.unknown("ldconfig failed", "libcuda"), [H100], "ldconfig failed"),
        (Fact.of("580.65.06", "libcuda"), [], "no visible GPU"),
        (Fact.of("999.1.2", "libcuda"), [H100], "not in the table"),
    ],
)
def test_anything_unsure_reads_as_no_forward_compat(
    libcuda: Fact[str], gpus: list[Fact[bool]], why: str
) -> None:
    """Absent, never unknown: TED201/TED202 then keep their error (never a false green)."""
    compat = forward_compat_cuda(libcuda, DRIVER_535, gpus)
    assert compat.state is FactState.ABSENT
    assert why in compat.reason
