"""Not applicable versus passed: a false rule passed only if it stays false whatever the
things that are not here turned out to be (te_doctor/engine/applicability.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from te_doctor.check.pipeline import load_rule_set
from te_doctor.engine.condition_parser import parse_leaf
from te_doctor.engine.conditions import Condition, Truth
from te_doctor.engine.evaluate import Outcome, evaluate, evaluate_rule
from te_doctor.engine.flatten import FlatFacts, flatten
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.file import load

FIXTURES = Path(__file__).parent / "fixtures"
RULES = {rule.id: rule for rule in load_rule_set()[0]}


def outcome(fixture: str, rule_id: str) -> Outcome:
    return evaluate_rule(flatten(load(FIXTURES / f"{fixture}.json")), RULES[rule_id]).outcome


@pytest.mark.parametrize(
    ("fixture", "rule_id", "expected"),
    [
        # FP8 needs cc 8.9: checked on an H100, nothing to check without a GPU.
        ("h100-smoke-verified", "TED102", Outcome.PASSED),
        ("no-gpu-laptop", "TED102", Outcome.NOT_APPLICABLE),
        # TE's cuDNN floor: checked with TE installed, not applicable without TE.
        ("h100-cuda12-te-ok", "TED303", Outcome.PASSED),
        ("l40s-no-te", "TED303", Outcome.NOT_APPLICABLE),
        # "driver not answering" reads `driver.gpu_count is unknown`: without a driver the
        # count is absent, so the rule is about something that is not here.
        ("no-gpu-laptop", "TED204", Outcome.NOT_APPLICABLE),
        ("h100-smoke-verified", "TED204", Outcome.PASSED),
        # the CPU-torch-on-a-GPU-machine rule needs a GPU: not applicable on a laptop
        ("no-gpu-laptop", "TED423", Outcome.NOT_APPLICABLE),
        ("plan-cpu-torch-on-gpu-box", "TED423", Outcome.FIRED),
    ],
)
def test_outcome_on_recorded_machines(fixture: str, rule_id: str, expected: Outcome) -> None:
    assert outcome(fixture, rule_id) is expected


def facts(**values: Any) -> FlatFacts:
    flat = {k.replace("__", "."): v for k, v in values.items()}
    return FlatFacts(
        {k: v if isinstance(v, Fact) else Fact.of(v, "test") for k, v in flat.items()}, ()
    )


def condition(*leaves: str) -> Condition:
    return Condition(all=tuple(parse_leaf(t) for t in leaves))


def test_false_whatever_the_absent_fact_is_passes() -> None:
    """TE absent, cuDNN present: "TE without cuDNN" is false whatever TE would be."""
    rule = RULES["TED301"]
    here = facts(
        te__version=Fact.absent("TE is not installed", "te"),
        cudnn__version="9.1.0",
        cudnn__copy_count=1,
        gpus__count=1,
    )
    assert rule.when.evaluate(here)[0] is Truth.FALSE
    finding = evaluate_rule(here, rule)
    assert finding.outcome is Outcome.PASSED and finding.absent == ()


def test_not_applicable_names_what_is_not_here() -> None:
    laptop = flatten(load(FIXTURES / "no-gpu-laptop.json"))
    finding = evaluate_rule(laptop, RULES["TED303"])
    assert finding.outcome is Outcome.NOT_APPLICABLE
    assert any(m.path == "te.version" for m in finding.absent)
    assert all(m.reason for m in finding.absent)


def test_no_gpu_makes_every_gpu_fact_missing_even_a_known_zero_count() -> None:
    """``gpus.count > 0`` is known false on a driver that lists no GPU: still not applicable."""
    from te_doctor.engine.applicability import not_here

    here = facts(gpus__count=0, gpu__compute_capability=Fact.absent("no visible GPU", "nvidia"))
    assert not_here(condition("gpus.count > 0", "gpu.compute_capability < 8.9"), here)
    with_gpu = facts(gpus__count=1, gpu__compute_capability="9.0")
    assert not_here(condition("gpus.count > 0", "gpu.compute_capability < 8.9"), with_gpu) == ()


def test_not_applicable_sorts_after_passed_and_is_never_shown_text() -> None:
    laptop = flatten(load(FIXTURES / "no-gpu-laptop.json"))
    findings = evaluate(laptop, list(RULES.values()))
    order = [f.outcome for f in findings]
    rank = {Outcome.FIRED: 0, Outcome.UNDECIDED: 1, Outcome.PASSED: 2, Outcome.NOT_APPLICABLE: 3}
    assert order == sorted(order, key=rank.__getitem__)
    assert all(not f.message for f in findings if f.outcome is Outcome.NOT_APPLICABLE)
