"""The smoke child's result document (written atomically), its stage logs and shared state."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

FORMAT = 1
TRACEBACK_TAIL = 4000
DETAIL_LIMIT = 2000


class Result:
    """The result document, and its atomic writes to ``--out``."""

    def __init__(self, out: str) -> None:
        self.out = os.path.abspath(out)
        self.started = time.perf_counter()
        self.data: dict[str, Any] = {
            "format": FORMAT,
            "finished": False,
            "stage": "",
            "python": sys.executable,
            "python_version": sys.version.split()[0],
            "torch": {},
            "te": {"distributions": {}, "version": None},
            "te_support": [],
            "checks": [],
            "stages": [],
            "loaded_libraries": [],
            "error": None,
            "duration_ms": 0.0,
        }

    @property
    def stage(self) -> str:
        return str(self.data["stage"])

    def write(self) -> None:
        """Replace ``--out`` with the document as it is now."""
        self.data["duration_ms"] = ms_since(self.started)
        text = json.dumps(self.data, indent=1, default=str)
        fd, temporary = tempfile.mkstemp(
            prefix=".smoke-", suffix=".tmp", dir=os.path.dirname(self.out)
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, self.out)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    @contextlib.contextmanager
    def stage_run(self, name: str) -> Iterator[StageLog]:
        """Write with ``stage`` = name before the stage and again after it."""
        self.data["stage"] = name
        self.write()
        log = StageLog(name)
        started = time.perf_counter()
        try:
            yield log
        finally:
            self.data["stages"].append(
                {
                    "name": name,
                    "status": log.status,
                    "detail": log.detail,
                    "duration_ms": ms_since(started),
                }
            )
            self.write()

    def fail(self, stage: str, exc: BaseException) -> None:
        """Record ``exc`` as the error, unless an earlier failure already is."""
        if self.data["error"] is None:
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            self.data["error"] = {
                "stage": stage,
                "type": type(exc).__name__,
                "text": text[-TRACEBACK_TAIL:],
            }


@dataclass
class StageLog:
    """What a stage reports about itself."""

    name: str
    status: str = "ok"
    detail: str = ""

    def skip(self, reason: str) -> None:
        self.status, self.detail = "skipped", reason

    def failed(self, exc: BaseException) -> None:
        self.status, self.detail = "failed", describe(exc)


def ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}"[:DETAIL_LIMIT] if text else type(exc).__name__


@dataclass
class State:
    """What the stages learned that later stages depend on."""

    torch: Any = None
    te: Any = None
    cuda_ok: bool = False
    capability: tuple[int, int] | None = None
    #: Why the CUDA checks cannot run (empty when they can).
    no_cuda: str = "no CUDA device"
    #: Why the TE checks cannot run (empty when they can).
    no_te: str = "Transformer Engine is not installed"
    te_version: str = ""
    #: Where the GPU checks run (tests point it at the CPU to exercise the plumbing).
    cuda_device: str = "cuda:0"
    support: dict[str, tuple[bool, str]] = field(default_factory=dict)
    fault: bool = False
