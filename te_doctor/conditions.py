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
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from te_doctor.fact_paths import FACT_TYPES, FactSpec, FactType
from te_doctor.facts import Fact, FactState
from te_doctor.flatten import FlatFacts


class Truth(enum.Enum):
    """Kleene three-valued truth."""

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"


class ConditionError(ValueError):
    """A leaf that does not parse or does not fit its fact's type; the message says why."""


_LEAF = re.compile(
    r"^(?P<path>[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)+)\s+"
    r"(?P<op>==|!=|<=|>=|<|>|not in|in|satisfies|not matches|matches|not contains|contains"
    r"|is missing|is present|is unknown)(?:\s+(?P<operand>.+?))?\s*$"
)
_QUANTIFIERS = ("gpus.any.", "gpus.all.")
_ORDERED = {FactType.VERSION, FactType.CC, FactType.INT}
#: Which operators each fact type accepts.
OPERATORS: Mapping[FactType, frozenset[str]] = {
    FactType.VERSION: frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "not in", "satisfies"}),
    FactType.CC: frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "not in"}),
    FactType.INT: frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "not in"}),
    FactType.BOOL: frozenset({"==", "!="}),
    FactType.STR: frozenset({"==", "!=", "in", "not in", "matches", "not matches"}),
    FactType.TEXT: frozenset({"matches", "not matches"}),
    FactType.LIST: frozenset({"contains", "not contains"}),
}
_PRESENCE = frozenset({"is missing", "is present", "is unknown"})


def spec_of(path: str) -> FactSpec | None:
    """The declared spec of a path, families (``packages.x``, ``env.X``) included."""
    if path in FACT_TYPES:
        return FACT_TYPES[path]
    family = path.split(".", 1)[0] + ".*"
    return FACT_TYPES.get(family)


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
        if self.op in _PRESENCE:
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


def parse_leaf(text: str) -> Leaf:
    """Parse and type-check one leaf; raises ``ConditionError``."""
    match = _LEAF.match(text.strip())
    if not match:
        raise ConditionError(f"cannot parse {text!r}: expected 'fact.path OPERATOR value'")
    path, op, raw = match.group("path"), match.group("op"), match.group("operand")
    quantifier = ""
    if path.startswith(_QUANTIFIERS):
        quantifier = path.split(".")[1]
        path = "gpu." + path.split(".", 2)[2]
    spec = spec_of(path)
    if spec is None:
        raise ConditionError(f"unknown fact '{path}'" + _suggest(path))
    if op in _PRESENCE:
        if raw:
            raise ConditionError(f"'{op}' takes no value (got {raw!r})")
        return Leaf(text, path, quantifier, op, spec.type, None, "")
    if op not in OPERATORS[spec.type]:
        allowed = ", ".join(sorted(OPERATORS[spec.type] | _PRESENCE))
        raise ConditionError(
            f"operator '{op}' does not fit {spec.type.value} fact '{path}' (use: {allowed})"
        )
    if raw is None:
        raise ConditionError(f"'{op}' needs a value")
    if re.fullmatch(r"[a-z][a-z0-9_]*(\.[A-Za-z0-9_]+)+", raw):  # another fact, not a literal
        ref_spec = spec_of(raw)
        if ref_spec is None:
            raise ConditionError(f"unknown fact '{raw}'" + _suggest(raw))
        if ref_spec.type is not spec.type or op not in _ORDER_OPS:
            raise ConditionError(
                f"cannot compare {spec.type.value} '{path}' with "
                f"{ref_spec.type.value} '{raw}' using '{op}'"
            )
        return Leaf(text, path, quantifier, op, spec.type, None, raw)
    return Leaf(text, path, quantifier, op, spec.type, parse_operand(spec.type, op, raw), "")


def parse_operand(fact_type: FactType, op: str, raw: str) -> Any:
    """Parse a literal for ``op`` against a fact of ``fact_type``; raises ``ConditionError``."""
    if op in ("matches", "not matches"):
        return _regex(raw)
    if op == "satisfies":
        text = _json_string(raw)
        try:
            return SpecifierSet(text)
        except InvalidSpecifier:
            raise ConditionError(
                f'{text!r} is not a version specifier such as ">=2.1,<2.8"'
            ) from None
    if op in ("in", "not in"):
        try:
            items = json.loads(raw)
        except json.JSONDecodeError:
            items = None
        if not isinstance(items, list) or not items:
            raise ConditionError(f'\'{op}\' needs a JSON list such as ["a", "b"] (got {raw})')
        return tuple(
            _scalar(fact_type, item if isinstance(item, str) else json.dumps(item))
            for item in items
        )
    return _scalar(fact_type, raw)


def _scalar(fact_type: FactType, raw: str) -> Any:
    text = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == '"' else raw
    if fact_type is FactType.VERSION:
        try:
            return Version(text)
        except InvalidVersion:
            raise ConditionError(f"{text!r} is not a version") from None
    if fact_type is FactType.CC:
        if not re.fullmatch(r"\d+\.\d+", text):
            raise ConditionError(f"{text!r} is not a compute capability such as 8.9 or 12.0")
        return cc_tuple(text)
    if fact_type is FactType.INT:
        if not re.fullmatch(r"-?\d+", text):
            raise ConditionError(f"{text!r} is not an integer")
        return int(text)
    if fact_type is FactType.BOOL:
        if text not in ("true", "false"):
            raise ConditionError(f"{text!r} is not true or false")
        return text == "true"
    return text


def _json_string(raw: str) -> str:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, str):
        raise ConditionError(f"expected a quoted string, got {raw}")
    return value


def _regex(raw: str) -> re.Pattern[str]:
    match = re.fullmatch(r"/(.*)/([im]*)", raw)
    if not match:
        raise ConditionError(f"expected /regex/ with optional flags i or m, got {raw}")
    flags = (re.IGNORECASE if "i" in match.group(2) else 0) | (
        re.MULTILINE if "m" in match.group(2) else 0
    )
    try:
        return re.compile(match.group(1), flags)
    except re.error as exc:
        raise ConditionError(f"bad regular expression /{match.group(1)}/: {exc}") from None


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
    return bool(_ORDER_OPS[op](value, operand))


_ORDER_OPS: Mapping[str, Callable[[Any, Any], bool]] = {
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

        def run(leaves: tuple[Leaf, ...]) -> list[Truth]:
            results = []
            for leaf in leaves:
                truth, missing = leaf.evaluate(facts)
                results.append(truth)
                unknown.extend(p for p in missing if p not in unknown)
            return results

        parts = []
        if self.all:
            parts.append(all_of(run(self.all)))
        if self.any:
            parts.append(any_of(run(self.any)))
        if self.none:
            parts.append(negate(any_of(run(self.none))))
        result = all_of(parts)
        return result, tuple(unknown) if result is Truth.UNKNOWN else ()


def _suggest(path: str) -> str:
    import difflib

    close = difflib.get_close_matches(path, [p for p in FACT_TYPES if not p.endswith("*")], n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
