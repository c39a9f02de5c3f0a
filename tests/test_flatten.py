"""flatten() fills exactly the declared fact paths, with values of the declared types."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.conditions import spec_of
from te_doctor.fact_paths import FACT_TYPES, PYTHON_TYPES
from te_doctor.facts import FactState
from te_doctor.flatten import flatten
from te_doctor.snapshot_file import load

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
DECLARED = {path for path in FACT_TYPES if not path.endswith("*")}


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_every_declared_path_is_filled_and_nothing_else(fixture: Path) -> None:
    facts = flatten(load(fixture))
    assert DECLARED - set(facts.values) == set()
    undeclared = [path for path in facts.values if spec_of(path) is None]
    assert undeclared == []
    for gpu in facts.gpus:
        assert {p for p in DECLARED if p.startswith("gpu.")} == set(gpu)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_values_have_their_declared_types(fixture: Path) -> None:
    facts = flatten(load(fixture))
    for path, fact in facts.values.items():
        spec = spec_of(path)
        assert spec is not None
        if fact.state is FactState.KNOWN:
            expected = PYTHON_TYPES[spec.type]
            assert isinstance(fact.value, expected), (path, fact.value)
            assert not (expected is int and isinstance(fact.value, bool)), path


def test_a_snapshot_with_a_smoke_test_fills_the_smoke_facts() -> None:
    facts = flatten(load(Path(__file__).parent / "fixtures" / "h100-smoke-verified.json"))
    assert facts.get("smoke.outcome").value == "ok"
    assert "te-fp8-current" in (facts.get("smoke.verified").value or ())
    assert facts.get("smoke.numerics_failure_count").value == 0
