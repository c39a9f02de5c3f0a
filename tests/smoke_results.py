"""Smoke-child results for recorded machines, in the child's own result format.

They are what ``te_doctor/smoke/child/`` writes on such a machine; the parent's real parser
(``te_doctor.smoke.result.from_child``) turns them into the snapshot's smoke section.
"""

from __future__ import annotations

from typing import Any

#: The checks the smoke child runs on cuda:0, in its order (torch-fp8 falls back to the CPU).
GPU_CHECKS = (
    "torch-fp32",
    "torch-amp-bf16",
    "torch-amp-fp16",
    "te-bf16",
    "te-fp16",
    "te-fp8-delayed",
    "te-fp8-current",
    "te-fp8-block",
    "te-mxfp8",
    "te-nvfp4",
)
TOLERANCE = {
    "cpu": 1e-5,
    "torch-fp32": 0.01,
    "torch-amp-bf16": 0.02,
    "torch-amp-fp16": 0.01,
    "torch-fp8": 0.08,
    "te-bf16": 0.02,
    "te-fp16": 0.01,
    "te-fp8-delayed": 0.1,
    "te-fp8-current": 0.1,
    "te-fp8-block": 0.1,
    "te-mxfp8": 0.1,
    "te-nvfp4": 0.25,
}
#: A plausible relative error for each check when it works.
TYPICAL_ERROR = {
    "cpu": 3e-8,
    "torch-fp32": 4e-4,
    "torch-amp-bf16": 3.1e-3,
    "torch-amp-fp16": 4e-4,
    "torch-fp8": 1.7e-3,
    "te-bf16": 3.3e-3,
    "te-fp16": 4.1e-4,
    "te-fp8-delayed": 4.4e-2,
    "te-fp8-current": 4.2e-2,
    "te-fp8-block": 3.9e-2,
    "te-mxfp8": 3.6e-2,
    "te-nvfp4": 1.4e-1,
}


def check(name: str, device: str, status: str = "ok", detail: str = "") -> dict[str, Any]:
    """One check entry; errors are filled in for checks that ran."""
    ran = status in ("ok", "numerics")
    error = TYPICAL_ERROR[name] if status == "ok" else 0.6 if status == "numerics" else None
    return {
        "name": name,
        "device": device,
        "status": status,
        "max_abs_error": error * 8 if ran and error is not None else None,
        "rel_error": error if ran else None,
        "tolerance": TOLERANCE[name],
        "detail": detail,
        "duration_ms": 2.5 if ran else 0.0,
    }


def child_result(
    checks: list[dict[str, Any]],
    *,
    cuda: bool,
    capability: str | None = None,
    cudnn: str | None = None,
    te_support: list[dict[str, Any]] | None = None,
    libraries: list[dict[str, Any]] | None = None,
    error: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A finished result file."""
    return {
        "format": 1,
        "finished": True,
        "stage": "done",
        "torch": {"cuda_available": cuda, "capability": capability, "cudnn": cudnn},
        "te_support": te_support or [],
        "checks": checks,
        "loaded_libraries": libraries or [],
        "error": error,
    }


def te_support(**available: str) -> list[dict[str, Any]]:
    """TE's support verdicts: ``fp8=""`` means available, a non-empty value is the refusal."""
    return [
        {"recipe": recipe.replace("_", "-"), "available": not reason, "reason": reason}
        for recipe, reason in available.items()
    ]
