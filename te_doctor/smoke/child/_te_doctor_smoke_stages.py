"""The smoke child's stages before the GEMMs: import torch, the device, import TE, TE's checks."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from typing import Any

from _te_doctor_smoke_record import Result, StageLog, State, describe

TE_NAME = "transformer-engine"
TE_DISTRIBUTIONS = (
    "transformer-engine",
    "transformer_engine",
    "transformer-engine-cu12",
    "transformer-engine-cu13",
    "transformer_engine_torch",
)
#: recipe -> (public function in TE 2.9+, check function in quantization.py / fp8.py).
SUPPORT_FUNCTIONS = (
    ("fp8", "is_fp8_available", "check_fp8_support"),
    ("mxfp8", "is_mxfp8_available", "check_mxfp8_support"),
    ("fp8-block", "is_fp8_block_scaling_available", "check_fp8_block_scaling_support"),
    ("nvfp4", "is_nvfp4_available", "check_nvfp4_support"),
    ("bf16", "is_bf16_available", ""),
)
SUPPORT_MODULES = ("transformer_engine.pytorch.quantization", "transformer_engine.pytorch.fp8")


def stage_import_torch(result: Result, state: State, log: StageLog) -> None:
    try:
        torch = importlib.import_module("torch")
    except Exception as exc:  # noqa: BLE001 -- any import failure is the finding
        result.fail("import-torch", exc)
        log.failed(exc)
        return
    state.torch = torch
    info = torch_info(torch)
    result.data["torch"] = info
    state.cuda_ok = bool(info["cuda_available"])
    if info["capability"]:
        major, minor = str(info["capability"]).split(".")
        state.capability = (int(major), int(minor))


def torch_info(torch: Any) -> dict[str, Any]:
    """What torch reports about its build and device 0; None for what it cannot tell."""
    version = getattr(torch, "version", None)
    info: dict[str, Any] = {
        "version": str(getattr(torch, "__version__", "")),
        "cuda": getattr(version, "cuda", None),
        "hip": getattr(version, "hip", None),
        "cuda_available": False,
        "device_count": None,
        "device_name": None,
        "capability": None,
        "cudnn": None,
        "warnings": [],
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info["cuda_available"] = bool(_quietly(torch.cuda.is_available, False))
        if info["cuda_available"]:
            info["device_count"] = _quietly(torch.cuda.device_count, None)
            info["device_name"] = _quietly(lambda: torch.cuda.get_device_name(0), None)
            capability = _quietly(lambda: torch.cuda.get_device_capability(0), None)
            if capability:
                info["capability"] = f"{capability[0]}.{capability[1]}"
        raw = _quietly(torch.backends.cudnn.version, None)
        info["cudnn"] = decode_cudnn_version(raw) if isinstance(raw, int) and raw > 0 else None
    info["warnings"] = [str(item.message)[:500] for item in caught][:5]
    for message in info["warnings"]:
        print(f"te-doctor smoke: torch warned: {message}", file=sys.stderr)
    return info


def _quietly(call: Callable[[], Any], default: Any) -> Any:
    try:
        return call()
    except Exception:  # noqa: BLE001 -- a query that fails reports nothing; the device stage tells why
        return default


def decode_cudnn_version(value: int) -> str:
    """cudnnGetVersion() as TE decodes it: 8902 -> 8.9.2, 90100 -> 9.1.0."""
    major, rest = divmod(value, 1000) if value < 90000 else divmod(value, 10000)
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}"


def stage_device(result: Result, state: State, log: StageLog) -> None:
    torch = state.torch
    if not state.cuda_ok:
        build = result.data["torch"].get("cuda")
        state.no_cuda = "no CUDA device" if build else "torch is a CPU-only build (no CUDA device)"
        log.skip(f"torch.cuda.is_available() is False; {state.no_cuda}")
        return
    try:
        values = torch.arange(16, dtype=torch.float32, device="cuda:0")
        total = float((values * 2).sum().item())
        torch.cuda.synchronize()
        if total != 240.0:
            raise RuntimeError(f"a tiny tensor op on cuda:0 returned {total}, expected 240.0")
    except Exception as exc:  # noqa: BLE001 -- recorded as the stage's error
        result.fail("device", exc)
        log.failed(exc)
        state.cuda_ok = False
        state.no_cuda = f"the device stage failed: {describe(exc)}"
        return
    state.no_cuda = ""


def stage_import_te(result: Result, state: State, log: StageLog) -> None:
    found = te_distributions()
    result.data["te"]["distributions"] = found
    result.data["te"]["version"] = next(
        (version for name, version in found.items() if name.replace("_", "-") == TE_NAME), None
    )
    if not found:
        log.skip("Transformer Engine is not installed")
        return
    try:
        package = importlib.import_module("transformer_engine")
        te = importlib.import_module("transformer_engine.pytorch")
    except Exception as exc:  # noqa: BLE001 -- any import failure is the finding
        result.fail("import-te", exc)
        log.failed(exc)
        state.no_te = f"import transformer_engine failed: {describe(exc)}"
        return
    state.te_version = str(getattr(package, "__version__", "") or result.data["te"]["version"])
    result.data["te"]["version"] = state.te_version or None
    state.te = te
    state.no_te = ""


def te_distributions() -> dict[str, str]:
    """Installed TE distributions: name -> version."""
    from importlib import metadata

    found: dict[str, str] = {}
    for name in TE_DISTRIBUTIONS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[str(dist.metadata["Name"] or name)] = str(dist.version)
    return found


def stage_te_support(result: Result, state: State, log: StageLog) -> None:
    if state.te is None:
        log.skip(state.no_te)
        return
    for recipe, public, legacy in SUPPORT_FUNCTIONS:
        function, source = support_function(state.te, public, legacy)
        if function is None:
            continue
        available, reason = call_support(function, public_api=source.startswith("te."))
        state.support[recipe] = (available, reason)
        result.data["te_support"].append(
            {"recipe": recipe, "available": available, "reason": reason, "source": source}
        )


def support_function(te: Any, public: str, legacy: str) -> tuple[Any, str]:
    """(function, where it came from), the public API first; (None, "") when TE has neither."""
    function = getattr(te, public, None)
    if callable(function):
        return function, f"te.{public}"
    if not legacy:
        utils = import_or_none("transformer_engine.pytorch.utils")
        function = getattr(utils, "is_bf16_compatible", None)
        return (
            (function, "transformer_engine.pytorch.utils.is_bf16_compatible")
            if callable(function)
            else (None, "")
        )
    for module_name in SUPPORT_MODULES:
        function = getattr(import_or_none(module_name), legacy, None)
        if callable(function):
            return function, f"{module_name}.{legacy}"
    return None, ""


def import_or_none(name: str) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fp8.py is a shim in TE 2.9+
            return importlib.import_module(name)
    except Exception:  # noqa: BLE001 -- a module this TE does not have
        return None


def call_support(function: Any, *, public_api: bool) -> tuple[bool, str]:
    """TE's verdict as (available, reason); an exception is a "no" with its text as reason."""
    try:
        verdict = function(return_reason=True) if public_api else function()
    except Exception as exc:  # noqa: BLE001 -- the check itself failing is a "no"
        return False, describe(exc)
    if isinstance(verdict, tuple):
        return bool(verdict[0]), str(verdict[1] if len(verdict) > 1 else "")
    return bool(verdict), ""
