"""Whether a measured row is steady enough to compare: spread, sample count, rerun advice.

A row's spread is half its interquartile range over its median. Above ``UNSTABLE_SPREAD``, or
with fewer than ``MIN_SAMPLES`` timed steps, the row is unstable: the analysis computes no
speed-up from it (as the row or as the BF16 baseline), the verdict rests on none, the plot
draws no bar for it, and the report says how to measure again.
"""

from __future__ import annotations

from te_doctor.bench.record import BenchSettings

#: Half the interquartile range over the median above which a row is not compared.
UNSTABLE_SPREAD = 0.10
#: Fewer timed steps than this give no spread worth the name.
MIN_SAMPLES = 3


def relative_spread(median_s: float, q1_s: float, q3_s: float) -> float:
    """Half the interquartile range over the median (0 for a zero median)."""
    return (q3_s - q1_s) / 2 / median_s if median_s > 0 else 0.0


def instability(spread: float, count: int) -> str:
    """Why a row with this spread and sample count is unstable; "" when it is steady."""
    if count < MIN_SAMPLES:
        return f"only {count} timed step(s), fewer than {MIN_SAMPLES}"
    if spread > UNSTABLE_SPREAD:
        return f"spread ±{spread:.0%} is over ±{UNSTABLE_SPREAD:.0%}"
    return ""


def rerun_advice(settings: BenchSettings) -> str:
    """The options that measure longer: twice the repeats and warm-up (at least 20 and 10)."""
    repeats = max(2 * settings.repeats, 20)
    warmup = max(2 * settings.warmup, 10)
    advice = f"rerun with --repeats {repeats} --warmup {warmup}"
    return (
        advice + f" --time-budget {2 * settings.budget_s:g}" if settings.budget_s < 120 else advice
    )
