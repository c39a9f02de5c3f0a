"""A rule as written in a rule file: severity, category, condition, examples, where it came from."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from te_doctor.engine.conditions import Condition
from te_doctor.errors import TeDoctorError

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
