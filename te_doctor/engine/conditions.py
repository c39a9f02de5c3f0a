"""The condition language: one-line leaves combined by ``all`` / ``any`` / ``none``.

A leaf is ``PATH OP [OPERAND]``; the fact's declared type decides how the operand is parsed and
how values compare (versions with ``packaging``, compute capabilities as integer tuples). It is
parsed with one regular expression and a literal parser per type: no ``eval``, ``exec`` or
``ast``. Regexes compile when the rule loads. Evaluation is three-valued (Kleene): a leaf over
an unknown fact is UNKNOWN; over an absent fact it is FALSE (the thing does not exist, so no
comparison holds). ``is missing`` / ``is present`` test absence and presence (unknown stays
unknown); ``is unknown`` is true exactly when a probe could not tell.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version

from te_doctor.engine.fact_paths import FactType
from te_doctor.engine.flatten import FlatFacts
from te_doctor.snapshot.facts import Fact, FactState


class Truth(enum.Enum):
    """Kleene three-valued truth."""

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"


PRESENCE = frozenset({"is missing", "is present", "is unknown"})


@dataclass(frozen=True, slots=True)
class Leaf:
    """One parsed comparison. ``operand`` is a parsed literal, or ``ref`` names another fact."""

    text: str
    path: str
    quantifier: str
    op: str
    type: FactType
    operand: Any
    ref: str

    def evaluate(self, facts: FlatFacts) -> tuple[Truth, tuple[str, ...]]:
        """The truth of this leaf and the paths whose facts were unknown."""
        if not self.quantifier:
            return self._on(facts.get, facts.get)
        count = facts.get("gpus.count")
        if count.state is FactState.UNKNOWN:
            return Truth.UNKNOWN, ("gpus.count",)
        results = [self._on(_gpu_lookup(gpu, facts), facts.get) for gpu in facts.gpus]
        combine = any_of if self.quantifier == "any" else all_of
        return combine([r[0] for r in results]), tuple(p for r in results for p in r[1])

    def _on(
        self, lookup: Callable[[str], Fact[Any]], others: Callable[[str], Fact[Any]]
    ) -> tuple[Truth, tuple[str, ...]]:
        fact = lookup(self.path)
        if self.op == "is unknown":
            return _truth(fact.state is FactState.UNKNOWN), ()
        if self.op in PRESENCE:
            if fact.state is FactState.UNKNOWN:  # not known either way: neither missing nor present
                return Truth.UNKNOWN, (self.path,)
            missing = fact.state is FactState.ABSENT
            return _truth(missing if self.op == "is missing" else not missing), ()
        if fact.state is FactState.UNKNOWN:
            return Truth.UNKNOWN, (self.path,)
        if fact.state is FactState.ABSENT:
            return Truth.FALSE, ()
        operand = self.operand
        if self.ref:
            other = others(self.ref)
            if other.state is FactState.UNKNOWN:
                return Truth.UNKNOWN, (self.ref,)
            if other.state is FactState.ABSENT:
                return Truth.FALSE, ()
            operand = other.value
        try:
            return _truth(_compare(self.type, self.op, fact.value, operand)), ()
        except (InvalidVersion, ValueError, TypeError):
            return Truth.UNKNOWN, (self.path,)


def _gpu_lookup(gpu: Mapping[str, Fact[Any]], facts: FlatFacts) -> Callable[[str], Fact[Any]]:
    """Look ``gpu.*`` paths up in one GPU's facts, everything else in the machine's."""

    def lookup(path: str) -> Fact[Any]:
        return gpu[path] if path in gpu else facts.get(path)

    return lookup


def cc_tuple(text: str) -> tuple[int, int]:
    """``"12.0"`` -> ``(12, 0)``."""
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def _compare(fact_type: FactType, op: str, value: Any, operand: Any) -> bool:
    if fact_type is FactType.VERSION:
        value = Version(str(value))
        if op == "satisfies":
            return bool(operand.contains(value, prereleases=True))
        operand = (
            tuple(Version(str(o)) for o in operand)
            if isinstance(operand, tuple)
            else Version(str(operand))
        )
    elif fact_type is FactType.CC:
        value = cc_tuple(str(value))
        if isinstance(operand, str):
            operand = cc_tuple(operand)
    if op in ("matches", "not matches"):
        return bool(operand.search(str(value))) == (op == "matches")
    if op in ("contains", "not contains"):
        return (str(operand) in value) == (op == "contains")
    if op in ("in", "not in"):
        return (value in operand) == (op == "in")
    return bool(ORDER_OPS[op](value, operand))


ORDER_OPS: Mapping[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _truth(value: bool) -> Truth:
    return Truth.TRUE if value else Truth.FALSE


def all_of(values: Sequence[Truth]) -> Truth:
    """Kleene AND."""
    if Truth.FALSE in values:
        return Truth.FALSE
    return Truth.UNKNOWN if Truth.UNKNOWN in values else Truth.TRUE


def any_of(values: Sequence[Truth]) -> Truth:
    """Kleene OR."""
    if Truth.TRUE in values:
        return Truth.TRUE
    return Truth.UNKNOWN if Truth.UNKNOWN in values else Truth.FALSE


def negate(value: Truth) -> Truth:
    """Kleene NOT."""
    return {Truth.TRUE: Truth.FALSE, Truth.FALSE: Truth.TRUE}.get(value, Truth.UNKNOWN)


@dataclass(frozen=True, slots=True)
class Condition:
    """``all`` of these leaves, ``any`` of those, ``none`` of the rest (each part optional)."""

    all: tuple[Leaf, ...] = ()
    any: tuple[Leaf, ...] = ()
    none: tuple[Leaf, ...] = ()

    def leaves(self) -> tuple[Leaf, ...]:
        """Every leaf, in order."""
        return self.all + self.any + self.none

    def evaluate(self, facts: FlatFacts) -> tuple[Truth, tuple[str, ...]]:
        """The truth of the condition and the facts that were unknown, in leaf order."""
        unknown: list[str] = []

        def truth_of(leaf: Leaf) -> Truth:
            truth, missing = leaf.evaluate(facts)
            unknown.extend(p for p in missing if p not in unknown)
            return truth

        result = self.combine(truth_of)
        return result, tuple(unknown) if result is Truth.UNKNOWN else ()

    def combine(self, truth_of: Callable[[Leaf], Truth]) -> Truth:
        """The condition's truth from each leaf's, as ``truth_of`` gives it (all leaves run)."""
        parts = []
        if self.all:
            parts.append(all_of([truth_of(leaf) for leaf in self.all]))
        if self.any:
            parts.append(any_of([truth_of(leaf) for leaf in self.any]))
        if self.none:
            parts.append(negate(any_of([truth_of(leaf) for leaf in self.none])))
        return all_of(parts)
