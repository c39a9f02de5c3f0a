"""One node's result in a fleet, as the aggregation judged it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

VERDICTS = {"ok": "", "timed-out": "timed out", "failed": "probe failed"}


@dataclass(frozen=True, slots=True)
class Node:
    """One node's result; ``state`` is how its probe ended (ok, timed-out, failed)."""

    name: str
    file: str
    job_id: str
    task_id: str
    state: str
    detail: str
    passed: bool
    recommended: str
    fired: tuple[str, ...]
    summary: Mapping[str, str]
    #: An execution path of the ``fp8`` family is viable (False when the node was not probed).
    fp8_viable: bool = False
    #: How many findings fired, by severity (``error``, ``warning``, ``info``).
    severities: Mapping[str, int] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        return VERDICTS[self.state] or ("pass" if self.passed else "fail")
