"""Execution paths (``rules/paths.toml``) and which of them are viable given the findings.

A path is ruled out when its ``requires`` condition is false, or when a fired error finding
lists it in ``blocks``. The recommender builds on this; ``check --require`` gates on it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from te_doctor.conditions import Condition, Truth
from te_doctor.engine import Finding
from te_doctor.flatten import FlatFacts
from te_doctor.rules import RuleFileError, Severity, builtin_rules_dir, parse_condition

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

PATHS_FILE = "paths.toml"


@dataclass(frozen=True, slots=True)
class ExecutionPath:
    """One way to run training, in preference order."""

    id: str
    title: str
    families: tuple[str, ...]
    requires: Condition


@dataclass(frozen=True, slots=True)
class PathVerdict:
    """Whether a path is viable here; ``reasons`` say why not (rule ids or unmet requirements)."""

    id: str
    title: str
    families: tuple[str, ...]
    viable: bool
    undecided: bool
    blocked_by_rules: bool
    reasons: tuple[str, ...]


def load_paths(path: Path | None = None) -> tuple[ExecutionPath, ...]:
    """The execution paths, in preference order; raises ``RuleFileError``."""
    path = path or builtin_rules_dir() / PATHS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RuleFileError(f"{path}: cannot load: {exc}") from None
    result = []
    for i, entry in enumerate(data.get("path", [])):
        where = f"{path}: path[{i}]"
        extra = sorted(set(entry) - {"id", "title", "families", "requires"})
        if extra:
            raise RuleFileError(f"{where}: unknown key {extra[0]!r}")
        try:
            result.append(
                ExecutionPath(
                    id=str(entry["id"]),
                    title=str(entry["title"]),
                    families=tuple(entry.get("families", [])),
                    requires=parse_condition(entry["requires"], f"{where}: requires"),
                )
            )
        except KeyError as exc:
            raise RuleFileError(f"{where}: missing required key {exc}") from None
    return tuple(result)


def path_names(paths: Sequence[ExecutionPath]) -> dict[str, tuple[str, ...]]:
    """Every name ``--require`` accepts: path ids and family names, each with its path ids."""
    names: dict[str, tuple[str, ...]] = {p.id: (p.id,) for p in paths}
    for path in paths:
        for family in path.families:
            names[family] = (*names.get(family, ()), path.id)
    return names


def judge_paths(
    facts: FlatFacts, findings: Sequence[Finding], paths: Sequence[ExecutionPath]
) -> tuple[PathVerdict, ...]:
    """Each path's verdict, in preference order."""
    blocking: dict[str, list[str]] = {}
    for finding in findings:
        if finding.fired and finding.severity is Severity.ERROR:
            for blocked in finding.blocks:
                blocking.setdefault(blocked, []).append(finding.rule_id)
    verdicts = []
    for path in paths:
        truth, _unknown = path.requires.evaluate(facts)
        unmet = tuple(
            f"needs {leaf.text}"
            for leaf in path.requires.all
            if leaf.evaluate(facts)[0] is Truth.FALSE
        )
        # A rule that blocks the path explains it better than the bare requirement does.
        reasons = tuple(blocking.get(path.id, ())) or unmet
        verdicts.append(
            PathVerdict(
                id=path.id,
                title=path.title,
                families=path.families,
                blocked_by_rules=bool(blocking.get(path.id)),
                viable=truth is Truth.TRUE and not blocking.get(path.id),
                undecided=truth is Truth.UNKNOWN and not blocking.get(path.id),
                reasons=reasons,
            )
        )
    return tuple(verdicts)
