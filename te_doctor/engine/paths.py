"""Execution paths (``rules/paths.toml``): what they need, how to enable them, and loading.

Each path lists its structural prerequisites (``requires``, in the rule condition language),
the smoke check that proves it on this machine (``verified_by``), and the snippet and
environment variables that enable it in a training script; ``variants`` give the snippet for
installs whose API differs (``when = ['te.version < 2.9']``), so it is true for this one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from te_doctor.engine.conditions import Condition, Truth
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_fields import parse_condition
from te_doctor.engine.rule_model import RuleFileError
from te_doctor.engine.rules import builtin_rules_dir
from te_doctor.toml_compat import tomllib

PATHS_FILE = "paths.toml"
_KEYS = (
    "id",
    "title",
    "families",
    "requires",
    "verified_by",
    "device",
    "snippet",
    "variants",
    "env",
    "opt_in",
)
_OPTIONAL_KEYS = ("env", "opt_in", "variants")


@dataclass(frozen=True, slots=True)
class ExecutionPath:
    """One way to run training, in preference order."""

    id: str
    title: str
    families: tuple[str, ...]
    requires: Condition
    verified_by: str
    device: str
    snippet: str
    env: Mapping[str, str]
    #: Why the path is never the default (empty: it may be); only a ``require`` naming it picks it.
    opt_in: str = ""
    #: Snippets for other installs (an older TE's API), each with the condition that picks it.
    variants: tuple[tuple[Condition, str], ...] = ()

    def snippet_for(self, facts: FlatFacts) -> str:
        """The snippet true for this machine: the first variant that holds, or the default."""
        chosen = (s for c, s in self.variants if c.evaluate(facts)[0] is Truth.TRUE)
        return next(chosen, self.snippet)


def load_paths(path: Path | None = None) -> tuple[ExecutionPath, ...]:
    """The execution paths, in preference order; raises ``RuleFileError``."""
    path = path or builtin_rules_dir() / PATHS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RuleFileError(f"{path}: cannot load: {exc}") from None
    return tuple(_path(entry, f"{path}: path[{i}]") for i, entry in enumerate(data.get("path", [])))


def _path(entry: Mapping[str, Any], where: str) -> ExecutionPath:
    extra = sorted(set(entry) - set(_KEYS))
    if extra:
        raise RuleFileError(f"{where}: unknown key {extra[0]!r}")
    missing = [key for key in _KEYS if key not in entry and key not in _OPTIONAL_KEYS]
    if missing:
        raise RuleFileError(f"{where}: missing required key {missing[0]!r}")
    if entry["device"] not in ("cuda", "cpu"):
        raise RuleFileError(f"{where}: device: expected 'cuda' or 'cpu'")
    return ExecutionPath(
        id=str(entry["id"]),
        title=str(entry["title"]),
        families=tuple(entry["families"]),
        requires=parse_condition(entry["requires"], f"{where}: requires"),
        verified_by=str(entry["verified_by"]),
        device=str(entry["device"]),
        snippet=str(entry["snippet"]).strip(),
        env={str(k): str(v) for k, v in entry.get("env", {}).items()},
        opt_in=str(entry.get("opt_in", "")).strip(),
        variants=tuple(
            (
                parse_condition({"all": v.get("when")}, f"{where}: variants[{i}].when"),
                str(v.get("snippet", "")).strip(),
            )
            for i, v in enumerate(entry.get("variants", []))
        ),
    )


def path_names(paths: Sequence[ExecutionPath]) -> dict[str, tuple[str, ...]]:
    """Every name ``--require`` accepts: path ids and family names, each with its path ids."""
    names: dict[str, tuple[str, ...]] = {p.id: (p.id,) for p in paths}
    for path in paths:
        for family in path.families:
            members = names.get(family, ())
            if path.id not in members:  # the cpu path is also the cpu family
                names[family] = (*members, path.id)
    return names


def candidates(paths: Sequence[ExecutionPath], require: Sequence[str] = ()) -> tuple[str, ...]:
    """The path ids a recommendation may pick, best first, for these ``--require`` names.

    Opt-in paths are left out unless a name asks for them alone (``nvfp4``, ``te-nvfp4``): a
    broad family such as ``te`` or ``gpu`` still gets the best default path.
    """
    names = path_names(paths)
    opt_in = {p.id for p in paths if p.opt_in}
    wanted = [p.id for p in paths]
    for name in require:
        members = names.get(name, ())
        keep = set(members) if set(members) <= opt_in else set(members) - opt_in
        wanted = [i for i in wanted if i in keep]
    if not require:
        wanted = [i for i in wanted if i not in opt_in]
    return tuple(wanted)
