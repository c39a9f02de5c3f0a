"""Every shipped rule: valid, documented, sourced, and proven by its own examples."""

from __future__ import annotations

import pytest

from te_doctor.conditions import Truth
from te_doctor.paths import load_paths
from te_doctor.rule_examples import check_examples, example_facts
from te_doctor.rules import Rule, Severity, load_rules

PATHS = load_paths()
RULES = load_rules(known_paths=[p.id for p in PATHS])
IDS = [rule.id for rule in RULES]


def test_there_are_at_least_50_rules_with_unique_ids_and_names() -> None:
    assert len(RULES) >= 50, len(RULES)
    assert len(set(IDS)) == len(IDS)
    assert len({rule.name for rule in RULES}) == len(RULES)


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_examples_fire_and_stay_clear(rule: Rule) -> None:
    assert check_examples(rule) == []


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_clear_examples_are_near_misses(rule: Rule) -> None:
    """A clear example must touch a fact the rule reads: an empty overlay proves nothing."""
    used = set(rule.facts_used())
    for example in rule.clear:
        touched = set(example.facts) | {p for gpu in example.gpus or () for p in gpu}
        assert touched & used, f"{rule.id}: a clear example sets none of {sorted(used)}"


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_documented_and_sourced(rule: Rule) -> None:
    assert rule.source.strip() and rule.why.strip() and rule.summary.strip()
    if rule.severity is Severity.ERROR:
        assert rule.fix.strip()
    assert rule.id.startswith("TED") and rule.since


@pytest.mark.parametrize("rule", RULES, ids=IDS)
def test_summary_interpolates_when_fired(rule: Rule) -> None:
    from te_doctor.engine import interpolate

    text = interpolate(rule.summary, example_facts(rule.fires[0]))
    assert "{" not in text


def test_every_rule_passes_on_the_baseline() -> None:
    from te_doctor.rules import Example

    facts = example_facts(Example({}, None))
    fired = [rule.id for rule in RULES if rule.when.evaluate(facts)[0] is not Truth.FALSE]
    assert fired == []
