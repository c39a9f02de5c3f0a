"""The planner's mechanics: version fitting, core choice, environment, steps, pip's answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from te_doctor.engine.rule_model import Rule
from te_doctor.engine.rules import load_rule_file
from te_doctor.errors import TeDoctorError
from te_doctor.plan import pip_predict
from te_doctor.plan.data import NgcRelease, Releases, load_plan_rules, load_releases
from te_doctor.plan.planner import make_plan
from te_doctor.probes.commands import CommandResult
from te_doctor.snapshot.file import load
from te_doctor.snapshot.model import Snapshot

FIXTURES = Path(__file__).parent / "fixtures"
RELEASES = Releases(
    te_versions=("2.20.2", "2.9.0", "2.8.0", "1.13.0"),
    first_core={12: "1.9.0", 13: "2.9.0"},
    ngc=(NgcRelease("25.01", "12.8", "570.26"), NgcRelease("24.04", "12.4", "550.54.14")),
)
RULES = """
schema = 1

[[rule]]
id = "TST901"
name = "needs-old-te"
severity = "error"
category = "torch-version"
since = "0.1.0"
summary = "TE {plan.te_version} is too new for this test machine."
why = "A test rule that rejects TE 2.9 and newer."
fix = "Use TE 2.8."
source = "test"
when.all = ['plan.te_version >= 2.9']
examples.fires = [{ "plan.te_version" = "2.20.2" }]
examples.clear = [{ "plan.te_version" = "2.8.0" }]

[[rule]]
id = "TST902"
name = "no-compiler-here"
severity = "error"
category = "install-build"
since = "0.1.0"
summary = "No C++ compiler."
why = "A machine blocker that no TE version avoids."
fix = "sudo apt-get install g++"
source = "test"
when.all = ['build.cxx is missing']
examples.fires = [{ "build.cxx" = "<absent>" }]
examples.clear = [{ "build.cxx" = "/usr/bin/c++" }]
"""


def rules(tmp_path: Path) -> tuple[Rule, ...]:
    path = tmp_path / "plan.toml"
    path.write_text(RULES)
    return tuple(load_rule_file(path))


def snapshot(name: str = "h100-cuda12-te-ok") -> Snapshot:
    return load(FIXTURES / f"{name}.json")


def test_the_newest_version_that_fits_is_chosen_and_newer_ones_explained(tmp_path: Path) -> None:
    plan = make_plan(snapshot(), rules=rules(tmp_path), releases=RELEASES)
    assert plan.te_version == "2.8.0" and plan.fits
    assert [r.split(" ")[0] for r in plan.version_reasons] == ["2.20.2", "2.9.0"]
    assert "TST901" in plan.version_reasons[0]
    # the machine blocker (no compiler in the fixture) is reported, whatever the version
    assert [f.rule_id for f in plan.blockers] == ["TST902"] and plan.exit_code == 1


def test_an_explicit_version_that_does_not_fit_is_explained(tmp_path: Path) -> None:
    plan = make_plan(snapshot(), te_spec="2.20.2", rules=rules(tmp_path), releases=RELEASES)
    assert not plan.fits and plan.te_version == "2.20.2" and plan.exit_code == 1
    assert "TST901" in plan.version_reasons[0]
    assert (
        make_plan(snapshot(), te_spec=">=2.8,<2.9", rules=(), releases=RELEASES).te_version
        == "2.8.0"
    )


@pytest.mark.parametrize("spec", ["1.5", ">=3"])
def test_a_version_no_release_matches(spec: str) -> None:
    with pytest.raises(TeDoctorError, match="no published TE release matches it"):
        make_plan(snapshot(), te_spec=spec, rules=(), releases=RELEASES)


def test_a_malformed_version_spec() -> None:
    with pytest.raises(TeDoctorError, match="not a version or specifier"):
        make_plan(snapshot(), te_spec=">>2", rules=(), releases=RELEASES)


def test_the_core_follows_torch_and_cu13_needs_te_2_9() -> None:
    plan = make_plan(snapshot(), rules=(), releases=RELEASES)
    assert plan.core_package == "transformer-engine-cu12"  # torch is +cu124
    cpu_laptop = make_plan(snapshot("no-gpu-laptop"), rules=(), releases=RELEASES)
    assert cpu_laptop.core_cuda_major == 12  # no driver: CUDA 12 first


def test_environment_and_steps() -> None:
    plan = make_plan(snapshot(), rules=(), releases=RELEASES)
    assert plan.env["NVTE_FRAMEWORK"] == "pytorch"
    assert plan.env["NVTE_CUDA_ARCHS"] == "90"  # only the GPUs present
    assert plan.env["MAX_JOBS"] == "224"  # 2 TB of RAM: one job per CPU
    assert plan.env["CUDA_HOME"] == "/usr/local/cuda"
    commands = [step.command for step in plan.steps]
    assert any(
        '--no-build-isolation "transformer_engine[pytorch,core_cu12]==2.20.2"' in c
        for c in commands
    )
    assert commands[-1] == "te-doctor check"
    old = make_plan(snapshot(), te_spec="2.8.0", rules=(), releases=RELEASES)
    assert any('"transformer_engine[pytorch]==2.8.0"' in step.command for step in old.steps)
    jax = make_plan(snapshot(), framework="jax", rules=(), releases=RELEASES)
    assert any("jax[cuda12]" in s.command for s in jax.steps)
    assert any("transformer_engine[jax,core_cu12]" in s.command for s in jax.steps)


def test_container_alternative_fits_the_driver() -> None:
    plan = make_plan(snapshot(), rules=(), releases=RELEASES)  # driver 550.54.15
    assert plan.alternative.startswith("NGC PyTorch 24.04 (CUDA 12.4")
    assert make_plan(snapshot("no-gpu-laptop"), rules=(), releases=RELEASES).alternative == ""


def test_shipped_release_data_and_rules_load() -> None:
    releases = load_releases()
    assert releases.te_versions[0] == "2.20.2" and releases.first_core[13] == "2.9.0"
    assert all(rule.id.startswith("TED9") for rule in load_plan_rules())


def fake_run(result: CommandResult) -> object:
    def run(argv: list[str], *, timeout: float, env: object = None) -> CommandResult:
        assert "--dry-run" in argv and "--only-binary=:all:" in argv  # never builds or installs
        return result

    return run


def test_pip_prediction_parses_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    report = {
        "install": [
            {
                "metadata": {"name": "transformer_engine_cu12", "version": "2.20.2"},
                "download_info": {
                    "url": "https://x/transformer_engine_cu12-2.20.2-py3-none-manylinux_2_28_x86_64.whl"
                },
            }
        ]
    }
    monkeypatch.setattr(
        pip_predict, "run_command", fake_run(CommandResult(("pip",), 0, json.dumps(report), ""))
    )
    prediction = pip_predict.predict("python", "2.20.2", 12)
    wheel = "transformer_engine_cu12-2.20.2-py3-none-manylinux_2_28_x86_64.whl"
    assert prediction.reachable
    assert prediction.resolved == (f"transformer_engine_cu12 2.20.2 ({wheel})",)


@pytest.mark.parametrize(
    ("result", "reachable", "problem"),
    [
        (
            CommandResult(("pip",), 1, "", "WARNING: Retrying ... NewConnectionError ..."),
            False,
            "no package index is reachable",
        ),
        (CommandResult(("pip",), 124, "", "no answer", timed_out=True), False, "did not answer"),
        (
            CommandResult(
                ("pip",),
                1,
                "",
                "ERROR: No matching distribution found for transformer-engine-cu13==2.8.0",
            ),
            True,
            "cannot resolve it",
        ),
        (CommandResult(("pip",), 0, "not json", ""), True, "cannot read"),
    ],
)
def test_pip_prediction_failures_are_explained(
    monkeypatch: pytest.MonkeyPatch, result: CommandResult, reachable: bool, problem: str
) -> None:
    monkeypatch.setattr(pip_predict, "run_command", fake_run(result))
    prediction = pip_predict.predict("python", "2.8.0", 13)
    assert prediction.reachable is reachable and problem in prediction.problem


def te_doctor_plan(*args: str) -> tuple[int, str, str]:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "te_doctor", "plan", "--no-pip", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--framework", "tensorflow"], "Invalid value for '--framework'"),
        (["--te-version", ">>2"], "--te-version >>2: not a version or specifier"),
        (["--te-version", "0.1"], "no published TE release matches it"),
        (["--snapshot", "/nonexistent.json"], "cannot read snapshot"),
    ],
)
def test_bad_plan_options_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    code, _, err = te_doctor_plan(*args)
    assert code == 2 and message in err and "Traceback" not in err


def test_plan_formats_on_a_recorded_machine() -> None:
    fixture = str(FIXTURES / "h100-cuda12-te-ok.json")
    code, out, _ = te_doctor_plan("--snapshot", fixture, "--format", "json")
    data = json.loads(out)
    assert data["schema"] == "te-doctor/plan/v1" and data["exit_code"] == code
    assert data["pip"] is None  # a saved snapshot: pip is not asked
    _, text, _ = te_doctor_plan("--snapshot", fixture)
    assert text.startswith("te-doctor plan: Transformer Engine ") and "\n1. " in text
    _, markdown, _ = te_doctor_plan("--snapshot", fixture, "--format", "markdown")
    assert markdown.startswith("## te-doctor plan:") and "```bash" in markdown
