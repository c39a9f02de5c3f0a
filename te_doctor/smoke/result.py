"""Map what the smoke child did to ``SmokeFacts``: a pure function, tested with stand-ins.

The child writes a JSON result file as it goes (``stage`` names the stage in progress), so
even a child killed by a signal or a timeout leaves the stage it died in. The format:

    {"format": 1, "finished": bool, "stage": str,
     "torch": {"cuda_available": bool, "capability": "9.0" | null, "cudnn": "9.1.0" | null, ...},
     "te_support": [{"recipe": str, "available": bool, "reason": str}],
     "checks": [{"name": <path id>, "device": "cuda:0" | "cpu", "status": "ok" | "failed" |
                 "numerics" | "skipped", "max_abs_error": float | null,
                 "rel_error": float | null, "tolerance": float, "detail": str,
                 "duration_ms": float}],
     "loaded_libraries": [{"name": str, "path": str, "version": str | null, "origin": str}],
     "error": {"stage": str, "type": str, "text": str} | null}
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from typing import Any

from te_doctor.snapshot.facts import ComputeCapability, Fact, Version
from te_doctor.snapshot.smoke_model import LoadedLibrary, SmokeCheck, SmokeFacts, SupportCheck

SOURCE = "smoke"
RESULT_FORMAT = 1
STDERR_TAIL = 4096
_OOM_TYPES = ("OutOfMemoryError", "MemoryError")


def from_child(
    data: Mapping[str, Any] | None,
    *,
    returncode: int | None,
    stderr: str,
    python: str,
    duration_ms: float,
    timeout_s: float,
) -> SmokeFacts:
    """SmokeFacts from the child's result file (None if unreadable) and how the process ended.

    ``returncode`` is None when the child was killed at the timeout.
    """
    data = data if isinstance(data, Mapping) and data.get("format") == RESULT_FORMAT else None
    stage = str(data.get("stage", "")) if data else ""
    error = data.get("error") if data else None
    tail = stderr[-STDERR_TAIL:].strip()
    where = f" during {stage}" if stage else ""
    if returncode is None:
        outcome, text = "timeout", f"the smoke test did not finish within {timeout_s:g} s{where}"
    elif returncode < 0:
        name = _signal_name(-returncode)
        hint = " (the kernel's out-of-memory killer sends SIGKILL)" if name == "SIGKILL" else ""
        outcome, text = "signal", f"the smoke child was killed by {name}{where}{hint}"
        text += f"\n{tail}" if tail else ""
    elif data is None:
        outcome = "crashed"
        text = f"the smoke child exited {returncode} without a readable result" + (
            f":\n{tail}" if tail else ""
        )
    elif isinstance(error, Mapping):
        stage = str(error.get("stage", stage))
        outcome = "oom" if error.get("type") in _OOM_TYPES else "failed"
        kind, message = str(error.get("type", "Error")), str(error.get("text", ""))
        text = message if kind in message else f"{kind}: {message}".strip()
    elif not data.get("finished") or returncode != 0:
        outcome, text = (
            "crashed",
            f"the smoke child stopped{where} (exit {returncode})" + (f":\n{tail}" if tail else ""),
        )
    else:
        outcome, text = "ok", ""
    checks = tuple(_check(item) for item in _list(data, "checks"))
    running = str(data.get("running_check") or "") if data else ""
    if outcome in ("signal", "timeout") and stage == "gemm" and running:
        # The GEMM that took the child down rules its own path out, like any failed check.
        text += f" (in the {running} check)"
        on_gpu = bool((data or {}).get("torch", {}).get("cuda_available")) and running != "cpu"
        crashed = SmokeCheck(
            name=running,
            device="cuda:0" if on_gpu else "cpu",
            status="failed",
            max_abs_error=Fact.absent("crashed", SOURCE),
            rel_error=Fact.absent("crashed", SOURCE),
            tolerance=0.0,
            detail=text.splitlines()[0],
            duration_ms=0.0,
        )
        checks = (*checks, crashed)
    broken = [c for c in checks if c.status in ("failed", "numerics")]
    if outcome == "ok" and broken:
        # A GEMM that was attempted (its support check passed) and failed is a failure.
        outcome, stage = "failed", "gemm"
        text = "\n".join(f"{c.name} on {c.device}: {c.status}: {c.detail}" for c in broken)
    torch = data.get("torch", {}) if data else {}
    return SmokeFacts(
        outcome=Fact.of(outcome, SOURCE),
        stage=Fact.of(stage, SOURCE)
        if stage and outcome != "ok"
        else Fact.absent("nothing failed", SOURCE),
        error_text=Fact.of(text, SOURCE) if text else Fact.absent("no error", SOURCE),
        python=python,
        duration_ms=round(duration_ms, 1),
        torch_cuda_available=_fact(torch, "cuda_available", bool),
        torch_device_capability=_fact(torch, "capability", ComputeCapability),
        torch_cudnn_version=_fact(torch, "cudnn", Version),
        te_support=tuple(_support(item) for item in _list(data, "te_support")),
        checks=checks,
        loaded_libraries=tuple(_library(item) for item in _list(data, "loaded_libraries")),
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _list(data: Mapping[str, Any] | None, key: str) -> list[Mapping[str, Any]]:
    items = data.get(key, []) if data else []
    return [item for item in items if isinstance(item, Mapping)] if isinstance(items, list) else []


def _fact(table: Mapping[str, Any], key: str, convert: Any) -> Fact[Any]:
    value = table.get(key)
    if value is None:
        return Fact.absent(f"the smoke child did not report torch {key}", SOURCE)
    return Fact.of(convert(value), SOURCE)


def _number(value: Any) -> Fact[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Fact.of(float(value), SOURCE)
    return Fact.absent("not measured", SOURCE)


def _support(item: Mapping[str, Any]) -> SupportCheck:
    return SupportCheck(
        recipe=str(item.get("recipe", "")),
        available=bool(item.get("available")),
        reason=str(item.get("reason", "")),
    )


def _check(item: Mapping[str, Any]) -> SmokeCheck:
    return SmokeCheck(
        name=str(item.get("name", "")),
        device=str(item.get("device", "")),
        status=str(item.get("status", "failed")),
        max_abs_error=_number(item.get("max_abs_error")),
        rel_error=_number(item.get("rel_error")),
        tolerance=float(item.get("tolerance") or 0.0),
        detail=str(item.get("detail", ""))[:2000],
        duration_ms=float(item.get("duration_ms") or 0.0),
    )


def _library(item: Mapping[str, Any]) -> LoadedLibrary:
    version = item.get("version")
    return LoadedLibrary(
        name=str(item.get("name", "")),
        path=str(item.get("path", "")),
        version=Fact.of(Version(str(version)), SOURCE)
        if version
        else Fact.absent("no version in the file name", SOURCE),
        origin=str(item.get("origin", "")),
    )
