"""One place to start: remedies group findings of one root cause; commands run under the
diagnosed interpreter; the headline names at most two causes in at most two lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.check.commands import rerun_command, with_interpreter
from te_doctor.check.headline import build_headline
from te_doctor.check.pipeline import load_rule_set, run_check
from te_doctor.check.report import GateOptions
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.recommend import PathVerdict
from te_doctor.engine.remedies import load_remedies
from te_doctor.engine.rule_model import RuleFileError
from te_doctor.render.check_text import headline_lines
from te_doctor.render.style import Style
from te_doctor.snapshot.file import load

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))


def test_every_remedy_names_rules_that_exist() -> None:
    known = {rule.id for rule in load_rule_set()[0]}
    remedies = load_remedies()
    assert remedies
    for remedy in remedies:
        assert set(remedy.rules) <= known and set(remedy.joins) <= known, remedy.id
        assert remedy.steps or remedy.text, f"{remedy.id}: neither commands nor words"


def test_a_remedy_file_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "remedies.toml"
    bad.write_text(
        'schema = 1\n[[remedy]]\nid = "x"\ntitle = "t"\nrules = []\njoins = []\n'
        "when.all = ['gpus.count > 0']\nsteps = []\nshell = \"rm -rf /\"\n"
    )
    with pytest.raises(RuleFileError, match="shell"):
        load_remedies(bad)


def test_one_root_cause_one_command_sequence() -> None:
    report = run_check(load(FIXTURES[0].parent / "two-te-variants.json"), GateOptions())
    start = report.start
    assert start is not None
    assert start.rules == ("TED202", "TED402", "TED404", "TED405", "TED505")
    assert start.steps[-1].endswith('"transformer_engine[pytorch,core_cu12]==2.9.0"')
    assert all(step.startswith("/home/alice/llm/.venv/bin/python3 -m pip ") for step in start.steps)


def test_a_finding_no_remedy_covers_starts_with_its_own_fix() -> None:
    report = run_check(load(FIXTURES[0].parent / "no-gpu-laptop.json"), GateOptions())
    assert report.start is not None and report.start.rules == ("TED101",)
    assert report.start.text.startswith("Run on a GPU node") and not report.start.steps


def test_nothing_to_start_on_a_sound_machine() -> None:
    report = run_check(load(FIXTURES[0].parent / "h100-smoke-verified.json"), GateOptions())
    assert report.start is None  # only info findings


def test_pip_runs_under_the_diagnosed_interpreter() -> None:
    fix = "`pip install -U x` then `pip uninstall -y y && pip install z`; pip3 install w"
    said = with_interpreter(fix, "/opt/my env/bin/python")
    assert said.count("'/opt/my env/bin/python' -m pip ") == 3 and "pip3 install w" in said
    assert with_interpreter("/usr/bin/pip install q", "/p") == "/usr/bin/pip install q"
    assert with_interpreter(fix, "") == fix
    assert rerun_command(None) == "te-doctor check"
    assert rerun_command("/v/bin/python") == "te-doctor check --python /v/bin/python"


@pytest.mark.parametrize("width", [None, 80, 60])
@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_the_headline_is_at_most_two_lines_of_at_most_two_causes(
    fixture: Path, width: int | None
) -> None:
    report = run_check(load(fixture), GateOptions(fail_on="never"))
    assert len(report.headline.causes) <= 2
    lines = headline_lines(report, Style(width=width))
    assert 1 <= len(lines) <= 2, lines
    if width is not None:
        assert all(len(line) <= width for line in lines), lines


def test_a_failed_smoke_gemm_heads_the_fp8_headline_before_a_predicted_lack() -> None:
    """Current and delayed scaling failed their smoke GEMMs (cuBLAS, TED742, what "Start here"
    names); block scaling only lacks a newer torch. The seen failure comes first, said once."""
    report = run_check(load(FIXTURES[0].parent / "h100-fp8-gemm-fails.json"), GateOptions())
    assert report.start is not None and report.start.rules[0] == "TED742"
    causes = report.headline.causes
    assert causes[0].startswith("the FP8 smoke GEMM failed: RuntimeError: CUBLAS_STATUS_NOT_")
    assert causes[1] == "PyTorch 2.6.0+cu124 is built for CUDA 12.4"
    assert report.headline.more == 0


def _ruled_out(path_id: str, reason: str) -> PathVerdict:
    families = ("fp8", "te-fp8", "te", "gpu")
    return PathVerdict(path_id, path_id, families, False, "ruled-out", "", False, (reason,))


def test_a_smoke_failure_of_the_first_te_fp8_path_is_said_once() -> None:
    """The best TE FP8 path's own failed smoke GEMM is also what it lacks: one cause, not the
    same failure twice in other words."""
    failed = ": RuntimeError: CUBLAS_STATUS_NOT_SUPPORTED"
    ranking = [
        _ruled_out("te-fp8-block", f"its smoke GEMM te-fp8-block failed{failed}"),
        _ruled_out("te-fp8-current", f"its smoke GEMM te-fp8-current failed{failed}"),
    ]
    headline = build_headline(ranking, [], FlatFacts({}, ()))
    assert headline.causes == (f"the FP8 smoke GEMM failed{failed}",)
    assert headline.more == 0
