"""Rule files: the data model and a strict loader that names the file, rule and field at fault.

Rules are TOML (``rules/*.toml``): unknown keys are errors, version-like values must be
strings (TOML reads ``12.10`` as the float 12.1), and every condition leaf is parsed and
type-checked when the file loads, so a bad rule fails in tests, not on a user's machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

from te_doctor.engine.rule_fields import parse_rule, unknown_keys
from te_doctor.engine.rule_model import Rule, RuleFileError
from te_doctor.toml_compat import tomllib

RULE_FILE_SCHEMA = 1
#: Data files beside the rules that are not rule files: execution paths and remedies.
NOT_RULE_FILES = ("paths.toml", "remedies.toml")


def builtin_rules_dir() -> Path:
    """``rules/`` as shipped in the wheel, or the repository's copy in a checkout."""
    shipped = Path(str(resources.files("te_doctor") / "rules"))
    return shipped if shipped.is_dir() else Path(__file__).resolve().parents[2] / "rules"


def rule_files(extra_dirs: Sequence[Path] = ()) -> list[Path]:
    """Built-in rule files, then each ``--rules-dir``'s (``NOT_RULE_FILES`` are not)."""
    files: list[Path] = []
    for directory in (builtin_rules_dir(), *extra_dirs):
        if not directory.is_dir():
            raise RuleFileError(f"{directory}: not a directory of rule files")
        files += sorted(p for p in directory.glob("*.toml") if p.name not in NOT_RULE_FILES)
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
    unknown_keys(data, ("schema", "rule"), str(path))
    if data.get("schema") != RULE_FILE_SCHEMA:
        raise RuleFileError(
            f"{path}: schema: expected {RULE_FILE_SCHEMA}, got {data.get('schema')!r}"
        )
    entries = data.get("rule", [])
    if not isinstance(entries, list):
        raise RuleFileError(f"{path}: rule: expected [[rule]] tables")
    paths = frozenset(known_paths) if known_paths is not None else None
    return [
        parse_rule(entry, f"{path}: rule[{i}]", str(path), paths) for i, entry in enumerate(entries)
    ]


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
