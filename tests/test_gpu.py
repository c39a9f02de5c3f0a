"""What only a real GPU can show: run by ``pytest -m gpu`` (and ``benchmarks/gpu_session.sh``).

Every test here needs torch with a working CUDA device and is skipped, saying so, everywhere
else (this project's CI has no GPU). They check the parts of te-doctor that recorded snapshots
and fakes cannot: the smoke child's CUDA GEMMs and tolerances, the bench child's CUDA-event
timer, ``select_path()`` turning autocast on for CUDA, and the NVML probe against what torch
itself reports about each device.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from typing import Any

import pytest

from te_doctor.probes.nvidia import probe_nvidia
from te_doctor.probes.real import real_context
from te_doctor.smoke.runner import run_smoke


def _cuda_torch() -> Any:
    """torch, when it sees a CUDA device; None otherwise."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


TORCH = _cuda_torch()
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(TORCH is None, reason="needs torch with a CUDA device (none here)"),
]
#: The torch-side smoke checks that must pass on any GPU of compute capability 8.9 or newer.
TORCH_GPU_CHECKS = ("torch-fp32", "torch-amp-bf16", "torch-amp-fp16", "torch-fp8")


def test_the_smoke_childs_cuda_checks_pass_within_their_tolerances() -> None:
    facts = run_smoke(sys.executable, timeout_s=120)
    assert facts.outcome.value == "ok", facts.error_text
    checks = {check.name: check for check in facts.checks}
    capability = TORCH.cuda.get_device_capability(0)
    expected = TORCH_GPU_CHECKS if capability >= (8, 9) else TORCH_GPU_CHECKS[:3]
    for name in expected:
        check = checks[name]
        assert check.device == "cuda:0", check
        assert check.status == "ok", check
        assert check.rel_error.value is not None and check.rel_error.value <= check.tolerance


def test_a_wrong_fp8_scale_on_the_gpu_is_a_numerics_failure() -> None:
    if TORCH.cuda.get_device_capability(0) < (8, 9):
        pytest.skip("torch-fp8 runs on the CPU below compute capability 8.9")
    env = {**os.environ, "TE_DOCTOR_SMOKE_FAULT": "wrong-scale"}
    facts = run_smoke(sys.executable, timeout_s=120, env=env)
    fp8 = next(check for check in facts.checks if check.name == "torch-fp8")
    assert (fp8.device, fp8.status) == ("cuda:0", "numerics"), fp8


def test_the_bench_timer_agrees_with_the_wall_clock_on_a_sleep_kernel() -> None:
    """torch.cuda._sleep spins for a number of GPU cycles: a kernel of known, steady length."""
    cuda_timer = importlib.import_module("_te_doctor_bench_timing").cuda_timer
    cycles = 1_000_000
    TORCH.cuda.synchronize()
    started = time.perf_counter()
    TORCH.cuda._sleep(cycles)
    TORCH.cuda.synchronize()
    per_cycle = (time.perf_counter() - started) / cycles
    cycles = max(cycles, int(0.05 / per_cycle))  # about 50 ms: launch overhead is noise

    def step() -> None:
        TORCH.cuda._sleep(cycles)

    timed = cuda_timer(TORCH)
    events = [timed(step) for _ in range(5)]
    walls = []
    for _ in range(5):
        TORCH.cuda.synchronize()
        started = time.perf_counter()
        step()
        TORCH.cuda.synchronize()
        walls.append(time.perf_counter() - started)
    event, wall = sorted(events)[2], sorted(walls)[2]
    assert 0.03 < event < 0.2, events
    assert abs(event - wall) / wall < 0.15, (events, walls)


def test_select_path_turns_autocast_on_for_cuda(tmp_path: Any) -> None:
    import te_doctor

    chosen = te_doctor.select_path(require="bf16", cache_dir=tmp_path)
    assert chosen.device.startswith("cuda"), chosen
    a = TORCH.randn(64, 64, device="cuda")
    with chosen.autocast():
        product = a @ a
    assert product.dtype == TORCH.bfloat16, (chosen.id, product.dtype)


def test_the_nvml_probe_agrees_with_torch_about_every_gpu() -> None:
    result = probe_nvidia(real_context())
    visible = [gpu for gpu in result.gpus if gpu.visible]
    assert len(visible) == TORCH.cuda.device_count()
    for index, gpu in enumerate(visible):
        properties = TORCH.cuda.get_device_properties(index)
        assert gpu.name.value == properties.name
        assert str(gpu.compute_capability.value) == f"{properties.major}.{properties.minor}"
        nvml_mib, torch_mib = gpu.memory_total_mib.value, properties.total_memory / 2**20
        assert nvml_mib is not None and abs(nvml_mib - torch_mib) / torch_mib < 0.02
