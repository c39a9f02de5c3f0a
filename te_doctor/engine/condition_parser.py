"""Parse and type-check one condition leaf, ``PATH OP [OPERAND]``: a regex, a literal parser."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from te_doctor.engine.conditions import ORDER_OPS, PRESENCE, Leaf, cc_tuple
from te_doctor.engine.fact_paths import FACT_TYPES, FactSpec, FactType


class ConditionError(ValueError):
    """A leaf that does not parse or does not fit its fact's type; the message says why."""


_LEAF = re.compile(
    r"^(?P<path>[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)+)\s+"
    r"(?P<op>==|!=|<=|>=|<|>|not in|in|satisfies|not matches|matches|not contains|contains"
    r"|is missing|is present|is unknown)(?:\s+(?P<operand>.+?))?\s*$"
)
_QUANTIFIERS = ("gpus.any.", "gpus.all.")
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


def spec_of(path: str) -> FactSpec | None:
    """The declared spec of a path, families (``packages.x``, ``env.X``) included."""
    if path in FACT_TYPES:
        return FACT_TYPES[path]
    family = path.split(".", 1)[0] + ".*"
    return FACT_TYPES.get(family)


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
    if op in PRESENCE:
        if raw:
            raise ConditionError(f"'{op}' takes no value (got {raw!r})")
        return Leaf(text, path, quantifier, op, spec.type, None, "")
    if op not in OPERATORS[spec.type]:
        allowed = ", ".join(sorted(OPERATORS[spec.type] | PRESENCE))
        raise ConditionError(
            f"operator '{op}' does not fit {spec.type.value} fact '{path}' (use: {allowed})"
        )
    if raw is None:
        raise ConditionError(f"'{op}' needs a value")
    if re.fullmatch(r"[a-z][a-z0-9_]*(\.[A-Za-z0-9_]+)+", raw):  # another fact, not a literal
        ref_spec = spec_of(raw)
        if ref_spec is None:
            raise ConditionError(f"unknown fact '{raw}'" + _suggest(raw))
        if ref_spec.type is not spec.type or op not in ORDER_OPS:
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


def _suggest(path: str) -> str:
    import difflib

    close = difflib.get_close_matches(path, [p for p in FACT_TYPES if not p.endswith("*")], n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
