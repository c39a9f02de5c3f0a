"""How long evaluating the whole rule set takes: one snapshot, and 10,000 snapshots.

Run ``python benchmarks/rule_evaluation.py [--snapshots N]``. It loads the shipped rules once,
then, side by side in one run:

* evaluates every rule on each recorded machine (``tests/fixtures``), 200 times each, and
  reports the median time per snapshot (flattening excluded, then included);
* evaluates N snapshots (default 10,000: the fixtures cycled) end to end, flattening included,
  as a fleet check would, and reports total and per-snapshot time.

Loading and parsing the rules (done once per process) is timed separately.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from te_doctor.check.pipeline import load_rule_set
from te_doctor.engine.evaluate import evaluate
from te_doctor.engine.flatten import flatten
from te_doctor.snapshot.file import load

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"


def main() -> None:
    """Print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=10_000)
    args = parser.parse_args()

    started = time.perf_counter()
    rules, _paths = load_rule_set()
    load_ms = (time.perf_counter() - started) * 1000
    snapshots = [load(path) for path in sorted(FIXTURES.glob("*.json"))]
    print(
        f"{len(rules)} rules, loaded and parsed in {load_ms:.1f} ms; "
        f"{len(snapshots)} recorded machines"
    )

    eval_only, with_flatten = [], []
    for snapshot in snapshots:
        facts = flatten(snapshot)
        for _ in range(200):
            t0 = time.perf_counter()
            evaluate(facts, rules)
            t1 = time.perf_counter()
            evaluate(flatten(snapshot), rules)
            t2 = time.perf_counter()
            eval_only.append(t1 - t0)
            with_flatten.append(t2 - t1)
    print(
        f"one snapshot, all rules:      median {statistics.median(eval_only) * 1000:.3f} ms "
        f"(max {max(eval_only) * 1000:.3f} ms)"
    )
    print(f"one snapshot, flatten + rules: median {statistics.median(with_flatten) * 1000:.3f} ms")

    started = time.perf_counter()
    fired = 0
    for i in range(args.snapshots):
        findings = evaluate(flatten(snapshots[i % len(snapshots)]), rules)
        fired += sum(f.fired for f in findings)
    total = time.perf_counter() - started
    print(
        f"{args.snapshots} snapshots end to end: {total:.2f} s "
        f"({total / args.snapshots * 1000:.3f} ms each, {fired} findings fired)"
    )


if __name__ == "__main__":
    main()
