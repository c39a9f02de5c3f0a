"""Each recorded machine has a reviewed expected result: rules, recommendation, gate verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.engine.evaluate import Outcome
from te_doctor.snapshot.file import load
from te_doctor.toml_compat import tomllib

HERE = Path(__file__).parent
SLUGS = sorted(p.stem for p in (HERE / "fixtures").glob("*.json"))


def test_every_fixture_has_an_expectation() -> None:
    assert SLUGS == sorted(p.stem for p in (HERE / "expected").glob("*.toml"))


@pytest.mark.parametrize("slug", SLUGS)
def test_every_expectation_says_why(slug: str) -> None:
    """A reviewed expectation carries its reason, written from the machine's facts."""
    expected = tomllib.loads((HERE / "expected" / f"{slug}.toml").read_text())
    assert len(str(expected.get("reason", ""))) >= 40


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_result_matches_expectation(slug: str) -> None:
    expected = tomllib.loads((HERE / "expected" / f"{slug}.toml").read_text())
    report = run_check(load(HERE / "fixtures" / f"{slug}.json"), GateOptions())
    fired = sorted(f.rule_id for f in report.findings if f.outcome is Outcome.FIRED)
    undecided = sorted(f.rule_id for f in report.findings if f.outcome is Outcome.UNDECIDED)
    assert fired == expected["fired"]
    assert undecided == expected["undecided"]
    assert report.recommendation.path == expected["recommended"]
    assert report.recommendation.verification == expected["verification"]
    assert report.gate.passed is expected["gate_passed"]
