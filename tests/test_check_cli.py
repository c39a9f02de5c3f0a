"""`te-doctor check`, `rules` and `explain` end to end, on this machine and on every fixture."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from te_doctor.check.schemas import report_schema

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
FORMATS = ["text", "json", "markdown", "junit"]


def te_doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_this_machine_gets_a_clear_verdict() -> None:
    """No GPU here: FP8 is impossible, the reason is named, and --fail-on decides the exit."""
    result = te_doctor("check")
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this machine has a GPU")
    assert result.returncode == 1, result.stderr
    assert "FP8: not possible here: No NVIDIA GPU is visible" in result.stdout
    assert "(TED101)" in result.stdout and "Start here: No NVIDIA GPU" in result.stdout
    if importlib.util.find_spec("torch") is None:  # Pythons without the torch group
        assert "Use: nothing runs here yet" in result.stdout
    else:  # torch (CPU) is installed by the dev group: the smoke test proves the CPU path
        verified = (
            "Use: cpu-bf16: PyTorch autocast BF16 on the CPU. Verified here: smoke GEMM cpu-bf16"
        )
        assert verified in result.stdout, result.stdout
        assert "torch-fp8 on cpu: ok, relative error" in result.stdout
    assert te_doctor("check", "--fail-on", "never").returncode == 0


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
@pytest.mark.parametrize("output_format", FORMATS)
def test_every_fixture_in_every_format(fixture: Path, output_format: str) -> None:
    result = te_doctor(
        "check", "--snapshot", str(fixture), "--format", output_format, "--fail-on", "never"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    if output_format == "json":
        data = json.loads(out)
        jsonschema.Draft202012Validator(report_schema()).validate(data)
        assert data["schema"] == "te-doctor/report/v3"
    elif output_format == "junit":
        root = ET.fromstring(out)
        suite = root.find("testsuite")
        assert suite is not None and int(suite.get("tests", "0")) >= 50
    elif output_format == "markdown":
        assert out.startswith("## te-doctor check: PASS")
    else:
        assert "Verdict: PASS" in out and "Execution paths" in out and "Use: " in out


def test_gate_options() -> None:
    h100 = str(Path(__file__).parent / "fixtures" / "h100-cuda12-te-ok.json")
    a100 = str(Path(__file__).parent / "fixtures" / "a100.json")
    assert te_doctor("check", "--snapshot", h100, "--require", "fp8").returncode == 0
    failed = te_doctor("check", "--snapshot", a100, "--require", "fp8", "--fail-on", "never")
    assert failed.returncode == 1 and "--require fp8: no viable execution path" in failed.stdout
    assert (
        te_doctor("check", "--snapshot", a100, "--require", "bf16", "--fail-on", "never").returncode
        == 0
    )
    gpus = te_doctor("check", "--snapshot", h100, "--expect-gpus", "9")
    assert gpus.returncode == 1 and "--expect-gpus 9: 8 visible" in gpus.stdout
    assert te_doctor("check", "--snapshot", h100, "--expect-gpus", "8").returncode == 0


def test_ignore_removes_a_finding() -> None:
    a100 = str(Path(__file__).parent / "fixtures" / "a100.json")
    plain = json.loads(te_doctor("check", "--snapshot", a100, "--format", "json").stdout)
    fired = [f["rule_id"] for f in plain["findings"] if f["outcome"] == "fired"]
    assert "TED102" in fired
    ignored = json.loads(
        te_doctor(
            "check", "--snapshot", a100, "--format", "json", "--ignore", "fp8-needs-sm89"
        ).stdout
    )
    assert "TED102" not in [f["rule_id"] for f in ignored["findings"]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--require", "fp9"], "--require fp9: unknown execution path"),
        (["--ignore", "TED999"], "--ignore TED999: no rule has that id or name"),
        (["--expect-gpus", "-1"], "Invalid value for '--expect-gpus'"),
        (["--format", "sarif"], "Invalid value for '--format'"),
    ],
)
def test_bad_gate_flags_exit_2(args: list[str], message: str) -> None:
    h100 = str(Path(__file__).parent / "fixtures" / "h100-cuda12-te-ok.json")
    result = te_doctor("check", "--snapshot", h100, *args)
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("variables", "args", "coloured"),
    [
        ({}, ["--color", "always"], True),
        ({}, [], False),  # not a terminal
        ({"NO_COLOR": "1"}, [], False),
        ({"FORCE_COLOR": "1"}, [], True),
        ({"FORCE_COLOR": "0"}, [], False),
        ({"CLICOLOR_FORCE": "1"}, [], True),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, [], False),  # NO_COLOR wins over forcing
        ({"FORCE_COLOR": "1"}, ["--color", "never"], False),  # the option wins over both
        ({"NO_COLOR": "1"}, ["--color", "always"], True),
    ],
)
def test_colour_follows_the_option_then_no_color_force_color_clicolor_force(
    variables: dict[str, str], args: list[str], coloured: bool
) -> None:
    a100 = str(Path(__file__).parent / "fixtures" / "a100.json")
    quiet = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE")
    env = {**{k: v for k, v in os.environ.items() if k not in quiet}, **variables}
    assert ("\x1b[" in te_doctor("check", "--snapshot", a100, *args, env=env).stdout) is coloured


def test_ascii_markers_when_the_terminal_cannot_print_unicode() -> None:
    a100 = str(Path(__file__).parent / "fixtures" / "a100.json")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    result = te_doctor("check", "--snapshot", a100, env=env)
    assert "[xx] GPU: 8x NVIDIA A100-SXM4-80GB (cc 8.0)" in result.stdout
    assert "✓" not in result.stdout and result.returncode == 1


def test_verbose_lists_passed_rules_and_every_path() -> None:
    h100 = str(Path(__file__).parent / "fixtures" / "h100-cuda12-te-ok.json")
    out = te_doctor("check", "--snapshot", h100, "--verbose").stdout
    assert "TED102 fp8-needs-sm89" in out and "cpu:" in out


def test_output_file(tmp_path: Path) -> None:
    h100 = str(Path(__file__).parent / "fixtures" / "h100-cuda12-te-ok.json")
    target = tmp_path / "report.xml"
    result = te_doctor("check", "--snapshot", h100, "--format", "junit", "-o", str(target))
    assert result.returncode == 0 and result.stdout == ""
    ET.fromstring(target.read_text())


def test_rules_and_explain() -> None:
    listing = te_doctor("rules")
    assert listing.returncode == 0 and "TED102  error" in listing.stdout
    data = json.loads(te_doctor("rules", "--format", "json").stdout)
    assert {"id", "name", "severity", "category", "when", "source"} <= set(data[0])
    explained = te_doctor("explain", "TED102")
    assert (
        explained.returncode == 0 and "Why:" in explained.stdout and "Source:" in explained.stdout
    )
    assert te_doctor("explain", "fp8-needs-sm89").stdout == explained.stdout
    missing = te_doctor("explain", "TED1O2")
    assert missing.returncode == 2 and "did you mean TED102" in missing.stderr
