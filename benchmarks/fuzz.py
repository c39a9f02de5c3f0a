"""Property-based fuzzing at depth: at least 10,000 examples per target.

Run ``python benchmarks/fuzz.py [--examples N] [--target NAME ...]`` from the repository root.
Each target of ``tests/fuzz_targets.py`` (the snapshot decoder, the rule loader, the condition
parser, every triage parser) gets N generated and mutated inputs (default 10,000); anything it
raises beyond te-doctor's own error types is a failure, shrunk by hypothesis to a minimal input
and printed. The counts are the examples that really ran, per target. Randomized: each run
explores new inputs (``--seed`` repeats one).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fuzz_targets

from tests.fuzz_targets import TARGETS, Target, fuzz_once, register_profiles  # noqa: E402


def fuzz(target: Target, examples: int, chosen_seed: int | None) -> tuple[int, str]:
    """Run ``target`` for ``examples`` inputs: (how many ran, the failure or "")."""
    ran = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(target.inputs())
    def run(value: object) -> None:
        nonlocal ran
        ran += 1
        fuzz_once(target, value)

    if chosen_seed is not None:
        run = seed(chosen_seed)(run)
    try:
        run()
    except Exception as exc:  # noqa: BLE001 - a failure found is the result, reported
        return ran, f"{type(exc).__name__}: {exc}"
    return ran, ""


def main() -> None:
    """Fuzz every target (or the named ones) and print the counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--target", action="append", choices=[t.name for t in TARGETS])
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    register_profiles()
    failures = 0
    print(f"{'target':<24} {'examples':>9} {'seconds':>8}  result")
    for target in TARGETS:
        if args.target and target.name not in args.target:
            continue
        started = time.perf_counter()
        ran, failure = fuzz(target, args.examples, args.seed)
        took = time.perf_counter() - started
        failures += bool(failure)
        result = failure.splitlines()[0][:200] if failure else "no failure"
        print(f"{target.name:<24} {ran:>9} {took:>8.1f}  {result}", flush=True)
        if failure:
            print(failure, flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
