"""Every shipped rule: valid, documented, sourced, and proven by its own examples.

The diagnostic rules (``rules/*.toml``) and the planning rules (``rules/plan/*.toml`` but the
release data, read by ``te-doctor plan``) pass the same checks; ids and names are unique across
both sets, and planning rules rule out no execution path (``blocks`` does not apply to them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.engine.conditions import Truth
from te_doctor.engine.paths import load_paths
from te_doctor.engine.rule_examples import check_examples, example_facts
from te_doctor.engine.rule_model import Rule, Severity
from te_doctor.engine.rules import builtin_rules_dir, load_rule_file, load_rules

PATHS = load_paths()
RULES = load_rules(known_paths=[p.id for p in PATHS])
PLAN_DIR = builtin_rules_dir() / "plan"
PLAN_FILES = sorted(p for p in PLAN_DIR.glob("*.toml") if p.name != "releases.toml")
PLAN_RULES = tuple(rule for path in PLAN_FILES for rule in load_rule_file(path))
ALL_RULES = RULES + PLAN_RULES
IDS = [rule.id for rule in ALL_RULES]
#: Facts that make a planning rule version-dependent: the planner moves to an older TE release
#: when an error reading one of them fires.
PLAN_VERSION_FACTS = {"plan.te_version", "plan.core_cuda_major"}


def test_there_are_at_least_50_rules_with_unique_ids_and_names() -> None:
    assert len(RULES) >= 50, len(RULES)
    assert len(set(IDS)) == len(IDS), sorted(i for i in IDS if IDS.count(i) > 1)
    names = [rule.name for rule in ALL_RULES]
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)


def test_planning_rules_are_their_own_set() -> None:
    assert {"build.toml", "versions.toml"} <= {p.name for p in PLAN_FILES}
    assert len(PLAN_RULES) >= 18, len(PLAN_RULES)
    for rule in PLAN_RULES:
        assert rule.id.startswith("TED9"), rule.id
        assert rule.blocks == (), f"{rule.id}: planning rules block no execution path"
        assert Path(rule.file).parent == PLAN_DIR
    # the diagnostic rule set does not pick up the planning rules, nor they the plan.* facts
    assert not {rule.id for rule in RULES} & {rule.id for rule in PLAN_RULES}
    assert not any(p.startswith("plan.") for rule in RULES for p in rule.facts_used())


def test_version_dependent_and_machine_rules_are_split_by_file() -> None:
    """versions.toml decides which TE release fits; build.toml names blockers to fix."""
    for rule in PLAN_RULES:
        reads_version = bool(PLAN_VERSION_FACTS & set(rule.facts_used()))
        if Path(rule.file).name == "versions.toml":
            assert reads_version, f"{rule.id} belongs in build.toml"
        else:
            assert not reads_version, f"{rule.id} reads the planned version: versions.toml"


@pytest.mark.parametrize("rule", ALL_RULES, ids=IDS)
def test_examples_fire_and_stay_clear(rule: Rule) -> None:
    assert check_examples(rule) == []


@pytest.mark.parametrize("rule", ALL_RULES, ids=IDS)
def test_clear_examples_are_near_misses(rule: Rule) -> None:
    """A clear example must touch a fact the rule reads: an empty overlay proves nothing."""
    used = set(rule.facts_used())
    for example in rule.clear:
        touched = set(example.facts) | {p for gpu in example.gpus or () for p in gpu}
        assert touched & used, f"{rule.id}: a clear example sets none of {sorted(used)}"


@pytest.mark.parametrize("rule", ALL_RULES, ids=IDS)
def test_documented_and_sourced(rule: Rule) -> None:
    assert rule.source.strip() and rule.why.strip() and rule.summary.strip()
    if rule.severity is Severity.ERROR:
        assert rule.fix.strip()
    assert rule.id.startswith("TED") and rule.since


@pytest.mark.parametrize("rule", ALL_RULES, ids=IDS)
def test_commands_in_fixes_and_summaries_are_one_line(rule: Rule) -> None:
    """A command in backticks is printed as written: a line break inside it splits the command
    a user copies (rule files join such lines with a trailing backslash)."""
    for text in (rule.fix, rule.summary):
        spans = text.split("`")[1::2]
        assert not [span for span in spans if "\n" in span], f"{rule.id}: {spans}"


@pytest.mark.parametrize("rule", ALL_RULES, ids=IDS)
def test_summary_interpolates_when_fired(rule: Rule) -> None:
    from te_doctor.engine.evaluate import interpolate

    text = interpolate(rule.summary, example_facts(rule.fires[0]))
    assert "{" not in text


@pytest.mark.parametrize("rule", PLAN_RULES, ids=[rule.id for rule in PLAN_RULES])
def test_planning_fix_interpolates_when_fired(rule: Rule) -> None:
    from te_doctor.engine.evaluate import interpolate

    text = interpolate(rule.fix, example_facts(rule.fires[0]))
    assert "{" not in text and text.count("?") == rule.fix.count("?"), text


def test_every_rule_passes_on_the_baseline() -> None:
    from te_doctor.engine.rule_model import Example

    facts = example_facts(Example({}, None))
    fired = [rule.id for rule in ALL_RULES if rule.when.evaluate(facts)[0] is not Truth.FALSE]
    assert fired == []
