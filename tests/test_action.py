"""The GitHub Action (action.yml): valid composite metadata, inputs that reach the scripts only
through the environment, every te-doctor command line checked against the real click commands,
and the steps run here as a runner would run them."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from te_doctor.cli.main import COMMANDS, cli
from tests.command_lines import parse

ROOT = Path(__file__).parents[1]
ACTION = ROOT / "action.yml"
TE_DOCTOR = "$TE_DOCTOR"  # how the scripts call the te-doctor they installed
SEPARATORS = {";", "&&", "||", "|", "&"}
ARRAY = re.compile(r"^(\w+)\+?=\((.*)\)$")
EXPANSION = re.compile(r"^\$\{(\w+)\[@\]\}$")
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


def steps() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = action()["runs"]["steps"]
    return found


def command(name: str) -> click.Command:
    found = cli.get_command(click.Context(cli), name)
    assert found is not None, f"te-doctor has no command {name!r}"
    return found


def options_of(name: str) -> dict[str, click.Option]:
    return {opt: p for p in command(name).params if isinstance(p, click.Option) for opt in p.opts}


def simple_commands(script: str) -> list[list[str]]:
    """The script's simple commands (lines split at ``;``, ``&&``, ``||``, ``|``)."""
    found: list[list[str]] = []
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        for token in lexer:
            if token in SEPARATORS:
                found.append(words)
                words = []
            else:
                words.append(token)
        found.append(words)
    return [words for words in found if words]


def arrays(script: str) -> dict[str, list[str]]:
    """Every word ever put in each bash array (``name=(...)``, ``name+=(...)``)."""
    found: dict[str, list[str]] = {}
    for line in script.splitlines():
        match = ARRAY.match(line.strip())
        if match:
            found.setdefault(match.group(1), []).extend(shlex.split(match.group(2)))
    return found


def invocations(script: str) -> list[list[str]]:
    """Each te-doctor command line, its ``"${array[@]}"`` words spelled out."""
    words_of = arrays(script)
    found = []
    for words in simple_commands(script):
        if TE_DOCTOR not in words:
            continue
        words = words[words.index(TE_DOCTOR) :]
        expanded: list[str] = []
        for word in words:
            match = EXPANSION.match(word)
            expanded += words_of[match.group(1)] if match else [word]
        found.append(expanded)
    return found


def problems(words: list[str]) -> list[str]:
    """What is wrong with one te-doctor command line, against its click command."""
    where = shlex.join(words)
    if words[1] not in COMMANDS:
        return [f"{where}: te-doctor has no command {words[1]!r}"]
    return parse(words[2:], command(words[1]), where).problems


def scripts() -> str:
    return "\n".join(step["run"] for step in steps())


def test_the_action_is_a_composite_action_with_documented_inputs() -> None:
    data = action()
    assert data["runs"]["using"] == "composite"
    assert data["name"] and data["description"]
    assert set(data["inputs"]) == {
        "require",
        "expect-gpus",
        "fail-on",
        "format",
        "python",
        "smoke",
        "install",
    }
    for name, spec in data["inputs"].items():
        assert spec["description"] and isinstance(spec["default"], str), name
    fail_on = options_of("check")["--fail-on"].type
    output_format = options_of("check")["--format"].type
    assert data["inputs"]["fail-on"]["default"] in getattr(fail_on, "choices", ())
    assert data["inputs"]["format"]["default"] in getattr(output_format, "choices", ())
    for step in steps():
        assert step["shell"] == "bash" and step["run"].strip() and step["name"], step


def test_inputs_reach_the_scripts_only_through_the_environment() -> None:
    """``${{ inputs.x }}`` pasted into a script is a script injection: only env may hold it."""
    declared = set(action()["inputs"])
    used: set[str] = set()
    for step in steps():
        assert not EXPRESSION.search(step["run"]), f"an expression in the script of {step['id']}"
        for expression in EXPRESSION.findall(str(step.get("env", {}))):
            if expression.startswith("inputs."):
                used.add(expression.removeprefix("inputs."))
    assert used == declared, f"declared but unused: {declared - used}; unknown: {used - declared}"
    for step in steps():
        for variable in re.findall(r"\$\{?(INPUT_\w+|TE_DOCTOR\w*)", step["run"]):
            assert variable in step.get("env", {}), f"{step['id']}: ${variable} is not in its env"


def test_outputs_come_from_a_step_that_writes_them() -> None:
    ids = {step["id"]: step for step in steps()}
    references = [action()["outputs"][name]["value"] for name in action()["outputs"]]
    references += [str(step.get("env", {})) for step in steps()]
    for text in references:
        for expression in EXPRESSION.findall(text):
            if not expression.startswith("steps."):
                continue
            _, step_id, _, name = expression.split(".", 3)
            assert step_id in ids, expression
            assert f'echo "{name}=' in ids[step_id]["run"], f"{step_id} never writes {name}"
            assert '>> "$GITHUB_OUTPUT"' in ids[step_id]["run"]
    assert set(action()["outputs"]) == {"junit", "report", "passed"}


def test_every_te_doctor_command_line_exists_on_the_click_commands() -> None:
    found = invocations(scripts())
    assert found, "the action runs no te-doctor"
    for words in found:
        assert problems(words) == []
    shown = [" ".join(words) for words in found]
    assert any(w[1] == "probe" and "--python" in w and "--smoke" in w for w in found), shown
    formats = {w[w.index("--format") + 1] for w in found if w[1] == "check"}
    assert formats == {"json", "junit", "markdown", "$INPUT_FORMAT"}
    gates = [w for w in found if w[1] == "check"]
    for option in ("--snapshot", "--require", "--expect-gpus", "--fail-on"):
        assert all(option in words for words in gates), option


@pytest.mark.parametrize(
    "line",
    [
        '"$TE_DOCTOR" check --requires fp8',
        '"$TE_DOCTOR" check --fail-on sometimes',
        '"$TE_DOCTOR" check --format yaml',
        '"$TE_DOCTOR" check --verbose=yes',
        '"$TE_DOCTOR" check --snapshot',
        '"$TE_DOCTOR" chek',
    ],
)
def test_the_command_check_rejects(line: str) -> None:
    (words,) = invocations(line)
    assert problems(words)


def run_check_step(tmp_path: Path, inputs: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """The action's check step under bash, with a runner's files and this venv's te-doctor."""
    (step,) = [s for s in steps() if s["id"] == "check"]
    defaults = {name: spec["default"] for name, spec in action()["inputs"].items()}
    values = {**defaults, **inputs}
    env = {
        **os.environ,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "TE_DOCTOR": str(Path(sys.executable).parent / "te-doctor"),
    }
    for variable, expression in step["env"].items():
        (name,) = EXPRESSION.findall(expression)
        if name.startswith("inputs."):
            env[variable] = values[name.removeprefix("inputs.")]
    return subprocess.run(
        ["bash", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=300
    )


def outputs(tmp_path: Path) -> dict[str, str]:
    lines = (tmp_path / "output").read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines)


@pytest.mark.torch  # the cpu path needs torch installed
def test_the_check_step_gates_and_writes_the_summary_and_junit(tmp_path: Path) -> None:
    python = sys.executable
    failing = run_check_step(
        tmp_path / "fp8", {"require": "fp8", "smoke": "false", "python": python}
    )
    assert failing.returncode == 1, failing.stderr
    written = outputs(tmp_path / "fp8")
    assert written["passed"] == "false"
    suite = ET.parse(written["junit"]).getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) >= 1
    summary = (tmp_path / "fp8" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## te-doctor check: FAIL")
    assert "--require fp8: no viable execution path" in summary
    assert "Verdict: FAIL" in failing.stdout  # the log shows the text report
    passing = run_check_step(
        tmp_path / "cpu",
        {"require": "cpu", "fail-on": "never", "smoke": "false", "python": python},
    )
    assert passing.returncode == 0, passing.stderr
    assert outputs(tmp_path / "cpu")["passed"] == "true"
    assert Path(outputs(tmp_path / "cpu")["report"]).read_text().startswith("{")


def test_bad_inputs_stop_the_step_with_exit_2(tmp_path: Path) -> None:
    result = run_check_step(tmp_path / "a", {"python": "no-such-python", "smoke": "false"})
    assert result.returncode == 2 and "python: no-such-python not found" in result.stderr
    result = run_check_step(tmp_path / "b", {"require": "fp9", "smoke": "false"})
    assert result.returncode == 2 and "--require fp9: unknown execution path" in result.stderr
    assert not (tmp_path / "b" / "summary.md").exists()


@pytest.mark.slow
def test_a_fresh_install_as_a_runner_runs_both_steps(tmp_path: Path) -> None:
    """Both steps in order, as a runner would: a new venv, te-doctor installed from this
    checkout by pip, then the check on this interpreter with the smoke test."""
    env = {
        **os.environ,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_ACTION_PATH": str(ROOT),
        "TE_DOCTOR_INSTALL": "",
    }
    install = subprocess.run(
        ["bash", "-c", steps()[0]["run"]], env=env, capture_output=True, text=True, timeout=900
    )
    assert install.returncode == 0, install.stderr
    env["TE_DOCTOR"] = outputs(tmp_path)["te-doctor"]
    assert Path(env["TE_DOCTOR"]).is_relative_to(tmp_path)
    inputs = {name: spec["default"] for name, spec in action()["inputs"].items()}
    inputs.update(require="cpu", python=sys.executable)
    for variable, expression in steps()[1]["env"].items():
        (name,) = EXPRESSION.findall(expression)
        if name.startswith("inputs."):
            env[variable] = inputs[name.removeprefix("inputs.")]
    check = subprocess.run(
        ["bash", "-c", steps()[1]["run"]], env=env, capture_output=True, text=True, timeout=300
    )
    assert check.returncode in (0, 1), check.stderr
    assert "Use: cpu-bf16: PyTorch autocast BF16 on the CPU. Verified here" in check.stdout
    assert outputs(tmp_path)["passed"] == ("true" if check.returncode == 0 else "false")
