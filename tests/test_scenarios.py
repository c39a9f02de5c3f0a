"""Recorded scenarios of the rule audit (shared/research/rule-audit.md).

Each false green or false red found there is a fixture with a few facts edited, and its reviewed
expected result: the rules that must fire (and must not), the viable paths, the recommended path,
the gate, and whether ``--require X --fail-on never`` passes (the path judgement alone).
``--require te-fp8`` must never pass where TE would refuse FP8 or compute wrong numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.engine.evaluate import Outcome
from te_doctor.toml_compat import tomllib
from tests.scenario_edits import edited_snapshot

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.toml"))
_KEYS = {
    "audit",
    "reason",
    "base",
    "edits",
    "fired",
    "not_fired",
    "viable",
    "recommended",
    "gate_passed",
    "require",
    "require_passes",
    "require_recommends",
}


def _scenario(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    assert set(data) <= _KEYS, set(data) - _KEYS
    return data


def test_there_is_a_scenario_for_every_audit_finding() -> None:
    audits = {_scenario(p)["audit"] for p in SCENARIOS}
    wanted = {f"FG{i}" for i in range(1, 7)} | {"FG8", "FR1", "FR3", "item 3", "item 4"}
    assert wanted <= audits, sorted(wanted - audits)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_result(path: Path) -> None:
    scenario = _scenario(path)
    snapshot = edited_snapshot(scenario["base"], scenario["edits"])
    report = run_check(snapshot, GateOptions())
    fired = {f.rule_id for f in report.findings if f.outcome is Outcome.FIRED}
    assert set(scenario["fired"]) <= fired, sorted(fired)
    assert not set(scenario.get("not_fired", [])) & fired, sorted(fired)
    viable = [v.id for v in report.recommendation.ranking if v.viable]
    assert viable == scenario["viable"]
    assert report.recommendation.path == scenario["recommended"]
    assert report.gate.passed is scenario["gate_passed"], report.gate.reasons
    required = run_check(snapshot, GateOptions(fail_on="never", require=(scenario["require"],)))
    assert required.gate.passed is scenario["require_passes"], required.gate.reasons
    if "require_recommends" in scenario:
        assert required.recommendation.path == scenario["require_recommends"]


def test_require_te_fp8_never_passes_where_te_refuses() -> None:
    """Every scenario whose TE FP8 cannot work fails ``--require te-fp8``, whatever else runs."""
    refused = [
        s for s in map(_scenario, SCENARIOS) if s["require"] == "te-fp8" and not s["require_passes"]
    ]
    assert len(refused) >= 4
    for scenario in refused:
        report = run_check(
            edited_snapshot(scenario["base"], scenario["edits"]),
            GateOptions(fail_on="never", require=("te-fp8",)),
        )
        assert not report.gate.passed, scenario["reason"]
