"""The bench child's timing method, without torch: warm-up apart, median recovered, budget kept."""

from __future__ import annotations

import importlib
import itertools
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


def test_warmup_goes_on_until_the_step_time_settles(child: ModuleType) -> None:
    """Two warm-up steps asked for, but the time is still falling: warm up until three agree."""
    calls: list[int] = []
    timed = scripted([9.0, 5.0, 1.0, 1.01, 0.99, 1.0, 1.2, 0.8])
    warm, samples, note = child.time_steps(
        lambda: calls.append(1), timed, warmup=2, repeats=3, budget_s=100.0
    )
    assert warm == [9.0, 5.0, 1.0, 1.01, 0.99] and samples == [1.0, 1.2, 0.8] and note == ""
    assert len(calls) == 8


def test_a_warmup_that_never_settles_says_so(child: ModuleType) -> None:
    noisy = [1.0, 2.0] * 20
    warm, samples, note = child.time_steps(
        lambda: None, scripted(noisy), warmup=2, repeats=3, budget_s=1000.0
    )
    assert len(warm) == 12 and len(samples) == 3  # the cap: warmup + 10
    assert note == "the warm-up did not settle in 12 steps"


def test_a_known_delay_is_recovered_as_the_median(child: ModuleType) -> None:
    """A real sleep: slow first steps (like kernel selection) must not move the median."""
    delay, first = 0.02, 0.15
    steps = itertools.chain([first, first], itertools.repeat(delay))
    warm, samples, _ = child.time_steps(
        lambda: time.sleep(next(steps)), child.cpu_timed, warmup=2, repeats=7, budget_s=30.0
    )
    assert min(warm[:2]) >= first and len(warm) >= 3  # on until the delays agree (or the cap)
    # The timer sees the step, not the slow warm-up: a bound far from both, so load cannot flip it.
    assert delay <= statistics.median(samples) < (delay + first) / 2
    timing = timing_of(samples)
    assert timing is not None and timing.count == 7
    assert timing.min_s <= timing.q1_s <= timing.median_s <= timing.q3_s <= timing.max_s


def test_repeats_shrink_to_fit_the_budget(child: ModuleType) -> None:
    timed = scripted([3.0, 3.0, 3.0, 3.0, 3.0])
    warm, samples, note = child.time_steps(lambda: None, timed, warmup=2, repeats=10, budget_s=15.0)
    assert (warm, samples) == ([3.0, 3.0, 3.0], [3.0, 3.0])  # (15 - 9) / 3 = 2 fit
    assert note == "2 of 10 repeats: one step takes 3 s, budget 15 s"


def test_at_least_one_sample_even_when_the_warmup_used_the_budget(child: ModuleType) -> None:
    warm, samples, note = child.time_steps(
        lambda: None, scripted([4.0, 4.0]), warmup=1, repeats=5, budget_s=5.0
    )
    assert (warm, samples) == ([4.0], [4.0])  # half the budget gone: no more warm-up
    assert note.startswith("the warm-up did not settle in 1 steps; 1 of 5 repeats")


def test_a_first_step_over_the_budget_is_too_slow(child: ModuleType) -> None:
    with pytest.raises(child.TooSlow, match="one step took 12 s, over the budget of 5 s"):
        child.time_steps(lambda: None, scripted([12.0]), warmup=3, repeats=5, budget_s=5.0)


def test_timing_of_one_and_no_samples() -> None:
    assert timing_of([]) is None
    one = timing_of([0.5])
    assert one is not None and (one.median_s, one.q1_s, one.q3_s, one.count) == (0.5, 0.5, 0.5, 1)
    four = timing_of([1.0, 2.0, 3.0, 4.0])
    assert four is not None and (four.q1_s, four.median_s, four.q3_s) == (1.75, 2.5, 3.25)
