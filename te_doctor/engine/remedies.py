"""Start-here remedies (``rules/remedies.toml``): one fix for findings that share a root cause.

Pure: loading validates every field; ``choose_remedy`` is a function of the facts and the
findings. The report starts with the worst fired finding (error or warning): when a remedy
lists it and holds here, the remedy's group is every fired finding it lists or joins;
otherwise that finding alone, with its own fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from te_doctor.engine.conditions import Condition, Truth
from te_doctor.engine.evaluate import Finding, interpolate
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_fields import parse_condition, unknown_keys
from te_doctor.engine.rule_model import RuleFileError, Severity
from te_doctor.engine.rules import builtin_rules_dir
from te_doctor.toml_compat import tomllib

REMEDIES_FILE = "remedies.toml"
_KEYS = ("id", "title", "rules", "joins", "when", "steps", "text")
_OPTIONAL = ("text",)


@dataclass(frozen=True, slots=True)
class Remedy:
    """One command sequence and the findings it fixes."""

    id: str
    title: str
    rules: tuple[str, ...]
    joins: tuple[str, ...]
    when: Condition
    steps: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Start:
    """Where a report starts: a title, the findings it addresses, and the fix (filled in)."""

    title: str
    rules: tuple[str, ...]
    steps: tuple[str, ...]
    text: str


def load_remedies(path: Path | None = None) -> tuple[Remedy, ...]:
    """Every remedy; raises ``RuleFileError`` naming the file, remedy and field."""
    path = path or builtin_rules_dir() / REMEDIES_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RuleFileError(f"{path}: cannot load: {exc}") from None
    return tuple(_remedy(item, f"{path}: remedy[{i}]") for i, item in enumerate(data["remedy"]))


def _remedy(item: Any, where: str) -> Remedy:
    if not isinstance(item, dict):
        raise RuleFileError(f"{where}: expected a table")
    unknown_keys(item, _KEYS, where)
    missing = [key for key in _KEYS if key not in item and key not in _OPTIONAL]
    if missing:
        raise RuleFileError(f"{where}: missing required key {missing[0]!r}")
    lists = {key: item[key] for key in ("rules", "joins", "steps")}
    for key, value in lists.items():
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RuleFileError(f"{where}.{key}: expected a list of strings")
    return Remedy(
        id=str(item["id"]),
        title=str(item["title"]),
        rules=tuple(lists["rules"]),
        joins=tuple(lists["joins"]),
        when=parse_condition(item["when"], f"{where}.when"),
        steps=tuple(lists["steps"]),
        text=str(item.get("text", "")),
    )


def choose_remedy(
    facts: FlatFacts, findings: Sequence[Finding], remedies: Sequence[Remedy]
) -> Start | None:
    """Where to start: the worst fired error or warning, with the remedy for its root cause."""
    fired = [f for f in findings if f.fired and f.severity is not Severity.INFO]
    if not fired:
        return None
    first = fired[0]
    for remedy in remedies:
        if first.rule_id in remedy.rules and remedy.when.evaluate(facts)[0] is Truth.TRUE:
            group = set(remedy.rules) | set(remedy.joins)
            return Start(
                title=interpolate(remedy.title, facts),
                rules=tuple(f.rule_id for f in fired if f.rule_id in group),
                steps=tuple(interpolate(step, facts) for step in remedy.steps),
                text=interpolate(remedy.text, facts),
            )
    return Start(title=first.message, rules=(first.rule_id,), steps=(), text=first.fix)
