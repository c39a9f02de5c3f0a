"""The data ``te-doctor plan`` decides from: TE releases, NGC containers, planning rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from te_doctor.engine.rule_model import Rule, RuleFileError
from te_doctor.engine.rules import builtin_rules_dir, load_rule_file
from te_doctor.toml_compat import tomllib

PLAN_DIR = "plan"
RELEASES = "releases.toml"


@dataclass(frozen=True, slots=True)
class NgcRelease:
    """An NGC container release (PyTorch or JAX) and the driver its CUDA needs."""

    release: str
    cuda: str
    min_driver: str


@dataclass(frozen=True, slots=True)
class Releases:
    """What can be installed: TE versions (newest first), first core per CUDA major, NGC."""

    te_versions: tuple[str, ...]
    first_core: Mapping[int, str]
    ngc: tuple[NgcRelease, ...]
    ngc_jax: tuple[NgcRelease, ...] = ()


def load_releases(path: Path | None = None) -> Releases:
    """The release data; raises ``RuleFileError``."""
    path = path or builtin_rules_dir() / PLAN_DIR / RELEASES
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        te = data["te"]
        return Releases(
            te_versions=tuple(str(v) for v in te["versions"]),
            first_core={int(k): str(v) for k, v in te["first_core"].items()},
            ngc=_ngc(data.get("ngc", [])),
            ngc_jax=_ngc(data.get("ngc_jax", [])),
        )
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise RuleFileError(f"{path}: cannot load release data: {exc}") from None


def _ngc(entries: list[dict[str, object]]) -> tuple[NgcRelease, ...]:
    return tuple(
        NgcRelease(str(n["release"]), str(n["cuda"]), str(n["min_driver"])) for n in entries
    )


def load_plan_rules() -> tuple[Rule, ...]:
    """The planning rules (``rules/plan/*.toml`` but the release data)."""
    directory = builtin_rules_dir() / PLAN_DIR
    rules: list[Rule] = []
    for path in sorted(directory.glob("*.toml")):
        if path.name != RELEASES:
            rules += load_rule_file(path)
    return tuple(rules)
