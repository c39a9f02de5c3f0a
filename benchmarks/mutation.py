"""Mutation testing of the core with mutmut: how many plausible one-line bugs the tests catch.

An instrument, not a CI gate. For each group of core modules it copies the checkout to a
scratch directory, points mutmut at those modules and at the fast test files that exercise
them, runs it, and prints killed / survived per module and the survivors (minus the ones listed
in ``EQUIVALENT``, which no test can tell apart). mutmut runs in its own virtual environment
(created on first use under the scratch directory), because an editable install of te-doctor
would import the unmutated code.

    python benchmarks/mutation.py [--group NAME ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Group -> (modules to mutate, test files that exercise them).
GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "conditions": (
        ("te_doctor/engine/conditions.py",),
        ("tests/test_conditions.py", "tests/test_core_edges.py", "tests/test_rules.py"),
    ),
    "engine": (
        ("te_doctor/engine/evaluate.py",),
        ("tests/test_core_edges.py", "tests/test_expected_results.py"),
    ),
    "recommend-gate": (
        ("te_doctor/engine/recommend.py", "te_doctor/check/report.py"),
        ("tests/test_core_edges.py", "tests/test_expected_results.py", "tests/test_scenarios.py"),
    ),
    "flatten": (
        ("te_doctor/engine/flatten.py",),
        ("tests/test_flatten.py", "tests/test_core_edges.py", "tests/test_expected_results.py"),
    ),
    "nvidia-probe": (
        ("te_doctor/probes/nvidia.py",),
        ("tests/test_probe_nvidia.py", "tests/test_core_edges.py"),
    ),
    "collect-env": (
        ("te_doctor/triage/parse_collect_env.py",),
        ("tests/test_triage_parsers.py", "tests/test_core_edges.py"),
    ),
}
#: Survivors that change nothing a caller can observe, with the reason.
EQUIVALENT: dict[str, str] = {}
TOOLS = ("click", "packaging", "nvidia-ml-py", "pytest", "jsonschema", "pyyaml", "mutmut")


def _venv(scratch: Path) -> Path:
    python = scratch / "venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(scratch / "venv")], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *TOOLS], check=True)
    return python


def _config(files: Sequence[str], modules: Sequence[str], tests: Sequence[str]) -> str:
    """mutmut settings: the whole package is copied, only ``modules`` are mutated."""

    def toml_list(items: Sequence[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    others = [f for f in files if f.startswith("te_doctor/") and f.endswith(".py")]
    return (
        "\n[tool.mutmut]\n"
        'paths_to_mutate = ["te_doctor/"]\n'
        f"do_not_mutate = {toml_list([f for f in others if f not in modules])}\n"
        f"tests_dir = {toml_list(tests)}\n"
        'also_copy = ["rules", "tests", "README.md", "benchmarks"]\n'
        'pytest_add_cli_args = ["-x", "-q", "-p", "no:cacheprovider"]\n'
    )


def run_group(name: str, scratch: Path, python: Path) -> dict[str, str]:
    """mutant id -> status (killed, survived, no tests, timeout) for one group."""
    modules, tests = GROUPS[name]
    work = scratch / name
    shutil.rmtree(work, ignore_errors=True)
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for file in files:
        (work / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / file, work / file)
    with (work / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write(_config(files, modules, tests))
    mutmut = python.parent / "mutmut"
    subprocess.run([str(mutmut), "run"], cwd=work, capture_output=True, check=False)
    listing = subprocess.run(
        [str(mutmut), "results", "--all", "true"], cwd=work, capture_output=True, text=True
    ).stdout
    statuses = {}
    for line in listing.splitlines():
        mutant, _, status = line.strip().partition(": ")
        if "__mutmut_" in mutant:
            statuses[mutant] = status.strip()
    return statuses


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", action="append", choices=sorted(GROUPS), help="default: all")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--scratch", type=Path, help="reuse this directory (and its venv)")
    args = parser.parse_args(argv)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="te-doctor-mutation-"))
    python = _venv(scratch)
    results: dict[str, dict[str, str]] = {}
    for name in args.group or sorted(GROUPS):
        results[name] = run_group(name, scratch, python)
        counts = Counter(results[name].values())
        judged = counts["killed"] + counts["survived"]
        share = counts["killed"] / judged if judged else 0.0
        print(
            f"{name:<16} killed {counts['killed']:>4}  survived {counts['survived']:>4}  "
            f"no tests {counts['no tests']:>3}  killed {share:.0%}"
        )
        for mutant, status in sorted(results[name].items()):
            if status == "survived" and mutant not in EQUIVALENT:
                print(f"    survived: {mutant}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
