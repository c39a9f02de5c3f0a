"""Validate one ``[[rule]]`` table field by field, naming the file, rule and field at fault."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from te_doctor.engine.condition_parser import ConditionError, parse_leaf, spec_of
from te_doctor.engine.conditions import Condition
from te_doctor.engine.fact_paths import FactType
from te_doctor.engine.rule_model import (
    ABSENT,
    CATEGORIES,
    UNKNOWN,
    Example,
    ExampleValue,
    Rule,
    RuleFileError,
    Severity,
)

_REQUIRED = (
    "id",
    "name",
    "severity",
    "category",
    "summary",
    "why",
    "source",
    "since",
    "when",
    "examples",
)
_OPTIONAL = ("fix", "blocks", "docs", "status")
_ID = re.compile(r"^[A-Z]{2,8}\d{3,4}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_INTERPOLATION = re.compile(r"\{([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+)+)\}")


def parse_rule(data: Any, where: str, file: str, paths: frozenset[str] | None) -> Rule:
    if not isinstance(data, dict):
        raise RuleFileError(f"{where}: expected a table")
    if isinstance(data.get("id"), str):
        where = f"{where} ({data['id']})"
    unknown_keys(data, _REQUIRED + _OPTIONAL, where)
    for key in _REQUIRED:
        if key not in data:
            raise RuleFileError(f"{where}: missing required key '{key}'")
    text = {
        key: _string(data, key, where)
        for key in ("id", "name", "severity", "category", "summary", "why", "source", "since")
    }
    if not _ID.match(text["id"]):
        raise RuleFileError(f"{where}: id: {text['id']!r} must look like TED101")
    if not _NAME.match(text["name"]):
        raise RuleFileError(f"{where}: name: {text['name']!r} must be kebab-case")
    if text["severity"] not in {s.value for s in Severity}:
        raise RuleFileError(
            f"{where}: severity: {text['severity']!r} is not error, warning or info"
        )
    if text["category"] not in CATEGORIES:
        raise RuleFileError(
            f"{where}: category: {text['category']!r} is not one of {', '.join(CATEGORIES)}"
            + _did_you_mean(text["category"], CATEGORIES)
        )
    fix = _string(data, "fix", where) if "fix" in data else ""
    if text["severity"] == "error" and not fix.strip():
        raise RuleFileError(f"{where}: fix: an error must say how to fix it")
    blocks = _strings(data.get("blocks", []), f"{where}: blocks")
    for block in blocks:
        if paths is not None and block not in paths:
            raise RuleFileError(
                f"{where}: blocks: unknown execution path {block!r}"
                + _did_you_mean(block, sorted(paths))
            )
    when = parse_condition(data["when"], f"{where}: when")
    for field in ("summary", "fix"):
        for ref in _INTERPOLATION.findall(data.get(field, "")):
            if spec_of(ref) is None:
                raise RuleFileError(f"{where}: {field}: unknown fact '{{{ref}}}'")
    fires, clear = _examples(data["examples"], f"{where}: examples")
    return Rule(
        id=text["id"],
        name=text["name"],
        severity=Severity(text["severity"]),
        category=text["category"],
        summary=text["summary"],
        why=text["why"].strip(),
        fix=fix.strip(),
        source=text["source"],
        since=text["since"],
        docs=str(data.get("docs", "")),
        status=str(data.get("status", "stable")),
        blocks=blocks,
        when=when,
        fires=fires,
        clear=clear,
        file=file,
    )


def parse_condition(data: Any, where: str) -> Condition:
    """A ``{all = [...], any = [...], none = [...]}`` table of leaves."""
    if not isinstance(data, dict) or not data:
        raise RuleFileError(f"{where}: expected a table with all / any / none lists")
    unknown_keys(data, ("all", "any", "none"), where)
    parts: dict[str, tuple[Any, ...]] = {}
    for part, leaves in data.items():
        texts = _strings(leaves, f"{where}.{part}")
        try:
            parts[part] = tuple(parse_leaf(t) for t in texts)
        except ConditionError as exc:
            index = next(i for i, t in enumerate(texts) if _fails(t))
            raise RuleFileError(f"{where}.{part}[{index}]: {exc}") from None
    return Condition(**parts)


def _fails(text: str) -> bool:
    try:
        parse_leaf(text)
    except ConditionError:
        return True
    return False


def _examples(data: Any, where: str) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
    if not isinstance(data, dict):
        raise RuleFileError(f"{where}: expected fires = [...] and clear = [...]")
    unknown_keys(data, ("fires", "clear"), where)
    result = []
    for kind in ("fires", "clear"):
        items = data.get(kind)
        if not isinstance(items, list) or not items:
            verb = "fires" if kind == "fires" else "stays clear"
            raise RuleFileError(f"{where}.{kind}: every rule needs an example that {verb}")
        result.append(tuple(_example(item, f"{where}.{kind}[{i}]") for i, item in enumerate(items)))
    return result[0], result[1]


def _example(data: Any, where: str) -> Example:
    if not isinstance(data, dict):
        raise RuleFileError(f"{where}: expected a table of fact values")
    gpus = None
    facts = {}
    for key, value in data.items():
        if key == "gpus":
            if not isinstance(value, list) or not all(isinstance(g, dict) for g in value):
                raise RuleFileError(f"{where}.gpus: expected a list of tables of gpu.* facts")
            gpus = tuple(
                {k: _example_value(k, v, f"{where}.gpus") for k, v in g.items()} for g in value
            )
            continue
        facts[key] = _example_value(key, value, where)
    return Example(facts, gpus)


def _example_value(path: str, value: Any, where: str) -> ExampleValue:
    spec = spec_of(path)
    if spec is None:
        raise RuleFileError(f"{where}: unknown fact '{path}'" + _did_you_mean(path, _all_paths()))
    if value in (ABSENT, UNKNOWN):
        return str(value)
    expected: type | tuple[type, ...] = {
        FactType.INT: int,
        FactType.BOOL: bool,
        FactType.LIST: list,
    }.get(spec.type, str)
    if isinstance(value, float):
        raise RuleFileError(
            f'{where}: {path}: write version-like values as strings ("{value}"): '
            "TOML reads 12.10 as 12.1"
        )
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise RuleFileError(
            f"{where}: {path}: expected {spec.type.value}, got {type(value).__name__} {value!r}"
        )
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return cast(ExampleValue, value)


def _string(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data[key]
    if isinstance(value, float):
        raise RuleFileError(f'{where}: {key}: write it as a string ("{value}"), not a number')
    if not isinstance(value, str) or not value.strip():
        raise RuleFileError(f"{where}: {key}: expected a non-empty string")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleFileError(f"{where}: expected a list of strings")
    return tuple(value)


def unknown_keys(data: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in data:
        if key not in allowed:
            raise RuleFileError(f"{where}: unknown key '{key}'" + _did_you_mean(key, allowed))


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _all_paths() -> list[str]:
    from te_doctor.engine.fact_paths import FACT_TYPES

    return [p for p in FACT_TYPES if not p.endswith("*")]
