"""The one seam between probes and the machine: commands, files, environment, metadata, NVML.

Probes read the machine only through a ``ProbeContext``. Tests build one over a fake
filesystem root, fake command results, fake distributions and a fake NVML module.
"""

from __future__ import annotations

import bisect
import fnmatch
import itertools
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from te_doctor.probes.commands import CommandResult

T = TypeVar("T")

_WILDCARD = re.compile(r"[*?\[]")


class Runner(Protocol):
    """Runs an argv list with a hard timeout and returns its result without raising."""

    def __call__(self, argv: Sequence[str], *, timeout: float) -> CommandResult: ...


@dataclass(frozen=True, slots=True)
class InstalledDist:
    """One distribution's metadata as found on the search path (never by importing it)."""

    name: str
    version: str
    location: str
    installer: str
    direct_url: str
    error: str = ""
    metadata_format: str = "dist-info"


@dataclass(frozen=True, slots=True)
class SystemInfo:
    """Facts about the running system that the standard library gives directly."""

    hostname: str
    user: str
    kernel: str
    machine: str
    cpu_count: int
    libc: tuple[str, str]


@dataclass(frozen=True, slots=True)
class InterpreterInfo:
    """The Python interpreter being diagnosed."""

    executable: str
    version: str
    implementation: str
    prefix: str
    base_prefix: str
    sys_path: tuple[str, ...]
    #: Why this interpreter is the one diagnosed (``te_doctor.probes.target``), in words.
    chosen_by: str = ""


@dataclass(frozen=True, slots=True)
class ProbeContext:
    """Everything a probe may read. ``root`` maps absolute machine paths (``/proc``, ...)."""

    run: Runner
    env: Mapping[str, str]
    root: Path
    system: SystemInfo
    python: InterpreterInfo
    distributions: Callable[[], Sequence[InstalledDist]]
    load_nvml: Callable[[], Any]
    memo: dict[str, Any] = field(default_factory=dict, compare=False)
    memo_locks: dict[str, threading.Lock] = field(default_factory=dict, compare=False)
    memo_guard: threading.Lock = field(default_factory=threading.Lock, compare=False)

    def cached(self, key: str, compute: Callable[[], T]) -> T:
        """Compute a value shared by several probes (the library index) once per run, even
        when probes running at the same time ask for it together."""
        if key not in self.memo:
            with self.memo_guard:
                lock = self.memo_locks.setdefault(key, threading.Lock())
            with lock:
                if key not in self.memo:
                    self.memo[key] = compute()
        result: T = self.memo[key]
        return result

    def path(self, machine_path: str) -> Path:
        """The local path of an absolute machine path (identity when ``root`` is ``/``)."""
        return self.root / machine_path.lstrip("/")

    def read_text(self, machine_path: str) -> str:
        """Read a text file of the machine; raises ``OSError`` like ``Path.read_text``."""
        return self.path(machine_path).read_text(encoding="utf-8", errors="replace")

    def exists(self, machine_path: str) -> bool:
        """True when the machine path exists."""
        return self.path(machine_path).exists()

    def glob(self, directory: str, pattern: str) -> list[str]:
        """Machine paths of the entries of ``directory`` that match ``pattern``, sorted.

        A one-level pattern (``libcudnn.so*``) is matched against the directory's listing,
        read once per run: the probes ask the same large library directories for many names.
        """
        if "/" not in pattern:
            names = self.cached(f"listing:{directory}", lambda: self._listing(directory))
            literal = _WILDCARD.split(pattern, maxsplit=1)[0]  # every match starts with it
            same_start = itertools.takewhile(
                lambda name: name.startswith(literal),
                itertools.islice(names, bisect.bisect_left(names, literal), None),
            )
            return [_join(directory, n) for n in same_start if fnmatch.fnmatchcase(n, pattern)]
        base = self.path(directory)
        try:
            matches = sorted(base.glob(pattern))
        except OSError:
            return []
        return [_join(directory, str(match.relative_to(base))) for match in matches]

    def _listing(self, directory: str) -> tuple[str, ...]:
        """The directory's entry names, sorted; none when it cannot be read."""
        try:
            with os.scandir(self.path(directory)) as entries:
                return tuple(sorted(entry.name for entry in entries))
        except OSError:
            return ()

    def realpath(self, machine_path: str) -> str:
        """The machine path with every symlink resolved (targets stay inside ``root``)."""
        resolved = self.path(machine_path).resolve()
        try:
            return "/" + str(resolved.relative_to(self.root.resolve()))
        except ValueError:
            return str(resolved)

    def directory_problem(self, machine_path: str) -> str:
        """Why a directory cannot be searched (``No such file or directory``, ``Permission
        denied``, ``Too many levels of symbolic links``, ...), or "" when it can."""
        try:
            with os.scandir(self.path(machine_path)):
                return ""
        except OSError as exc:
            return exc.strerror or type(exc).__name__

    def which(self, name: str) -> str | None:
        """The machine path of an executable on ``PATH``, or None."""
        for directory in self.env.get("PATH", "").split(os.pathsep):
            if directory and os.access(self.path(_join(directory, name)), os.X_OK):
                return _join(directory, name)
        return None


def _join(directory: str, name: str) -> str:
    return directory.rstrip("/") + "/" + name
