"""Property-based fuzzing: the snapshot decoder, the rule loader, the condition parser and every
triage parser never raise anything but te-doctor's own error types on generated and mutated input,
and the text parsers stay linear-time on adversarial text.

CI runs the short, derandomized ``ci`` profile; ``HYPOTHESIS_PROFILE=fuzz`` (or
``benchmarks/fuzz.py``) runs 10,000 examples per target. Time is measured against a baseline taken
in the same run, so a busy machine slows both alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_targets import BAIT, LINEAR, OPERATORS, TARGETS, Target, fuzz_once

SLOW_INPUTS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
#: Adversarial text this long must parse within FACTOR times the plain-text time.
SIZE = {"condition-parser": 20_000}
DEFAULT_SIZE = 200_000
FACTOR = 25
PLAIN = "PyTorch version: 2.1.0\nsome words here and there\n"


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_generated_and_mutated_input_raises_only_own_errors(target: Target) -> None:
    @settings(suppress_health_check=SLOW_INPUTS)
    @given(target.inputs())
    def run(value: object) -> None:
        fuzz_once(target, value)

    run()


def adversarial(name: str, unit: str, size: int) -> str:
    """``unit`` repeated to ``size`` characters (a condition leaf keeps its head)."""
    body = (unit * (size // max(len(unit), 1) + 1))[:size]
    return f"gpu.name matches /{body}" if name == "condition-parser" else body


def plain(name: str, size: int) -> str:
    if name == "condition-parser":
        return f"gpu.name matches /{'a' * size}/"
    return (PLAIN * (size // len(PLAIN) + 1))[:size]


def seconds(parse: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    parse(text)
    return time.perf_counter() - start


def linear_examples() -> int:
    """A quarter of the profile's examples (each parses hundreds of kilobytes), 5 to 200."""
    return max(5, min(int(settings().max_examples) // 4, 200))


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_parser_stays_linear_on_adversarial_text(name: str) -> None:
    parse, size = LINEAR[name], SIZE.get(name, DEFAULT_SIZE)
    baseline = min(seconds(parse, plain(name, size)) for _ in range(3))
    budget = max(0.5, FACTOR * baseline)
    units = st.lists(
        st.one_of(
            st.sampled_from(BAIT), st.sampled_from(OPERATORS), st.text(min_size=1, max_size=3)
        ),
        min_size=1,
        max_size=6,
    ).map("".join)

    @settings(max_examples=linear_examples(), suppress_health_check=SLOW_INPUTS)
    @given(units)
    def run(unit: str) -> None:
        text = adversarial(name, unit, size)
        took = seconds(parse, text)
        if took >= budget:  # a busy machine can stall one run; a slow parser is slow every time
            took = min(took, *(seconds(parse, text) for _ in range(2)))
        assert took < budget, f"{name}: {took:.2f} s on {unit!r} x {size}, budget {budget:.2f} s"

    run()
