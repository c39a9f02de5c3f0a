"""The pytest plugin, run by pytest's own ``pytester``: FP8 tests skip with te-doctor's reason,
CPU tests run, one decision per session, bad marks and options are one usage-error line."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import te_doctor.runtime.selection as selection
from te_doctor.engine.paths import load_paths
from te_doctor.engine.recommend import PathVerdict
from te_doctor.pytest_plugin.reasons import skip_reason
from te_doctor.runtime.selection import Decision

pytest_plugins = ["pytester"]

ROOT = Path(__file__).parents[1]
NO_GPU = "No NVIDIA GPU is visible to CUDA here: TE and every GPU path need one (TED101)."
SECTION = "### In a test suite: the pytest plugin"

FP8_AND_CPU_TESTS = """
import pytest

@pytest.mark.te_doctor(require="fp8")
def test_fp8_step():
    pass

@pytest.mark.te_doctor(require="cpu")
def test_cpu_step():
    pass

def test_path(te_path):
    assert te_path.id in ("cpu", "cpu-bf16") and te_path.device == "cpu"
"""


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(.*?)```", text[text.index(SECTION) :], re.DOTALL)
    assert found is not None, "the pytest plugin section has no python block"
    return found.group(1)


def cpu_only_decision(from_cache: bool = False) -> Decision:
    """This machine as te-doctor sees it: only the CPU path is viable (no GPU)."""
    paths = load_paths()
    verdicts = tuple(
        PathVerdict(
            id=p.id,
            title=p.title,
            families=p.families,
            viable=p.id == "cpu",
            verification="verified" if p.id == "cpu" else "ruled-out",
            evidence="smoke GEMM cpu on cpu ran" if p.id == "cpu" else "",
            blocked_by_rules=p.id != "cpu",
            reasons=() if p.id == "cpu" else (NO_GPU,),
        )
        for p in paths
    )
    return Decision(verdicts, paths, from_cache=from_cache)


class FakeDecide:
    """Stands in for ``selection.decide``: counts the decisions and records ``smoke``."""

    def __init__(self, make: Callable[[], Decision] = cpu_only_decision) -> None:
        self.make, self.smoke_flags = make, list[bool]()

    def __call__(self, *, smoke: bool = True, **_: object) -> Decision:
        self.smoke_flags.append(smoke)
        return self.make()


@pytest.fixture
def fake_decide(monkeypatch: pytest.MonkeyPatch) -> FakeDecide:
    fake = FakeDecide()
    monkeypatch.setattr(selection, "decide", fake)
    return fake


def test_the_plugin_is_a_pytest11_entry_point() -> None:
    points = importlib.metadata.entry_points(group="pytest11")
    found = [p.value for p in points if p.name == "te_doctor"]
    assert found == ["te_doctor.pytest_plugin.plugin"], (
        "the pytest11 entry point is not installed: run `pip install -e .` again"
    )


def test_loading_the_plugin_imports_no_te_doctor_stage() -> None:
    """pytest loads the plugin in every session where te-doctor is installed: it stays light."""
    code = (
        "import sys, te_doctor.pytest_plugin.plugin\n"
        "print(sorted(m for m in sys.modules if m.startswith(('te_doctor.', 'torch'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "['te_doctor.errors',",
        "'te_doctor.pytest_plugin',",
        "'te_doctor.pytest_plugin.plugin',",
        "'te_doctor.pytest_plugin.reasons']",
    ]


@pytest.mark.torch
def test_fp8_skips_naming_the_missing_gpu_and_cpu_runs(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For real: a fresh pytest process probes this machine and runs the smoke test once."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no GPU, wherever the suite runs
    pytester.makepyfile(test_demo=FP8_AND_CPU_TESTS)
    result = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["plugins: *te-doctor-*"])
    result.stdout.re_match_lines(
        [
            r"SKIPPED \[1\] test_demo.py:\d+: te-doctor: fp8 does not run here: "
            r"No NVIDIA GPU is visible to CUDA here: TE and every GPU path need one \(TED101\) "
            r"\(te-mxfp8, te-fp8-block, te-fp8-current, te-fp8-delayed, torch-fp8\)$",
        ]
    )
    result.stdout.fnmatch_lines(["te-doctor: best path here: cpu-bf16 (verified)"])
    # One decision, cached for the next session, which then neither probes GPUs nor smokes.
    assert len(list((tmp_path / "cache" / "te-doctor" / "paths").glob("*.json"))) == 1
    again = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    again.assert_outcomes(passed=2, skipped=1)
    again.stdout.fnmatch_lines(["te-doctor (from its cache): best path here: cpu-bf16 (verified)"])


def test_one_decision_for_every_mark_and_the_fixture(
    pytester: pytest.Pytester, fake_decide: FakeDecide
) -> None:
    pytester.makepyfile(
        test_many=FP8_AND_CPU_TESTS
        + """
@pytest.mark.te_doctor(require="bf16")
class TestBf16:
    def test_a(self):
        pass

@pytest.mark.te_doctor("te-fp8-current")
def test_one_recipe():
    pass
"""
    )
    result = pytester.runpytest_inprocess("-rs", "--te-doctor-no-smoke")
    result.assert_outcomes(passed=2, skipped=3)
    assert fake_decide.smoke_flags == [False]
    result.stdout.fnmatch_lines(
        [
            "te-doctor (without the smoke test): best path here: cpu (verified)",
            "*SKIPPED [[]1[]] test_many.py: te-doctor: bf16 does not run here: *(TED101) "
            "(te-bf16, torch-amp-bf16)",
            # A single path is not repeated after its reason.
            "*test_many.py:*: te-doctor: te-fp8-current does not run here: No NVIDIA GPU"
            " is visible to CUDA here: TE and every GPU path need one (TED101)",
        ]
    )


def test_a_bare_mark_and_te_path_follow_te_doctor_require(
    pytester: pytest.Pytester, fake_decide: FakeDecide
) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.te_doctor
def test_bare():
    pass

def test_path(te_path):
    pass
"""
    )
    best = pytester.runpytest_inprocess("-rs")
    best.assert_outcomes(passed=2)
    fp8 = pytester.runpytest_inprocess("-rs", "--te-doctor-require", "te-fp8")
    fp8.assert_outcomes(skipped=2)
    fp8.stdout.fnmatch_lines(["*test_*.py:*: te-doctor: te-fp8 does not run here: *TED101*"] * 2)
    assert fake_decide.smoke_flags == [True, True]  # one decision per session


def test_nothing_is_probed_without_a_mark_or_te_path(
    pytester: pytest.Pytester, fake_decide: FakeDecide
) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
    pytester.makepyfile(FP8_AND_CPU_TESTS)
    pytester.runpytest_inprocess("--collect-only")
    assert fake_decide.smoke_flags == []


@pytest.mark.parametrize(
    ("args", "source", "message"),
    [
        (
            ["--te-doctor-require", "fp9"],
            "def test_x():\n    pass\n",
            "ERROR: --te-doctor-require fp9: unknown execution path; choose from bf16, cpu, *",
        ),
        (
            [],
            "import pytest\n@pytest.mark.te_doctor(require='fp9')\ndef test_x():\n    pass\n",
            "ERROR: *::test_x: te_doctor(require='fp9'): unknown execution path; choose from *",
        ),
        (
            [],
            "import pytest\n@pytest.mark.te_doctor(path='fp8')\ndef test_x():\n    pass\n",
            "ERROR: *::test_x: te_doctor mark: expected te_doctor(require=PATH), got *",
        ),
    ],
    ids=["option", "mark", "keyword"],
)
def test_bad_names_are_one_usage_error_before_probing(
    pytester: pytest.Pytester,
    fake_decide: FakeDecide,
    args: list[str],
    source: str,
    message: str,
) -> None:
    pytester.makepyfile(source)
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()
    assert fake_decide.smoke_flags == []


def test_the_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.te_doctor(require=PATH): skip unless *"])
    result = pytester.runpytest_inprocess("--help")
    result.stdout.fnmatch_lines(
        ["te-doctor*", "*--te-doctor-require=PATH*", "*--te-doctor-no-smoke*"]
    )


@pytest.mark.torch
def test_readme_example_is_ten_lines_and_runs(
    pytester: pytest.Pytester, fake_decide: FakeDecide
) -> None:
    example = readme_example()
    assert len(example.strip().splitlines()) <= 10
    on_cpu = example.split("\n\n", 1)[1].replace('"fp8"', '"cpu"').replace("fp8_step", "cpu_step")
    pytester.makepyfile(test_readme=example + "\n\n" + on_cpu)
    result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*te-doctor: fp8 does not run here: *(TED101)*"])


def test_skip_reason_groups_paths_by_cause() -> None:
    skipped = [("te-mxfp8", "needs a Blackwell GPU"), ("torch-fp8", "needs torchao.")]
    skipped.append(("te-fp8-block", "needs a Blackwell GPU"))
    assert skip_reason("fp8", skipped) == (
        "te-doctor: fp8 does not run here: needs a Blackwell GPU (te-mxfp8, te-fp8-block); "
        "needs torchao (torch-fp8)"
    )
    assert skip_reason("cpu", [("cpu", "needs packages.torch is present")]) == (
        "te-doctor: cpu does not run here: needs packages.torch is present"
    )
    assert skip_reason(None, [("cpu", "x")]) == "te-doctor: no execution path runs here: x (cpu)"
    two = [("cpu", "TED101: No GPU.; TED802: Importing PyTorch failed: 1.2.3 is too old.")]
    assert skip_reason("cpu", two) == (
        "te-doctor: cpu does not run here: TED101: No GPU; TED802: Importing PyTorch failed: "
        "1.2.3 is too old"
    )
