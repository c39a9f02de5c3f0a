"""The smoke child's GEMM stage: every check in order, each judged against its tolerance.

Checks. Inputs come from a fixed seed, all dimensions are 128 (multiples of 16 for
``_scaled_mm``, of 32 for MXFP8 and of 128 for FP8 block scaling and NVFP4). Every result is
compared with a float64 reference computed on the CPU (at least as exact as FP32) from the
same inputs, dequantized where the check quantizes them itself. ``rel_error`` is
``||out - ref||_F / ||ref||_F`` (the worst of forward output and input gradient where both are
checked); status "ok" when it is within the tolerance, "numerics" when above it or when the
output is not finite, "failed" when the check raised (``detail`` is the exception),
"skipped" when the path cannot run here (``detail`` says why).

=================  =========  =================================================================
check              tolerance  why
=================  =========  =================================================================
cpu                1e-5       FP32 on the CPU: ~1e-7 relative for K=128 sums
cpu-bf16           0.02       torch.autocast("cpu", bfloat16): bf16 inputs and output, as below
torch-fp32         0.01       TF32 may be on (10 mantissa bits: ~1e-3 relative)
torch-amp-bf16     0.02       bf16 inputs and output (8 significant bits: ~0.4 %)
torch-amp-fp16     0.01       fp16 inputs and output (11 significant bits: ~0.05 %)
torch-fp8          0.08       e4m3 has 3 mantissa bits: one rounding step is up to 6.25 %;
                              the reference uses the dequantized inputs, so only the GEMM is
                              measured (bf16 output rounding, ~0.2 %), far below what a wrong
                              scale or operand layout gives (tens of per cent)
te-bf16, te-fp16   0.02, 0.01 as for autocast
te-fp8-*, mxfp8    0.1        TE quantizes internally, so the reference is unquantized: e4m3
                              inputs give ~4 % forward; the HYBRID format's e5m2 gradients
                              (2 mantissa bits) ~6 % on the input gradient
te-nvfp4           0.25       e2m1 (1 mantissa bit) in 16-value blocks: ~13 % forward, ~17 % on
                              the input gradient with stochastic rounding
=================  =========  =================================================================

The TE FP8/NVFP4 error figures are estimates from emulating the formats on the CPU (M=N=K=128,
Gaussian data), not GPU measurements. The TE recipe checks run forward and backward twice and
measure the second pass: delayed scaling takes its scales from the previous pass's amax.

The torch-fp8 check runs on ``cuda:0`` when its compute capability is 8.9 or higher, else on
the CPU (torch 2.13 has a CPU ``_scaled_mm``; a torch without one gets "skipped" there).
TE checks need TE imported and a working CUDA device, and are skipped with TE's own reason when
its support check says no, or when the installed TE has no such recipe class.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from _te_doctor_smoke_measure import SEED, Measured, Skip
from _te_doctor_smoke_record import DETAIL_LIMIT, Result, StageLog, State, describe, ms_since
from _te_doctor_smoke_te_checks import TE_RECIPES, check_te_plain, check_te_recipe
from _te_doctor_smoke_torch_checks import (
    TOL_BF16,
    TOL_CPU,
    TOL_FP16,
    TOL_FP32,
    TOL_TORCH_FP8,
    check_amp,
    check_cpu,
    check_cpu_bf16,
    check_torch_fp8,
    check_torch_fp32,
)


@dataclass
class Check:
    """One GEMM check: its path id, tolerance, device and body."""

    name: str
    tolerance: float
    device: str
    body: Callable[[], Measured]


def stage_gemm(result: Result, state: State, log: StageLog) -> None:
    state.torch.manual_seed(SEED)
    for check in gemm_checks(state):
        result.data["running_check"] = check.name
        result.write()
        result.data["checks"].append(run_check(check, state))
    result.data.pop("running_check", None)
    statuses = [str(check["status"]) for check in result.data["checks"]]
    log.detail = ", ".join(f"{statuses.count(s)} {s}" for s in sorted(set(statuses)))


def run_check(check: Check, state: State) -> dict[str, Any]:
    """Run one check and turn what happened into its result entry."""
    started = time.perf_counter()
    entry: dict[str, Any] = {
        "name": check.name,
        "device": check.device,
        "status": "failed",
        "max_abs_error": None,
        "rel_error": None,
        "tolerance": check.tolerance,
        "detail": "",
    }
    try:
        measured = check.body()
        if check.device.startswith("cuda"):
            state.torch.cuda.synchronize()  # an asynchronous kernel error belongs to this check
    except Skip as skip:
        entry.update(status="skipped", detail=str(skip))
    except Exception as exc:  # noqa: BLE001 -- a failing GEMM is a result, not a crash
        entry.update(status="failed", detail=describe(exc))
    else:
        rel = measured.rel_error
        within = rel is not None and rel <= check.tolerance
        entry.update(
            status="ok" if within else "numerics",
            max_abs_error=measured.max_abs_error,
            rel_error=rel,
            detail=measured.detail[:DETAIL_LIMIT],
        )
    entry["duration_ms"] = ms_since(started)
    return entry


def gemm_checks(state: State) -> list[Check]:
    """All checks, least likely to crash the process first."""
    cuda = state.cuda_device
    fp8_device = cuda if state.cuda_ok and (state.capability or (0, 0)) >= (8, 9) else "cpu"
    checks = [
        Check("cpu", TOL_CPU, "cpu", lambda: check_cpu(state)),
        Check("cpu-bf16", TOL_BF16, "cpu", lambda: check_cpu_bf16(state)),
        Check("torch-fp32", TOL_FP32, cuda, lambda: check_torch_fp32(state)),
        Check("torch-amp-bf16", TOL_BF16, cuda, lambda: check_amp(state, "bfloat16")),
        Check("torch-amp-fp16", TOL_FP16, cuda, lambda: check_amp(state, "float16")),
        Check("torch-fp8", TOL_TORCH_FP8, fp8_device, lambda: check_torch_fp8(state, fp8_device)),
        Check("te-bf16", TOL_BF16, cuda, lambda: check_te_plain(state, "bfloat16")),
        Check("te-fp16", TOL_FP16, cuda, lambda: check_te_plain(state, "float16")),
    ]
    for name, recipe_class, support_key, tolerance in TE_RECIPES:
        checks.append(
            Check(
                name,
                tolerance,
                cuda,
                _te_recipe_body(state, recipe_class, support_key),
            )
        )
    return checks


def _te_recipe_body(state: State, recipe_class: str, support_key: str) -> Callable[[], Measured]:
    return lambda: check_te_recipe(state, recipe_class, support_key)
