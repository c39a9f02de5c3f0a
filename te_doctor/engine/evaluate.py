"""The rule engine: a pure function of (facts, rules) that returns findings.

A rule whose condition is TRUE fires; UNKNOWN makes it "undecided" with the facts that were
missing (never "passed"); FALSE passes, unless it is false only because something it reads is
not here, which makes it "not applicable" (``te_doctor/engine/applicability.py`` defines the
line). Findings come back in a stable order: outcome, severity, then rule id.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from te_doctor.engine.applicability import not_here
from te_doctor.engine.conditions import Truth
from te_doctor.engine.error_capture import error_facts
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_model import Rule, Severity
from te_doctor.snapshot.facts import FactState

_INTERPOLATION = re.compile(r"\{([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)+)\}")


class Outcome(str, enum.Enum):
    """What evaluating one rule gave."""

    FIRED = "fired"
    UNDECIDED = "undecided"
    PASSED = "passed"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True, slots=True)
class MissingFact:
    """A fact a rule needed but that was unknown, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Finding:
    """The result of one rule on one machine."""

    rule_id: str
    name: str
    severity: Severity
    category: str
    outcome: Outcome
    message: str
    fix: str
    blocks: tuple[str, ...]
    #: For an undecided finding: the facts that were unknown, and why.
    missing: tuple[MissingFact, ...]
    #: For a not-applicable finding: what it reads that is not here, and why.
    absent: tuple[MissingFact, ...] = ()

    @property
    def fired(self) -> bool:
        """True when the rule's condition held."""
        return self.outcome is Outcome.FIRED


#: Error texts besides the smoke test's that the error signatures are tried on, in order:
#: what NVML, /proc/driver/nvidia and nvidia-smi said.
OTHER_ERROR_TEXTS = ("driver.evidence",)


def evaluate(
    facts: FlatFacts, rules: Sequence[Rule], *, unknown_text: str = "?"
) -> tuple[Finding, ...]:
    """One finding per rule (fired, undecided, passed or not applicable), worst first.

    ``unknown_text`` stands in the texts for a fact that has no value. Error signatures that do
    not fire on the smoke test's error text are tried on each of ``OTHER_ERROR_TEXTS``: a
    tool's failure is recognised like a pasted or a smoke error.
    """
    findings = [evaluate_rule(facts, rule, unknown_text=unknown_text) for rule in rules]
    findings = step_back(findings, rules)
    for path in OTHER_ERROR_TEXTS:
        text = facts.get(path)
        if text.known and text.value:
            other = with_error_text(facts, text.value, text.source)
            found = fired_on(other, rules, findings, unknown_text)
            findings = [found.get(f.rule_id, f) for f in findings]
    order = {Outcome.FIRED: 0, Outcome.UNDECIDED: 1, Outcome.PASSED: 2, Outcome.NOT_APPLICABLE: 3}
    return tuple(sorted(findings, key=lambda f: (order[f.outcome], -f.severity.rank, f.rule_id)))


def evaluate_rule(facts: FlatFacts, rule: Rule, *, unknown_text: str = "?") -> Finding:
    """Evaluate one rule (``unknown_text``: the text for a fact without a value)."""
    truth, unknown = rule.when.evaluate(facts)
    outcome = {Truth.TRUE: Outcome.FIRED, Truth.UNKNOWN: Outcome.UNDECIDED}.get(
        truth, Outcome.PASSED
    )
    absent = not_here(rule.when, facts) if outcome is Outcome.PASSED else ()
    if absent:
        outcome = Outcome.NOT_APPLICABLE
    shown = outcome in (Outcome.FIRED, Outcome.UNDECIDED)  # no text for the others: skip it
    return Finding(
        rule_id=rule.id,
        name=rule.name,
        severity=rule.severity,
        category=rule.category,
        outcome=outcome,
        message=interpolate(rule.summary, facts, unknown_text) if shown else "",
        fix=interpolate(rule.fix, facts, unknown_text) if shown else "",
        blocks=rule.blocks,
        missing=tuple(MissingFact(path, facts.get(path).reason) for path in unknown),
        absent=tuple(MissingFact(path, reason) for path, reason in absent),
    )


def with_error_text(facts: FlatFacts, text: str, source: str) -> FlatFacts:
    """``facts`` with ``text`` as the error the signatures read."""
    values = {**facts.values, **error_facts(text, source)}
    return FlatFacts(values, facts.gpus, facts.environment_complete)


def fired_on(
    facts: FlatFacts, rules: Sequence[Rule], findings: Sequence[Finding], unknown_text: str
) -> dict[str, Finding]:
    """The error signatures among ``rules`` that had not fired in ``findings`` and fire on
    ``facts`` (another error text), by rule id."""
    done = {f.rule_id for f in findings if f.fired}
    rest = [rule for rule in rules if rule.reads_error_text() and rule.id not in done]
    fired = (evaluate_rule(facts, rule, unknown_text=unknown_text) for rule in rest)
    return {f.rule_id: f for f in fired if f.fired}


def step_back(findings: Sequence[Finding], rules: Sequence[Rule]) -> list[Finding]:
    """Generic failures step back for the error signatures that name their cause.

    When an error signature of error severity fired (on the smoke child's error text: the
    same rules and the same fix ``triage`` gives for that text pasted), a fired ``generic``
    finding ("importing torch failed in the smoke test") drops to info and points at them, and
    the execution paths it blocked are blocked by them instead: the cause leads, and no path
    becomes viable because the generic finding stepped back.
    """
    generic = {rule.id for rule in rules if rule.generic}
    signatures = {rule.id for rule in rules if rule.reads_error_text()}
    causes = [
        f.rule_id
        for f in findings
        if f.fired and f.rule_id in signatures and f.severity is Severity.ERROR
    ]
    stepping = {f.rule_id: f for f in findings if f.fired and f.rule_id in generic}
    if not causes or not stepping:
        return list(findings)
    named = ", ".join(causes)
    handed = tuple(dict.fromkeys(path for f in stepping.values() for path in f.blocks))
    result = []
    for finding in findings:
        if finding.rule_id in stepping:
            finding = replace(
                finding,
                severity=Severity.INFO,
                message=f"{finding.message} (the cause: {named})",
                fix=f"See {named}: the cause of this error, with its fix.",
                blocks=(),
            )
        elif finding.rule_id in causes:
            finding = replace(finding, blocks=tuple(dict.fromkeys((*finding.blocks, *handed))))
        result.append(finding)
    return result


def interpolate(text: str, facts: FlatFacts, unknown_text: str = "?") -> str:
    """Replace ``{fact.path}`` with the fact's value, or ``unknown_text`` when it has none (no
    str.format)."""

    def value(match: re.Match[str]) -> str:
        fact = facts.get(match.group(1))
        if fact.state is not FactState.KNOWN:
            return unknown_text
        return _show(fact.value)

    return _INTERPOLATION.sub(value, text)


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return ", ".join(value) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
