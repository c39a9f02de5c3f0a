"""Timing one training step: warm-up kept apart, CUDA events on a GPU, perf_counter on the CPU."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from _te_doctor_bench_path import TooSlow


def time_steps(
    step: Callable[[], None],
    timed: Callable[[Callable[[], None]], float],
    *,
    warmup: int,
    repeats: int,
    budget_s: float,
) -> tuple[list[float], list[float], str]:
    """Run ``warmup`` then up to ``repeats`` timed steps: (warm-up times, samples, note).

    ``timed(step)`` runs one step and returns its duration in seconds, synchronised. The
    samples are shortened to what the budget allows after the warm-up, never below one.
    """
    warm = [timed(step)]
    if warm[0] > budget_s:
        raise TooSlow(f"one step took {warm[0]:.3g} s, over the budget of {budget_s:.3g} s")
    warm += [timed(step) for _ in range(warmup - 1)]
    left = budget_s - sum(warm)
    fit = int(left / warm[-1]) if warm[-1] > 0 else repeats
    count = min(repeats, max(1, fit))
    note = ""
    if count < repeats:
        note = f"{count} of {repeats} repeats: one step takes {warm[-1]:.3g} s"
        note += f", budget {budget_s:.3g} s"
    return warm, [timed(step) for _ in range(count)], note


def cpu_timed(step: Callable[[], None]) -> float:
    started = time.perf_counter()
    step()
    return time.perf_counter() - started


def cuda_timer(torch: Any) -> Callable[[Callable[[], None]], float]:
    """Time a step between two CUDA events, the device idle before it starts."""

    def timed(step: Callable[[], None]) -> float:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        step()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1000.0

    return timed
