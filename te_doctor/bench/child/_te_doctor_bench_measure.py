"""Measuring one component: pre-flight on the CPU, timed steps, memory, error against FP32."""

from __future__ import annotations

import copy
import math
import resource
import time
from typing import Any

from _te_doctor_bench_modules import Component
from _te_doctor_bench_path import Path, Skip, TooSlow, describe
from _te_doctor_bench_timing import cpu_timed, cuda_timer, time_steps

PREFLIGHT_SIZE = 256


def relative_error(component: Component) -> float | None:
    """Forward output against the same modules in FP32 (the worst of several outputs)."""
    path, torch = component.path, component.path.torch
    with torch.no_grad():
        outputs = [out.float() for out in component.forward()]
        tf32 = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        original = component.modules
        try:
            path.reference = True
            component.modules = [copy.deepcopy(m).float() for m in original]
            references = [out.float() for out in component.forward()]
        finally:
            path.reference = False
            component.modules = original
            torch.backends.cuda.matmul.allow_tf32 = tf32
    worst = 0.0
    for out, ref in zip(outputs, references):  # noqa: B905 -- Python 3.8
        if not bool(torch.isfinite(out).all()):
            return None
        worst = max(worst, float((out - ref).norm() / ref.norm()))
    return worst if math.isfinite(worst) else None


def preflight(path: Path, step_flops: float, budget_s: float) -> None:
    """On the CPU: predict one step from a small GEMM in this precision; too slow -> skip."""
    torch, size = path.torch, PREFLIGHT_SIZE
    probe = path.linear(size, size)
    x = torch.randn(size, size, device=path.device, dtype=path.input_dtype)
    with torch.no_grad(), path.forward_context():
        probe(x)
        started = time.perf_counter()
        probe(x)
        seconds = time.perf_counter() - started
    rate = 2 * size**3 / max(seconds, 1e-9)
    predicted = step_flops / rate  # the whole step at the forward GEMM's rate
    if predicted > budget_s:
        shown = f"{predicted:.0f}" if predicted >= 10 else f"{predicted:.3g}"
        raise TooSlow(
            f"a {size}x{size}x{size} GEMM in this precision runs at {rate / 1e9:.3g} GFLOP/s "
            f"here, so one step would take about {shown} s, over the budget of "
            f"{budget_s:.3g} s"
        )


def memory_used(torch: Any, device: str) -> tuple[int | None, str]:
    if device.startswith("cuda"):
        return int(torch.cuda.max_memory_allocated()), "cuda-peak-allocated"
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024, "peak-rss"


def measure_component(path: Path, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Build, time and check one component; never raises."""
    torch = path.torch
    component: Component | None = None
    entry: dict[str, Any] = {
        "name": name,
        "status": "ok",
        "reason": "",
        "warmup_s": [],
        "samples_s": [],
        "memory_bytes": None,
        "memory_kind": "",
        "rel_error": None,
        "error_detail": "",
    }
    cuda = path.device.startswith("cuda")
    try:
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        else:
            preflight(path, float(spec["components"][name]), float(spec["budget_s"]))
        component = Component(path, name, spec["workload"])
        timed = cuda_timer(torch) if cuda else cpu_timed
        warm, samples, note = time_steps(
            component.step,
            timed,
            warmup=int(spec["warmup"]),
            repeats=int(spec["repeats"]),
            budget_s=float(spec["budget_s"]),
        )
        entry.update(warmup_s=warm, samples_s=samples, reason=note)
        entry["memory_bytes"], entry["memory_kind"] = memory_used(torch, path.device)
        try:
            entry["rel_error"] = relative_error(component)
        except Exception as exc:  # noqa: BLE001 -- the timing stands without the check
            entry["error_detail"] = f"no FP32 reference: {describe(exc)}"
    except Skip as exc:
        entry.update(status="skipped", reason=str(exc))
    except TooSlow as exc:
        entry.update(status="too-slow", reason=str(exc))
    except Exception as exc:  # noqa: BLE001 -- a failing component is a result
        out_of_memory = "out of memory" in str(exc).lower()
        entry.update(status="oom" if out_of_memory else "failed", reason=describe(exc))
    finally:
        component = None  # free the modules before the next component
        if cuda:
            torch.cuda.empty_cache()
    return entry
