"""Area lines agree with the facts they summarise (test-audit): no green GPU line on a machine
without a GPU, no green Transformer Engine line without TE, and each finding under one area,
the one it is about."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions, Report
from te_doctor.engine.evaluate import Outcome
from te_doctor.engine.flatten import flatten
from te_doctor.render.check_text import render_check_text
from te_doctor.render.style import Style
from te_doctor.snapshot.file import load

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
#: Each area and the fact that says its component is here.
PRESENT_BY = {
    "NVIDIA driver": "driver.version",
    "cuDNN": "cudnn.version",
    "PyTorch": "torch.version",
    "Transformer Engine": "te.version",
    "flash-attn": "packages.flash_attn",
}


def report_of(fixture: Path) -> Report:
    return run_check(load(fixture), GateOptions(fail_on="never"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_markers_follow_the_facts(fixture: Path) -> None:
    report = report_of(fixture)
    facts = flatten(load(fixture))
    areas = {area.name: area for area in report.areas}
    findings = {f.rule_id: f for f in report.findings}
    count = facts.get("gpus.count").get()
    if not count:
        assert areas["GPU"].status != "ok", areas["GPU"]
    for name, path in PRESENT_BY.items():
        here = facts.get(path).known
        status = areas[name].status
        assert status != "ok" or here, f"{name} is ok but {path} is not known"
        assert status != "absent" or not here, f"{name} is absent but {path} is known"
        mine = [findings[r] for r in areas[name].findings]
        quiet = all(f.outcome in (Outcome.PASSED, Outcome.NOT_APPLICABLE) for f in mine)
        if here and quiet:
            assert status == "ok", f"{name}: nothing found, yet {status}"
    smoke = report.smoke.outcome
    assert (areas["Smoke test"].status == "absent") == (not smoke.known)
    if smoke.known and smoke.value != "ok":  # never a green or an "i" beside "failed"
        assert areas["Smoke test"].status == "error", areas["Smoke test"]
    smoke_failed = smoke.known and smoke.value != "ok"
    worst = {2: "error", 1: "warning", 0: "info"}
    for area in report.areas:
        fired = [findings[r].severity.rank for r in area.findings if findings[r].fired]
        if fired and not (area.name == "Smoke test" and smoke_failed):
            assert area.status == worst[max(fired)], area


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_every_finding_sits_in_exactly_one_area(fixture: Path) -> None:
    report = report_of(fixture)
    placed = [rule for area in report.areas for rule in area.findings]
    assert sorted(placed) == sorted(f.rule_id for f in report.findings)


def test_a_machine_without_a_gpu_or_te_never_shows_them_green() -> None:
    for name in ("no-gpu-laptop", "no-gpu-laptop-smoke", "plan-no-gpu", "wedged-driver"):
        text = render_check_text(report_of(FIXTURES[0].parent / f"{name}.json"), Style())
        assert "\n✓ GPU" not in text, name
    for name in ("no-gpu-laptop", "l40s-no-te", "plan-cpu-torch-on-gpu-box"):
        text = render_check_text(report_of(FIXTURES[0].parent / f"{name}.json"), Style())
        assert "\n– Transformer Engine: not installed → te-doctor plan" in text, name


@pytest.mark.parametrize(
    ("fixture", "rule_id", "area"),
    [
        ("no-gpu-laptop", "TED101", "GPU"),
        ("wedged-driver", "TED204", "NVIDIA driver"),
        ("plan-cpu-torch-on-gpu-box", "TED423", "PyTorch"),
        ("two-te-variants", "TED202", "NVIDIA driver"),
        ("two-te-variants", "TED404", "Transformer Engine"),
        ("t4", "TED114", "GPU"),
    ],
)
def test_findings_sit_under_what_they_are_about(fixture: str, rule_id: str, area: str) -> None:
    report = report_of(Path(__file__).parent / "fixtures" / f"{fixture}.json")
    (where,) = [a.name for a in report.areas if rule_id in a.findings]
    assert where == area
    assert next(f for f in report.findings if f.rule_id == rule_id).fired
