"""One node's result in a fleet, as the aggregation judged it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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

    @property
    def verdict(self) -> str:
        return VERDICTS[self.state] or ("pass" if self.passed else "fail")
