"""Rule files: the data model and a strict loader that names the file, rule and field at fault.

Rules are TOML (``rules/*.toml``): unknown keys are errors, version-like values must be
strings (TOML reads ``12.10`` as the float 12.1), and every condition leaf is parsed and
type-checked when the file loads, so a bad rule fails in tests, not on a user's machine.
"""

from __future__ import annotations

import difflib
import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, cast

from te_doctor.conditions import Condition, ConditionError, parse_leaf, spec_of
from te_doctor.errors import TeDoctorError
from te_doctor.fact_paths import FactType
from te_doctor.toml_compat import tomllib

RULE_FILE_SCHEMA = 1
ABSENT, UNKNOWN = "<absent>", "<unknown>"
CATEGORIES = (
    "install-build",
    "import-abi",
    "missing-lib",
    "driver-too-old",
    "cuda-mismatch",
    "cudnn",
    "unsupported-gpu-fp8",
    "shape-alignment",
    "torch-version",
    "flash-attn",
    "multiple-installs",
    "runtime-numerics",
    "config",
    "other",
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


class RuleFileError(TeDoctorError):
    """A rule file that does not load; the message names the file, the rule and the field."""


class Severity(str, enum.Enum):
    """How bad a fired rule is."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Higher is worse."""
        return {"info": 0, "warning": 1, "error": 2}[self.value]


ExampleValue = str | int | bool | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Example:
    """A fact overlay for a rule's self-test: ``facts`` over the baseline, optional GPU list."""

    facts: Mapping[str, ExampleValue]
    gpus: tuple[Mapping[str, ExampleValue], ...] | None


@dataclass(frozen=True, slots=True)
class Rule:
    """One diagnostic rule, as written in a rule file."""

    id: str
    name: str
    severity: Severity
    category: str
    summary: str
    why: str
    fix: str
    source: str
    since: str
    docs: str
    status: str
    blocks: tuple[str, ...]
    when: Condition
    fires: tuple[Example, ...]
    clear: tuple[Example, ...]
    file: str

    def facts_used(self) -> tuple[str, ...]:
        """Every fact path the condition reads, in order."""
        paths: list[str] = []
        for leaf in self.when.leaves():
            for path in (leaf.path, leaf.ref):
                if path and path not in paths:
                    paths.append(path)
        return tuple(paths)


def builtin_rules_dir() -> Path:
    """``rules/`` as shipped in the wheel, or the repository's copy in a checkout."""
    shipped = Path(str(resources.files("te_doctor") / "rules"))
    return shipped if shipped.is_dir() else Path(__file__).resolve().parents[1] / "rules"


def rule_files(extra_dirs: Sequence[Path] = ()) -> list[Path]:
    """Built-in rule files, then each ``--rules-dir``'s (``paths.toml`` is not a rule file)."""
    files: list[Path] = []
    for directory in (builtin_rules_dir(), *extra_dirs):
        if not directory.is_dir():
            raise RuleFileError(f"{directory}: not a directory of rule files")
        files += sorted(p for p in directory.glob("*.toml") if p.name != "paths.toml")
    return files


def load_rules(
    extra_dirs: Sequence[Path] = (), known_paths: Iterable[str] | None = None
) -> tuple[Rule, ...]:
    """Load and validate every rule; raises ``RuleFileError`` on the first problem."""
    rules: list[Rule] = []
    for path in rule_files(extra_dirs):
        rules += load_rule_file(path, known_paths)
    _check_unique(rules)
    return tuple(rules)


def load_rule_file(path: Path, known_paths: Iterable[str] | None = None) -> list[Rule]:
    """Load one rule file; ``known_paths`` (execution path ids) validates ``blocks``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RuleFileError(f"{path}: not valid TOML: {exc}") from None
    _unknown_keys(data, ("schema", "rule"), str(path))
    if data.get("schema") != RULE_FILE_SCHEMA:
        raise RuleFileError(
            f"{path}: schema: expected {RULE_FILE_SCHEMA}, got {data.get('schema')!r}"
        )
    entries = data.get("rule", [])
    if not isinstance(entries, list):
        raise RuleFileError(f"{path}: rule: expected [[rule]] tables")
    paths = frozenset(known_paths) if known_paths is not None else None
    return [_rule(entry, f"{path}: rule[{i}]", str(path), paths) for i, entry in enumerate(entries)]


def _rule(data: Any, where: str, file: str, paths: frozenset[str] | None) -> Rule:
    if not isinstance(data, dict):
        raise RuleFileError(f"{where}: expected a table")
    if isinstance(data.get("id"), str):
        where = f"{where} ({data['id']})"
    _unknown_keys(data, _REQUIRED + _OPTIONAL, where)
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
    _unknown_keys(data, ("all", "any", "none"), where)
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
    _unknown_keys(data, ("fires", "clear"), where)
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


def _unknown_keys(data: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in data:
        if key not in allowed:
            raise RuleFileError(f"{where}: unknown key '{key}'" + _did_you_mean(key, allowed))


def _check_unique(rules: Sequence[Rule]) -> None:
    for attribute in ("id", "name"):
        seen: dict[str, Rule] = {}
        for rule in rules:
            key = getattr(rule, attribute)
            if key in seen:
                raise RuleFileError(
                    f"{rule.file}: rule {rule.id}: {attribute} {key!r} is already used in "
                    f"{seen[key].file}"
                )
            seen[key] = rule


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _all_paths() -> list[str]:
    from te_doctor.fact_paths import FACT_TYPES

    return [p for p in FACT_TYPES if not p.endswith("*")]
