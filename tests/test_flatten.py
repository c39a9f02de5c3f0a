"""flatten() fills exactly the declared fact paths, with values of the declared types."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.engine.condition_parser import spec_of
from te_doctor.engine.fact_paths import FACT_TYPES, PYTHON_TYPES
from te_doctor.engine.flatten import flatten
from te_doctor.snapshot.facts import FactState
from te_doctor.snapshot.file import load

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


@pytest.mark.parametrize(
    ("archs", "cc", "runs", "specific"),
    [
        (("sm_90",), "9.0", True, False),
        (("sm_80",), "8.9", True, False),  # a cubin runs on a newer minor of its major
        (("sm_90",), "10.0", False, False),  # never on another major
        (("compute_90",), "12.0", True, False),  # PTX is JIT-compiled for newer GPUs
        (("compute_90a",), "10.0", False, False),  # arch-specific PTX only for 9.0
        (("sm_100a",), "10.0", True, True),
        (("sm_100a",), "10.3", False, True),  # arch-specific: exactly that GPU
        (("sm_100a",), "11.0", False, True),
        (("sm_120f",), "12.1", True, True),  # family-specific: the 12.x family
        (("sm_120f",), "13.0", False, True),
        (("sm_100", "sm_120"), "10.0", False, True),  # generic code is not arch-specific
        (("sm_100", "sm_100a", "sm_120f"), "11.0", False, True),  # Thor: none of them
    ],
)
def test_gpu_code_runs_on(archs: tuple[str, ...], cc: str, runs: bool, specific: bool) -> None:
    from te_doctor.engine.derived import runs_on
    from te_doctor.snapshot.facts import Fact

    assert runs_on(Fact.of(archs, "t"), Fact.of(cc, "t"), specific=specific).value is runs
