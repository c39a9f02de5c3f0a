"""Time te-doctor against PyTorch's ``collect_env`` for one interpreter, side by side.

What is timed, for every command, is the wall time of a whole process, start-up included:

- ``te-doctor probe --python PATH``: asks PATH only for its search path and reads its packages
  from disk (nothing imported);
- ``te-doctor check --no-smoke --python PATH``: the probe plus every rule;
- ``te-doctor check --python PATH``: the same plus the smoke test, a child of PATH that imports
  torch (and TE) and runs the real GEMMs;
- ``PATH -m torch.utils.collect_env``: imports torch in PATH.

te-doctor runs from bytecode, as ``pip install`` leaves it (and as torch's modules are): the
script compiles the package first, since a checkout run with ``PYTHONDONTWRITEBYTECODE=1``
would otherwise compile every module on every run. Runs rotate the order each round, so drift
in machine load hits all alike. PATH defaults to the broken-TE venv that
``tests/test_real_installs.py`` builds, when it exists, else this interpreter.

Usage: ``python benchmarks/compare_with_collect_env.py [--python PATH] [--repeat N]``.
Exit status 2 when torch is not installed for PATH.
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def default_python() -> str:
    """The test suite's broken-TE venv if it has been built, else this interpreter."""
    sys.path.insert(0, str(REPO))  # run as a script, so the repository is not on sys.path
    from tests.real_venv import venv_dir, venv_python

    python = venv_python(venv_dir())
    return str(python) if python.exists() else sys.executable


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def has_torch(python: str) -> bool:
    """True when ``import torch`` would find a torch distribution for ``python``."""
    check = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"
    return subprocess.run([python, "-c", check], capture_output=True, check=False).returncode == 0


def wall_time(argv: Sequence[str]) -> float:
    """Seconds one process takes from start to exit; its failure aborts the benchmark."""
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {result.returncode}:\n{result.stderr[-2000:]}")
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options, run both commands ``--repeat`` times each, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--python", metavar="PATH", help="interpreter to diagnose")
    parser.add_argument("--repeat", type=positive_int, default=5, help="runs of each (5)")
    args = parser.parse_args(argv)
    python: str = args.python or default_python()
    if not has_torch(python):
        print(f"torch is not installed for {python}: collect_env cannot run", file=sys.stderr)
        return 2

    compileall.compile_dir(REPO / "te_doctor", quiet=1)
    te_doctor = [sys.executable, "-m", "te_doctor"]
    check = [*te_doctor, "check", "--fail-on", "never", "--python", python]
    commands = {
        "te-doctor probe": [*te_doctor, "probe", "--format", "json", "--python", python],
        "check --no-smoke": [*check, "--no-smoke"],
        "check (smoke)": check,
        "torch collect_env": [python, "-m", "torch.utils.collect_env"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for round_ in range(args.repeat):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(wall_time(commands[name]))

    print(f"interpreter: {python}")
    print(f"{args.repeat} runs each, alternating; whole-process wall time in seconds")
    print(f"{'':<20}{'median':>9}{'min':>9}{'max':>9}")
    for name, samples in times.items():
        print(
            f"{name:<20}{statistics.median(samples):>9.3f}{min(samples):>9.3f}{max(samples):>9.3f}"
        )
    baseline = statistics.median(times["torch collect_env"])
    for name in names[:-1]:
        print(f"{name} / collect_env (medians): {statistics.median(times[name]) / baseline:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
