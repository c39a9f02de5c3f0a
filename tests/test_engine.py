"""The rule engine on hand-made facts: what a finding carries, and how its text is filled in."""

from __future__ import annotations

from typing import Any

import pytest

from te_doctor.engine.evaluate import (
    Finding,
    MissingFact,
    Outcome,
    evaluate,
    evaluate_rule,
    interpolate,
    with_error_text,
)
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_model import Rule, Severity
from te_doctor.snapshot.facts import Fact
from tests import hand_made

SUMMARY = "TE {te.version} on {gpu.name}"
FIX = "pip install transformer_engine=={te.version}"


def facts(**values: Fact[Any]) -> FlatFacts:
    return FlatFacts({path.replace("__", "."): fact for path, fact in values.items()}, ())


def rule(when: str, *, rule_id: str = "TED990", severity: Severity = Severity.WARNING) -> Rule:
    return hand_made.rule(
        rule_id, when, severity=severity, summary=SUMMARY, fix=FIX, blocks=("te-fp8-current",)
    )


H100 = facts(
    te__version=Fact.of("2.1.0", "t"),
    gpu__name=Fact.of("NVIDIA H100", "t"),
    gpu__compute_capability=Fact.unknown("nvidia-smi timed out", "nvidia"),
)


def test_a_fired_finding_carries_its_rule_and_fills_in_the_facts() -> None:
    finding = evaluate_rule(H100, rule("te.version < 2.2"))
    assert finding == Finding(
        rule_id="TED990",
        name="rule-ted990",
        severity=Severity.WARNING,
        category="config",
        outcome=Outcome.FIRED,
        message="TE 2.1.0 on NVIDIA H100",
        fix="pip install transformer_engine==2.1.0",
        blocks=("te-fp8-current",),
        missing=(),
    )


def test_an_undecided_finding_names_each_unknown_fact_and_why() -> None:
    finding = evaluate_rule(H100, rule("gpu.compute_capability >= 8.9"))
    assert finding.outcome is Outcome.UNDECIDED
    assert finding.missing == (MissingFact("gpu.compute_capability", "nvidia-smi timed out"),)
    assert finding.message == "TE 2.1.0 on NVIDIA H100"  # an undecided rule is shown too


def test_a_passed_finding_shows_no_text() -> None:
    finding = evaluate_rule(H100, rule("te.version >= 2.2"))
    assert finding.outcome is Outcome.PASSED
    assert (finding.message, finding.fix, finding.missing) == ("", "", ())


def test_findings_come_fired_then_undecided_then_passed_worst_first_then_by_id() -> None:
    rules = [
        rule("te.version >= 2.2", rule_id="TED901", severity=Severity.ERROR),
        rule("gpu.compute_capability >= 8.9", rule_id="TED902", severity=Severity.ERROR),
        rule("te.version < 2.2", rule_id="TED904", severity=Severity.INFO),
        rule("te.version < 2.2", rule_id="TED905", severity=Severity.ERROR),
        rule("te.version < 2.2", rule_id="TED903", severity=Severity.ERROR),
    ]
    order = [(f.rule_id, f.outcome) for f in evaluate(H100, rules)]
    assert order == [
        ("TED903", Outcome.FIRED),
        ("TED905", Outcome.FIRED),
        ("TED904", Outcome.FIRED),
        ("TED902", Outcome.UNDECIDED),
        ("TED901", Outcome.PASSED),
    ]


@pytest.mark.parametrize(
    ("fact", "shown"),
    [
        (Fact.of("12.4", "t"), "12.4"),
        (Fact.of(8, "t"), "8"),
        (Fact.of(0, "t"), "0"),
        (Fact.of(True, "t"), "yes"),
        (Fact.of(False, "t"), "no"),
        (Fact.of(("sm_80", "sm_90"), "t"), "sm_80, sm_90"),
        (Fact.of(("sm_90",), "t"), "sm_90"),
        (Fact.of((), "t"), "none"),
        (Fact.unknown("nvidia-smi hung", "t"), "?"),
        (Fact.absent("not installed", "t"), "?"),
    ],
)
def test_interpolation_shows_each_kind_of_value(fact: Fact[Any], shown: str) -> None:
    assert interpolate("[{cuda.runtime_version}]", facts(cuda__runtime_version=fact)) == (
        f"[{shown}]"
    )


def test_interpolation_leaves_text_that_names_no_fact_alone() -> None:
    text = "set {MAX_JOBS} or {} then {te.version}"
    assert interpolate(text, H100) == "set {MAX_JOBS} or {} then 2.1.0"


def test_unknown_text_stands_in_for_a_fact_without_a_value() -> None:
    fired = rule("te.version < 2.2")
    blind = facts(te__version=Fact.of("2.1.0", "t"), gpu__name=Fact.unknown("hung", "nvidia"))
    (default,) = evaluate(blind, [fired])
    assert (default.message, default.fix) == (
        "TE 2.1.0 on ?",
        "pip install transformer_engine==2.1.0",
    )
    (worded,) = evaluate(blind, [fired], unknown_text="(not known)")
    assert worded.message == "TE 2.1.0 on (not known)"
    fix_only = hand_made.rule("TED990", "te.version < 2.2", fix="{gpu.name}")
    assert evaluate_rule(blind, fix_only).fix == "?"
    assert evaluate_rule(blind, fix_only, unknown_text="(not known)").fix == "(not known)"


def test_a_rule_about_something_not_here_is_not_applicable_and_says_what() -> None:
    no_te = facts(te__version=Fact.absent("Transformer Engine is not installed", "packages"))
    finding = evaluate_rule(no_te, rule("te.version < 2.2"))
    assert finding.outcome is Outcome.NOT_APPLICABLE
    assert finding.absent == (MissingFact("te.version", "Transformer Engine is not installed"),)
    assert (finding.message, finding.fix, finding.missing) == ("", "", ())


LOST = "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost"


def lost_gpu_signature() -> Rule:
    """An error signature (it reads ``smoke.error_text``) naming a GPU fact in its text."""
    return hand_made.rule(
        "TED991",
        "smoke.error_text matches /GPU is lost/",
        severity=Severity.ERROR,
        summary="{gpu.name} fell off the bus",
        blocks=("te-fp8-current",),
    )


def test_signatures_also_read_what_the_driver_said() -> None:
    """The smoke test passed (no error text), but NVML's words name the cause."""
    said = facts(
        smoke__error_text=Fact.absent("the smoke test passed", "smoke"),
        driver__evidence=Fact.of(LOST, "nvidia:nvml"),
        gpu__name=Fact.unknown("NVML: GPU is lost", "nvidia"),
    )
    (finding,) = evaluate(said, [lost_gpu_signature()], unknown_text="(not known)")
    assert (finding.outcome, finding.message) == (Outcome.FIRED, "(not known) fell off the bus")
    quiet = facts(
        smoke__error_text=Fact.absent("the smoke test passed", "smoke"),
        driver__evidence=Fact.of("NVML: 1 GPU read", "nvidia:nvml"),
    )
    assert not evaluate(quiet, [lost_gpu_signature()])[0].fired


def test_a_signature_that_fired_on_the_smoke_error_stays_fired() -> None:
    fired_on_smoke = facts(
        smoke__error_text=Fact.of(LOST, "smoke"), driver__evidence=Fact.of("", "nvidia")
    )
    (finding,) = evaluate(fired_on_smoke, [lost_gpu_signature()])
    assert finding.fired and finding.message == "? fell off the bus"


def test_with_error_text_keeps_everything_else() -> None:
    base = FlatFacts({"te.version": Fact.of("2.1.0", "t")}, ({"gpu.name": Fact.of("L4", "t")},))
    base = FlatFacts(base.values, base.gpus, environment_complete=False)
    told = with_error_text(base, "ImportError: libcudnn.so.9: cannot open", "nvidia:nvml")
    assert told.get("smoke.error_text") == Fact.of(
        "ImportError: libcudnn.so.9: cannot open", "nvidia:nvml"
    )
    assert told.get("smoke.error_line").value == "ImportError: libcudnn.so.9: cannot open"
    assert told.get("te.version") == Fact.of("2.1.0", "t")
    assert (told.gpus, told.environment_complete) == (base.gpus, False)
