"""``te-doctor diff``: what differs between two machines, and which difference explains what.

Pure. Only the facts some rule reads are compared (a different hostname explains nothing);
each finding that fires on one side only is explained by the differing facts its rule reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from te_doctor.engine.evaluate import Finding, evaluate
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_model import Rule
from te_doctor.snapshot.facts import FactState


@dataclass(frozen=True, slots=True)
class FactDifference:
    """One fact that differs: its value (or why there is none) on each side."""

    path: str
    left: str
    right: str


@dataclass(frozen=True, slots=True)
class OneSided:
    """A finding that fires on one side only, and the differing facts its rule reads."""

    side: str
    finding: Finding
    explained_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Comparison:
    """Differences, one-sided findings, and the differences ranked by what they explain."""

    left_name: str
    right_name: str
    differences: tuple[FactDifference, ...]
    one_sided: tuple[OneSided, ...]
    likely_causes: tuple[tuple[str, int], ...]


def compare(
    left: FlatFacts, right: FlatFacts, rules: Sequence[Rule], names: tuple[str, str] = ("A", "B")
) -> Comparison:
    """Compare two machines' facts under ``rules``."""
    watched = _watched_paths(rules, left, right)
    differences = tuple(
        FactDifference(path, _show(left, path), _show(right, path))
        for path in sorted(watched)
        if _show(left, path) != _show(right, path)
    )
    differing = {d.path for d in differences}
    fired = [{f.rule_id: f for f in evaluate(side, rules) if f.fired} for side in (left, right)]
    by_id = {rule.id: rule for rule in rules}
    one_sided = []
    for side, mine, other in ((names[0], fired[0], fired[1]), (names[1], fired[1], fired[0])):
        for rule_id in sorted(set(mine) - set(other)):
            reads = by_id[rule_id].facts_used()
            explained = tuple(p for p in differing if p in reads)
            one_sided.append(OneSided(side, mine[rule_id], tuple(sorted(explained))))
    counts: dict[str, int] = {}
    weight: dict[str, int] = {}
    for entry in one_sided:
        for path in entry.explained_by:
            counts[path] = counts.get(path, 0) + 1
            weight[path] = (
                weight.get(path, 0) + 1 + entry.finding.severity.rank
            )  # errors count most
    likely = tuple((path, counts[path]) for path in sorted(counts, key=lambda p: (-weight[p], p)))
    return Comparison(names[0], names[1], differences, tuple(one_sided), likely)


def _watched_paths(rules: Sequence[Rule], *sides: FlatFacts) -> set[str]:
    """Paths some rule reads, with families (packages.*, env.*) expanded to what is present."""
    used = {path for rule in rules for path in rule.facts_used()}
    present = {path for side in sides for path in side.values}
    families = {path.split(".", 1)[0] for path in used if path.startswith(("packages.", "env."))}
    return used | {p for p in present if p.split(".", 1)[0] in families}


def _family_match(path: str, reads: Sequence[str]) -> bool:
    return (
        path.startswith("packages.")
        and any(r.startswith("packages.") for r in reads)
        and path in reads
    )


def _show(facts: FlatFacts, path: str) -> str:
    fact = facts.get(path)
    if fact.state is FactState.KNOWN:
        value = fact.value
        return ", ".join(value) if isinstance(value, tuple) else str(value)
    return f"({fact.state.value})"
