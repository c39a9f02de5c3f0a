"""What the samples say: median and spread, TFLOP/s, percent of peak, speed-up, the verdict.

Pure: a function of the raw record and the table of datasheet peaks.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from te_doctor.bench.peaks import GpuPeaks, peak_for
from te_doctor.bench.record import BenchRun, BenchSettings, ComponentRun, PathRun
from te_doctor.bench.stability import (
    MIN_SAMPLES,
    UNSTABLE_SPREAD,
    instability,
    relative_spread,
    rerun_advice,
)
from te_doctor.bench.workload import COMPONENTS

#: The precision whose tensor-core peak each path is measured against.
PRECISION = {
    "te-nvfp4": "fp4",
    "te-mxfp8": "fp8",
    "te-fp8-block": "fp8",
    "te-fp8-current": "fp8",
    "te-fp8-delayed": "fp8",
    "torch-fp8": "fp8",
    "te-bf16": "bf16",
    "torch-amp-bf16": "bf16",
    "te-fp16": "fp16",
    "torch-amp-fp16": "fp16",
    "torch-fp32": "tf32",
    "cpu": "fp32",
    "cpu-bf16": "bf16",
}
#: Relative error of the forward output against FP32 that each precision may show
#: (the smoke test's tolerances, te_doctor/smoke/child.py).
TOLERANCE = {"fp4": 0.25, "fp8": 0.1, "bf16": 0.02, "fp16": 0.01, "tf32": 0.01, "fp32": 0.01}
LOW_PRECISION = ("fp8", "fp4")
#: Speed-up over BF16 from which FP8 is worth its complexity, and below which it is not.
WORTH_IT = 1.2
NOT_WORTH = 1.05


@dataclass(frozen=True, slots=True)
class Timing:
    """Median and spread of the timed steps, in seconds."""

    median_s: float
    q1_s: float
    q3_s: float
    min_s: float
    max_s: float
    count: int


@dataclass(frozen=True, slots=True)
class ComponentResult:
    """One path on one component, judged."""

    path: str
    device: str
    component: str
    precision: str
    status: str
    reason: str
    timing: Timing | None
    tflops: float | None
    percent_of_peak: float | None
    peak_note: str
    baseline: str
    speedup: float | None
    rel_error: float | None
    tolerance: float
    memory_bytes: int | None
    memory_kind: str
    #: Half the interquartile range over the median; None without a timing.
    spread: float | None = None
    #: Why the row is too unsteady to compare ("" when steady): no speed-up from it.
    unstable: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether FP8 is worth it here, the numbers it rests on, and the thresholds."""

    kind: str
    text: str
    path: str
    component: str
    speedup: float | None


@dataclass(frozen=True, slots=True)
class BenchAnalysis:
    """Every component result and the verdict."""

    results: tuple[ComponentResult, ...]
    verdict: Verdict


def timing_of(samples: Sequence[float]) -> Timing | None:
    """Median, quartiles and extremes; None without samples."""
    if not samples:
        return None
    if len(samples) == 1:
        (only,) = samples
        return Timing(only, only, only, only, only, 1)
    q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return Timing(median, q1, q3, min(samples), max(samples), len(samples))


def analyse(run: BenchRun, peaks: Sequence[GpuPeaks]) -> BenchAnalysis:
    """Judge every measured component and reach the verdict."""
    results = [_result(run, p, c, peaks) for p in run.paths for c in p.components]
    with_speedups = tuple(_with_speedup(result, results) for result in results)
    return BenchAnalysis(with_speedups, verdict(with_speedups, run.paths, run.settings))


def _result(
    run: BenchRun, path: PathRun, component: ComponentRun, peaks: Sequence[GpuPeaks]
) -> ComponentResult:
    precision = PRECISION.get(path.id, "fp32")
    timing = timing_of(component.samples_s) if component.status == "ok" else None
    tflops = component.flops / timing.median_s / 1e12 if timing and timing.median_s > 0 else None
    percent, note = None, ""
    if path.device == "cpu":
        note = "CPU: te-doctor has no peak figures for CPUs"
    elif tflops is not None:
        peak, note = peak_for(peaks, path.device_name or run.machine.gpu, precision)
        percent = 100 * tflops / peak if peak else None
    spread = relative_spread(timing.median_s, timing.q1_s, timing.q3_s) if timing else None
    return ComponentResult(
        path=path.id,
        device=path.device,
        component=component.name,
        precision=precision,
        status=component.status,
        reason=component.reason or component.error_detail,
        timing=timing,
        tflops=tflops,
        percent_of_peak=percent,
        peak_note=note,
        baseline="",
        speedup=None,
        rel_error=component.rel_error,
        tolerance=TOLERANCE[precision],
        memory_bytes=component.memory_bytes,
        memory_kind=component.memory_kind,
        spread=spread,
        unstable=instability(spread, timing.count) if timing and spread is not None else "",
    )


def baseline_order(path_id: str) -> tuple[str, ...]:
    """The BF16 path a path is compared with: TE's for TE paths, else torch autocast's."""
    if path_id.startswith("te-"):
        return ("te-bf16", "torch-amp-bf16", "cpu-bf16")
    return ("torch-amp-bf16", "te-bf16", "cpu-bf16")


def _with_speedup(result: ComponentResult, results: Sequence[ComponentResult]) -> ComponentResult:
    if result.timing is None:
        return result
    measured = {
        r.path: r
        for r in results
        if r.component == result.component and r.device == result.device and r.timing
    }
    base = next((measured[p] for p in baseline_order(result.path) if p in measured), None)
    if base is None or base.timing is None:
        return result
    if result.unstable or base.unstable:  # no ratio from a row that is not steady
        return replace(result, baseline=base.path)
    return replace(
        result, baseline=base.path, speedup=base.timing.median_s / result.timing.median_s
    )


def verdict(
    results: Sequence[ComponentResult], paths: Sequence[PathRun], settings: BenchSettings
) -> Verdict:
    """The best FP8/FP4 speed-up over BF16 on the largest component measured for both.

    Only steady rows count: with FP8 measured against BF16 but every such pair unstable, the
    verdict is "unstable" and says how to measure again.
    """
    low = [r for r in results if r.precision in LOW_PRECISION and r.speedup is not None]
    on_cpu = any(p.device == "cpu" for p in paths) and not any(p.device == "cuda" for p in paths)
    prefix = "On the CPU (this says nothing about a GPU): " if on_cpu else ""
    withheld = [r for r in results if r.precision in LOW_PRECISION and r.timing and r.baseline]
    if not low and any(r.speedup is None for r in withheld):
        rows = ", ".join(f"{r.path} {r.component}" for r in withheld)
        text = (
            f"{prefix}no speed-up is claimed: the timings of {rows} or of their BF16 baseline "
            f"are unstable (spread over ±{UNSTABLE_SPREAD:.0%} or under {MIN_SAMPLES} timed "
            f"steps); {rerun_advice(settings)}."
        )
        return Verdict("unstable", text, "", "", None)
    if not low:
        tried = [r for r in results if r.precision in LOW_PRECISION]
        if not tried:
            return Verdict("no-fp8", f"{prefix}no FP8 path was benchmarked.", "", "", None)
        # One reason per path, its smallest component's; measured ones lack only a baseline.
        first = {r.path: r.reason for r in reversed(tried) if r.timing is None and r.reason}
        why = "; ".join(f"{path}: {reason}" for path, reason in first.items())
        return Verdict(
            "no-fp8",
            f"{prefix}no FP8 result to compare with BF16 ({why or 'no BF16 baseline measured'}).",
            "",
            "",
            None,
        )
    component = max((r.component for r in low), key=COMPONENTS.index)
    best = max((r for r in low if r.component == component), key=lambda r: r.speedup or 0.0)
    speedup = best.speedup or 0.0
    said = (
        f"{best.path} is {speedup:.2f}x {'faster than' if speedup >= 1 else 'the speed of'} "
        f"{best.baseline} for these shapes ({component}, forward + backward)"
    )
    if best.rel_error is None or best.rel_error > best.tolerance:
        error = "not finite" if best.rel_error is None else f"{best.rel_error:.3g}"
        text = f"{said}, but its error against FP32 is {error} (tolerance {best.tolerance}): "
        return Verdict(
            "numerics", f"{prefix}{text}fix the numbers first.", best.path, component, speedup
        )
    thresholds = f"worth it from {WORTH_IT:.2f}x, not below {NOT_WORTH:.2f}x"
    if speedup >= WORTH_IT:
        kind, advice = "worth-it", "worth it"
    elif speedup >= NOT_WORTH:
        kind, advice = "marginal", "marginal: worth it only if BF16 is the bottleneck"
    else:
        kind, advice = "stay-on-bf16", "not worth it: stay on BF16"
    return Verdict(kind, f"{prefix}{said}: {advice} ({thresholds}).", best.path, component, speedup)
