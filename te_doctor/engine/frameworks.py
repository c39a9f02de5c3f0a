"""Framework settings (``rules/frameworks/settings.toml``): each execution path as Megatron-LM,
NeMo, accelerate, Lightning or the Hugging Face Trainer expresses it, and the advice for one
recommendation: the recommended path's settings, or why the framework cannot express it and
the closest path, viable here, that it can.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from te_doctor.engine.recommend import Recommendation
from te_doctor.engine.rule_model import RuleFileError
from te_doctor.engine.rules import builtin_rules_dir
from te_doctor.toml_compat import tomllib

FRAMEWORKS_FILE = Path("frameworks") / "settings.toml"
FRAMEWORKS_SCHEMA = 1
_FRAMEWORK_KEYS = {"name", "form", "source", "path", "cannot"}
_SETTING_KEYS = {"settings", "versions", "note", "source"}


@dataclass(frozen=True, slots=True)
class PathSettings:
    """How one framework runs one execution path."""

    settings: str
    versions: str
    note: str
    source: str


@dataclass(frozen=True, slots=True)
class Framework:
    """One framework's settings for the paths it can express, and why not for the others."""

    id: str
    name: str
    form: str
    source: str
    paths: Mapping[str, PathSettings]
    cannot: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class FrameworkAdvice:
    """What to set in one framework for the recommended path (``check --for``).

    ``path`` is the path the settings are for: the recommended one, or, when the framework
    cannot express it (``cannot`` says why), the closest viable path it can; empty when none.
    """

    framework: str
    name: str
    form: str
    recommended: str
    path: str
    cannot: str
    settings: str
    versions: str
    note: str
    source: str


def load_frameworks(
    path: Path | None = None, known_paths: Sequence[str] | None = None
) -> tuple[Framework, ...]:
    """Every framework, in file order; raises ``RuleFileError`` naming the file and field."""
    path = path or builtin_rules_dir() / FRAMEWORKS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RuleFileError(f"{path}: cannot load: {exc}") from None
    if data.get("schema") != FRAMEWORKS_SCHEMA:
        raise RuleFileError(f"{path}: schema: expected {FRAMEWORKS_SCHEMA}")
    return tuple(
        _framework(key, table, f"{path}: {key}", known_paths)
        for key, table in data.items()
        if key != "schema"
    )


def _framework(key: str, table: Any, where: str, known_paths: Sequence[str] | None) -> Framework:
    if not isinstance(table, dict):
        raise RuleFileError(f"{where}: expected a table")
    _only(table, _FRAMEWORK_KEYS, where)
    for field in ("name", "form", "source"):
        if not isinstance(table.get(field), str) or not table[field].strip():
            raise RuleFileError(f"{where}: {field}: expected a non-empty string")
    paths = {
        path_id: _settings(entry, f"{where}.path.{path_id}", table["source"])
        for path_id, entry in _table(table, "path", where).items()
    }
    cannot = {str(k): str(v).strip() for k, v in _table(table, "cannot", where).items()}
    for path_id in [*paths, *cannot]:
        if known_paths is not None and path_id not in known_paths:
            raise RuleFileError(f"{where}: {path_id}: not an execution path of paths.toml")
    both = sorted(set(paths) & set(cannot))
    if both:
        raise RuleFileError(f"{where}: {both[0]}: both in path and in cannot")
    return Framework(key, table["name"], table["form"], table["source"], paths, cannot)


def _settings(entry: Any, where: str, framework_source: str) -> PathSettings:
    if not isinstance(entry, dict):
        raise RuleFileError(f"{where}: expected a table")
    _only(entry, _SETTING_KEYS, where)
    for field in ("settings", "versions"):
        if not isinstance(entry.get(field), str) or not entry[field].strip():
            raise RuleFileError(f"{where}: {field}: expected a non-empty string")
    return PathSettings(
        settings=entry["settings"].strip(),
        versions=entry["versions"].strip(),
        note=str(entry.get("note", "")).strip(),
        source=str(entry.get("source", framework_source)).strip(),
    )


def _table(table: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise RuleFileError(f"{where}: {key}: expected a table")
    return value


def _only(table: Mapping[str, Any], keys: set[str], where: str) -> None:
    extra = sorted(set(table) - keys)
    if extra:
        raise RuleFileError(f"{where}: unknown key {extra[0]!r}")


def advise(framework: Framework, recommendation: Recommendation) -> FrameworkAdvice:
    """The framework's settings for the recommended path, or for the closest one it can run.

    The closest path is the first viable path at or after the recommended one in the ranking
    (best first) that the framework can express; with nothing viable, none.
    """
    chosen = recommendation.path
    cannot = ""
    target = chosen if chosen in framework.paths else ""
    if chosen and not target:
        cannot = framework.cannot.get(chosen, "te-doctor has no settings recorded for it")
        ranking = [v.id for v in recommendation.ranking]
        later = ranking[ranking.index(chosen) :] if chosen in ranking else ranking
        viable = {v.id for v in recommendation.ranking if v.viable}
        target = next((p for p in later if p in viable and p in framework.paths), "")
    settings = framework.paths.get(target, PathSettings("", "", "", framework.source))
    return FrameworkAdvice(
        framework=framework.id,
        name=framework.name,
        form=framework.form,
        recommended=chosen,
        path=target,
        cannot=cannot,
        settings=settings.settings,
        versions=settings.versions,
        note=settings.note,
        source=settings.source,
    )


def framework_advice(
    names: Sequence[str], recommendation: Recommendation, path: Path | None = None
) -> tuple[FrameworkAdvice, ...]:
    """``advise`` for each framework named (by id), in the order given."""
    frameworks = {f.id: f for f in load_frameworks(path)}
    unknown = [n for n in names if n not in frameworks]
    if unknown:
        raise RuleFileError(
            f"--for {unknown[0]}: unknown framework; choose from {', '.join(frameworks)}"
        )
    return tuple(advise(frameworks[name], recommendation) for name in dict.fromkeys(names))
