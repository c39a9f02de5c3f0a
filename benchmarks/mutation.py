"""Mutation testing of the core with mutmut: how many plausible one-line bugs the tests catch.

An instrument, not a CI gate. For each group of core modules it copies the checkout to a
scratch directory, points mutmut at those modules and at the fast test files that exercise
them, runs it with one worker, and prints killed / survived per group and every survivor that
``benchmarks/mutation_equivalents.md`` does not explain.

How the figures are kept true:

* every mutant's tests run in a process forked from one that has imported pytest and the
  third-party libraries but neither te_doctor nor a test module (mutmut's ``forkserver``
  isolation, ``import`` warm-up). mutmut's default forks each mutant from the process that
  ran the unmutated suite, so a test module's import-time data (``RULES = load_rules(...)``)
  and every cache in te_doctor were inherited, computed by the original code, and a mutant
  that broke them went unseen;
* ``benchmarks/mutation_plugin.py`` charges the calls made while a test module is imported
  to all of that module's tests, so mutmut's per-function test choice includes them;
* a mutant that makes a test module fail to import counts as killed, not as "interrupted" or
  a usage error (the plugin again);
* the statuses are read from mutmut's own records, so an exception in mutmut's runner (exit
  code 255) is shown as an error, not counted as the "timeout" mutmut reports for it.

mutmut runs from this interpreter's environment (``pip install -e . --group dev``); the mutated
copy comes first on ``sys.path``, and mutmut's forced-fail check stops the run if the tests
imported anything else.

    python benchmarks/mutation.py [--group NAME ...] [--only MUTANT ...] [--diff] [--json OUT]
                                  [--scratch DIR]

``--only`` (a mutant name or a glob, repeatable) runs just those mutants: for checking a new
test against the survivors it was written for; a recorded result runs them all.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from _pytest.config import default_plugins

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS_FILE = ROOT / "benchmarks" / "mutation_equivalents.md"


@dataclass(frozen=True)
class Group:
    """Modules mutated together, and the fast test files that exercise them."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]


GROUPS: dict[str, Group] = {
    "conditions": Group(
        ("te_doctor/engine/conditions.py", "te_doctor/engine/condition_parser.py"),
        ("tests/test_conditions.py", "tests/test_core_edges.py", "tests/test_rules.py"),
    ),
    "engine": Group(
        ("te_doctor/engine/evaluate.py",),
        (
            "tests/test_engine.py",
            "tests/test_error_causes.py",
            "tests/test_error_capture_edges.py",
            "tests/test_core_edges.py",
            "tests/test_expected_results.py",
        ),
    ),
    "recommend-gate": Group(
        ("te_doctor/engine/recommend.py", "te_doctor/check/report.py"),
        (
            "tests/test_recommend.py",
            "tests/test_gate.py",
            "tests/test_core_edges.py",
            "tests/test_expected_results.py",
            "tests/test_scenarios.py",
            "tests/test_golden.py",
            "tests/test_start_here.py",
            "tests/test_requirement_words.py",
        ),
    ),
    "flatten-derived": Group(
        (
            "te_doctor/engine/flatten.py",
            "te_doctor/engine/flatten_gpus.py",
            "te_doctor/engine/flatten_libraries.py",
            "te_doctor/engine/flatten_smoke.py",
            "te_doctor/engine/flatten_stack.py",
            "te_doctor/engine/derived.py",
            "te_doctor/engine/fact_paths.py",
        ),
        (
            "tests/test_flatten.py",
            "tests/test_flatten_facts.py",
            "tests/test_triage_freeform.py",
            "tests/test_collect.py",
            "tests/test_core_edges.py",
            "tests/test_expected_results.py",
            "tests/test_scenarios.py",
        ),
    ),
    "nvidia-probes": Group(
        (
            "te_doctor/probes/nvidia.py",
            "te_doctor/probes/nvml.py",
            "te_doctor/probes/nvidia_smi.py",
            "te_doctor/probes/cuda.py",
        ),
        (
            "tests/test_probe_nvidia.py",
            "tests/test_probe_nvidia_sources.py",
            "tests/test_probe_cuda.py",
            "tests/test_core_edges.py",
            "tests/test_collect.py",
            "tests/test_fixtures.py",
        ),
    ),
    "triage-parsers": Group(
        (
            "te_doctor/triage/parse_collect_env.py",
            "te_doctor/triage/parse_common.py",
            "te_doctor/triage/parse_errors.py",
            "te_doctor/engine/error_capture.py",
            "te_doctor/triage/parse_nvidia.py",
            "te_doctor/triage/parse_packages.py",
            "te_doctor/triage/parse_pins.py",
            "te_doctor/triage/parse_te_doctor.py",
        ),
        (
            "tests/test_triage_parsers.py",
            "tests/test_triage_prepare.py",
            "tests/test_triage_pins.py",
            "tests/test_triage_pip_tables.py",
            "tests/test_triage.py",
            "tests/test_triage_te_doctor.py",
            "tests/test_triage_nvidia_lists.py",
            "tests/test_triage_collect_env_lines.py",
            "tests/test_error_causes.py",
            "tests/test_error_capture_edges.py",
            "tests/test_core_edges.py",
        ),
    ),
    "triage-freeform": Group(
        ("te_doctor/triage/parse_freeform.py", "te_doctor/triage/freeform_gpus.py"),
        (
            "tests/test_triage_freeform.py",
            "tests/test_triage_freeform_lines.py",
            "tests/test_triage_parsers.py",
        ),
    ),
}
#: Tests that measure time, not meaning: a slower mutant is not a wrong one.
TIMING_TESTS = "not hostile_input and not a_100_mb_report"
#: Imported once by the fork server: libraries and pytest's own plugins, never te_doctor or a
#: test module.
PRELOAD = (
    "pytest",
    *(f"_pytest.{name}" for name in default_plugins),
    "click",
    "packaging.version",
    "packaging.specifiers",
    "jsonschema",
    "yaml",
)
#: Each mutant's run imports the mutated copy afresh: with bytecode caching on (some shells turn
#: it off) it compiles each mutated module once, not once per mutant; no pytest plugin is
#: installed as a dependency, so their discovery is skipped.
SPEED = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
#: mutmut's exit codes (its ``status_by_exit_code``), except 255: an exception in its runner.
STATUS = {
    0: "survived",
    1: "killed",
    3: "killed",
    5: "no tests",
    33: "no tests",
    24: "timeout",
    36: "timeout",
    152: "timeout",
    -24: "timeout",
    -9: "segfault",
    -11: "segfault",
    2: "interrupted",
    34: "skipped",
    255: "runner error",
    None: "not checked",
}
#: The statuses that mean a test noticed the mutant.
CAUGHT = ("killed", "timeout", "segfault")


def _toml_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _config(group: Group) -> str:
    """mutmut settings: the whole package is copied, only the group's modules are mutated."""
    pytest_args = [
        "-p",
        "no:cacheprovider",
        "-p",
        "benchmarks.mutation_plugin",
        "-k",
        TIMING_TESTS,
    ]
    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["te_doctor/"]\n'
        f"only_mutate = {_toml_list(group.modules)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(group.tests)}\n"
        f"pytest_add_cli_args = {_toml_list(pytest_args)}\n"
        'also_copy = ["rules", "tests", "README.md", "benchmarks"]\n'
        'process_isolation = "forkserver"\n'
        'forkserver_warmup = "import"\n'
        'preload_modules_file = "mutmut-preload.txt"\n'
        "use_git_change_detection = false\n"
    )


def run_group(name: str, scratch: Path, only: Sequence[str] = ()) -> dict[str, str]:
    """Mutant name -> mutmut's status (killed, survived, no tests, timeout, ...)."""
    group = GROUPS[name]
    work = scratch / name
    shutil.rmtree(work, ignore_errors=True)
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for file in files:
        if (ROOT / file).is_file():
            (work / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / file, work / file)
    with (work / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write(_config(group))
    (work / "mutmut-preload.txt").write_text("\n".join(PRELOAD) + "\n", encoding="utf-8")
    mutmut = Path(sys.executable).parent / "mutmut"
    run = subprocess.run(
        [str(mutmut), "run", "--max-children", "1", *only],
        cwd=work,
        capture_output=True,
        text=True,
        env=SPEED | {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    statuses = {
        mutant: STATUS.get(code, f"exit code {code}")
        for meta in (work / "mutants").rglob("*.py.meta")
        for mutant, code in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].items()
    }
    if only:
        statuses = {m: s for m, s in statuses.items() if any(fnmatch(m, o) for o in only)}
    if not statuses:
        sys.exit(f"{name}: mutmut produced no results\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return statuses


def equivalents(text: str) -> dict[str, str]:
    """Mutant name -> why no test can tell it apart, from the table in the equivalents file."""
    found = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and re.fullmatch(r"`[\w.ǁ]+__mutmut_\d+`", cells[0]):
            found[cells[0].strip("`")] = cells[-1]
    return found


def diff_lines(scratch: Path, name: str, mutant: str) -> list[str]:
    """The removed and added lines of one mutant."""
    mutmut = Path(sys.executable).parent / "mutmut"
    shown = subprocess.run(
        [str(mutmut), "show", mutant], cwd=scratch / name, capture_output=True, text=True
    ).stdout
    return [
        line
        for line in shown.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def summary(statuses: dict[str, str], explained: dict[str, str]) -> dict[str, int]:
    """Caught, survived (of which explained as equivalent), no tests, and anything else."""
    counts = Counter(statuses.values())
    survived = [m for m, s in statuses.items() if s in ("survived", "no tests")]
    return {
        "mutants": len(statuses),
        "killed": sum(counts[s] for s in CAUGHT),
        "survived": counts["survived"],
        "no_tests": counts["no tests"],
        "equivalent": sum(m in explained for m in survived),
        "other": len(statuses) - sum(counts[s] for s in (*CAUGHT, "survived", "no tests")),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--group", action="append", choices=sorted(GROUPS), help="default: all")
    parser.add_argument("--only", action="append", default=[], help="just these mutants (globs)")
    parser.add_argument("--diff", action="store_true", help="show each survivor's change")
    parser.add_argument("--json", type=Path, help="also write every mutant's status here")
    parser.add_argument("--scratch", type=Path, help="work here instead of a new temp dir")
    args = parser.parse_args(argv)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="te-doctor-mutation-"))
    explained = equivalents(EQUIVALENTS_FILE.read_text(encoding="utf-8"))
    results: dict[str, dict[str, str]] = {}
    for name in args.group or list(GROUPS):
        results[name] = statuses = run_group(name, scratch, args.only)
        n = summary(statuses, explained)
        missed = n["survived"] + n["no_tests"]
        score = n["killed"] / (n["killed"] + missed - n["equivalent"] or 1)
        print(
            f"{name:<16} mutants {n['mutants']:>4}  killed {n['killed']:>4}  "
            f"survived {n['survived']:>4}  no tests {n['no_tests']:>3}  other {n['other']:>2}  "
            f"killed {n['killed'] / (n['killed'] + missed or 1):.0%}  "
            f"equivalent {n['equivalent']:>3}  score {score:.0%}",
            flush=True,
        )
        for mutant, status in sorted(statuses.items()):
            if status in ("survived", "no tests") and mutant not in explained:
                print(f"    {status}: {mutant}")
                for line in diff_lines(scratch, name, mutant) if args.diff else ():
                    print(f"        {line}")
            elif status not in (*CAUGHT, "survived", "no tests"):
                print(f"    {status}: {mutant}")
    stale = sorted(
        m
        for m in explained
        if any(m in s for s in results.values())
        and all(s.get(m) not in ("survived", "no tests") for s in results.values())
    )
    for mutant in stale:
        print(f"listed as equivalent but no longer a survivor: {mutant}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
