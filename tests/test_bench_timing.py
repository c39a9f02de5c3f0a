"""The bench child's timing method, without torch: warm-up apart, median recovered, budget kept."""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest

from te_doctor.bench.analysis import timing_of


@pytest.fixture(scope="module")
def child() -> ModuleType:
    """The standalone child's timing module, imported by name as the child imports it."""
    return importlib.import_module("_te_doctor_bench_timing")


def scripted(durations: list[float]) -> Callable[[Callable[[], None]], float]:
    """A ``timed`` that runs the step and reports the next scripted duration."""
    queue: Iterator[float] = iter(durations)

    def timed(step: Callable[[], None]) -> float:
        step()
        return next(queue)

    return timed


def test_warmup_steps_are_kept_out_of_the_samples(child: ModuleType) -> None:
    calls: list[int] = []
    timed = scripted([9.0, 5.0, 1.0, 1.2, 0.8])
    warm, samples, note = child.time_steps(
        lambda: calls.append(1), timed, warmup=2, repeats=3, budget_s=100.0
    )
    assert warm == [9.0, 5.0] and samples == [1.0, 1.2, 0.8] and note == ""
    assert len(calls) == 5


def test_a_known_delay_is_recovered_as_the_median(child: ModuleType) -> None:
    """A real sleep: slow first steps (like kernel selection) must not move the median."""
    delay, first = 0.02, 0.15
    steps = iter([first, first] + [delay] * 7)
    warm, samples, _ = child.time_steps(
        lambda: time.sleep(next(steps)), child.cpu_timed, warmup=2, repeats=7, budget_s=30.0
    )
    assert min(warm) >= first
    # The timer sees the step, not the slow warm-up: a bound far from both, so load cannot flip it.
    assert delay <= statistics.median(samples) < (delay + first) / 2
    timing = timing_of(samples)
    assert timing is not None and timing.count == 7
    assert timing.min_s <= timing.q1_s <= timing.median_s <= timing.q3_s <= timing.max_s


def test_repeats_shrink_to_fit_the_budget(child: ModuleType) -> None:
    timed = scripted([2.0, 3.0, 3.0, 3.0, 3.0])
    warm, samples, note = child.time_steps(lambda: None, timed, warmup=2, repeats=10, budget_s=15.0)
    assert (warm, samples) == ([2.0, 3.0], [3.0, 3.0, 3.0])  # (15 - 5) / 3 = 3 fit
    assert note == "3 of 10 repeats: one step takes 3 s, budget 15 s"


def test_at_least_one_sample_even_when_the_warmup_used_the_budget(child: ModuleType) -> None:
    warm, samples, _ = child.time_steps(
        lambda: None, scripted([4.0, 4.0]), warmup=1, repeats=5, budget_s=5.0
    )
    assert (warm, samples) == ([4.0], [4.0])


def test_a_first_step_over_the_budget_is_too_slow(child: ModuleType) -> None:
    with pytest.raises(child.TooSlow, match="one step took 12 s, over the budget of 5 s"):
        child.time_steps(lambda: None, scripted([12.0]), warmup=3, repeats=5, budget_s=5.0)


def test_timing_of_one_and_no_samples() -> None:
    assert timing_of([]) is None
    one = timing_of([0.5])
    assert one is not None and (one.median_s, one.q1_s, one.q3_s, one.count) == (0.5, 0.5, 0.5, 1)
    four = timing_of([1.0, 2.0, 3.0, 4.0])
    assert four is not None and (four.q1_s, four.median_s, four.q3_s) == (1.75, 2.5, 3.25)
