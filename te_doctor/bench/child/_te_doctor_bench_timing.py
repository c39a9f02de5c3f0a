"""Timing one training step: warm-up kept apart, CUDA events on a GPU, perf_counter on the CPU."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from _te_doctor_bench_path import TooSlow

#: Warm-up ends once the last SETTLE_WINDOW steps lie within SETTLE_TOLERANCE of their median
#: (caches, kernel selection and clocks have settled), and never before ``warmup`` steps.
SETTLE_WINDOW = 3
SETTLE_TOLERANCE = 0.05


def settled(times: list[float]) -> bool:
    """The last ``SETTLE_WINDOW`` step times agree within ``SETTLE_TOLERANCE`` of their median."""
    last = sorted(times[-SETTLE_WINDOW:])
    if len(last) < SETTLE_WINDOW:
        return False
    middle = last[len(last) // 2]
    return middle > 0 and (last[-1] - last[0]) <= SETTLE_TOLERANCE * middle


def time_steps(
    step: Callable[[], None],
    timed: Callable[[Callable[[], None]], float],
    *,
    warmup: int,
    repeats: int,
    budget_s: float,
) -> tuple[list[float], list[float], str]:
    """Warm up until the step time settles, then up to ``repeats`` timed steps.

    Returns (warm-up times, samples, note). ``timed(step)`` runs one step and returns its
    duration in seconds, synchronised. Warm-up runs at least ``warmup`` steps and goes on until
    ``settled`` or a cap (three times ``warmup``, at least ``warmup`` + 10, at most half the
    budget); every warm-up time is kept and the note says when it never settled. The samples
    are shortened to what the budget allows after the warm-up, never below one; none is
    dropped.
    """
    warm = [timed(step)]
    if warm[0] > budget_s:
        raise TooSlow(f"one step took {warm[0]:.3g} s, over the budget of {budget_s:.3g} s")
    cap = max(3 * warmup, warmup + 10)
    while len(warm) < warmup or (
        not settled(warm) and len(warm) < cap and sum(warm) < budget_s / 2
    ):
        warm.append(timed(step))
    notes = []
    if not settled(warm):
        notes.append(f"the warm-up did not settle in {len(warm)} steps")
    left = budget_s - sum(warm)
    fit = int(left / warm[-1]) if warm[-1] > 0 else repeats
    count = min(repeats, max(1, fit))
    if count < repeats:
        notes.append(
            f"{count} of {repeats} repeats: one step takes {warm[-1]:.3g} s, "
            f"budget {budget_s:.3g} s"
        )
    return warm, [timed(step) for _ in range(count)], "; ".join(notes)


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
