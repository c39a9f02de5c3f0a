"""The one seam between probes and the machine: commands, files, environment, metadata, NVML.

Probes read the machine only through a ``ProbeContext``. Tests build one over a fake
filesystem root, fake command results, fake distributions and a fake NVML module.
"""

from __future__ import annotations

import atexit
import bisect
import fnmatch
import itertools
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from te_doctor.probes.exits import exit_in_words

T = TypeVar("T")

#: Return codes that ``run`` uses for failures that happen before or instead of the command.
NOT_FOUND = 127
NOT_EXECUTABLE = 126
TIMED_OUT = 124
_WILDCARD = re.compile(r"[*?\[]")
#: Commands started by ``run_command`` that have not ended yet (any thread).
_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()
#: How many ``run_command`` calls are between starting their child and recording it in
#: ``_RUNNING`` (the child may already be running while its thread waits for the GIL).
_STARTING = [0]
#: How long ``stop_running_commands`` waits for those to be recorded.
_STARTING_WAIT_S = 2.0


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did. ``run`` never raises: failures are return codes 124/126/127."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    #: True when the command was killed at its timeout (``returncode`` is then 124).
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """True when the command ran and exited 0."""
        return self.returncode == 0

    def describe(self) -> str:
        """A short human phrase for a failed command, used as the reason of an unknown fact."""
        tool = self.argv[0].rsplit("/", 1)[-1] if self.argv else "command"
        if self.returncode == NOT_FOUND:
            return f"{tool}: not found"
        if self.returncode == TIMED_OUT:
            return f"{tool}: did not answer ({self.stderr.strip()})"
        if self.returncode == NOT_EXECUTABLE:
            return f"{tool}: not executable ({self.stderr.strip()})"
        first = (self.stderr.strip() or self.stdout.strip()).splitlines()[:1]
        ended = exit_in_words(self.returncode)
        return f"{tool}: {ended}" + (f": {first[0][:200]}" if first else "")


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


def run_command(
    argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None
) -> CommandResult:
    """Run ``argv`` (never through a shell) and kill its whole process group on timeout."""
    args = tuple(argv)
    with _RUNNING_LOCK:
        _STARTING[0] += 1
    proc = None
    try:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=dict(env) if env is not None else None,
        )
    except FileNotFoundError:
        return CommandResult(args, NOT_FOUND, "", "not found")
    except PermissionError as exc:
        return CommandResult(args, NOT_EXECUTABLE, "", str(exc))
    except OSError as exc:
        return CommandResult(args, NOT_EXECUTABLE, "", str(exc))
    finally:
        with _RUNNING_LOCK:
            if proc is not None:
                _RUNNING.add(proc)
            _STARTING[0] -= 1
    started = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        waited = time.monotonic() - started
        return CommandResult(
            args, TIMED_OUT, "", f"no answer after {waited:.1f} s, killed", timed_out=True
        )
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): never leave the child running
        _kill_group(proc)
        raise
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    return CommandResult(
        args,
        proc.returncode,
        out.decode("utf-8", errors="replace"),
        err.decode("utf-8", errors="replace"),
    )


def stop_running_commands() -> None:
    """Kill every command still running, those of other threads (the smoke test) included.

    Each runs in a session of its own, so Ctrl-C at a terminal never reaches it; without this
    an interrupted te-doctor would leave a hanging child behind. Runs at interpreter exit. A
    command another thread has just started is waited for (briefly) until it is recorded.
    """
    deadline = time.monotonic() + _STARTING_WAIT_S
    while True:
        with _RUNNING_LOCK:
            if not _STARTING[0] or time.monotonic() > deadline:
                running = list(_RUNNING)
                break
        time.sleep(0.01)
    for proc in running:
        _signal_group(proc)  # its own thread reaps it: two threads never read one pipe


atexit.register(stop_running_commands)


def _signal_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    _signal_group(proc)
    try:
        proc.communicate(timeout=1.0)
    except subprocess.TimeoutExpired:
        pass  # a process stuck in the kernel (D state): give up on its pipes, never hang
