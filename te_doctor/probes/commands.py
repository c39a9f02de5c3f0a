"""Running a command: never through a shell, never raising, never hanging, never left behind.

Every child runs in a session of its own with a hard timeout; the ones still running when
te-doctor is interrupted are killed with their process group.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from te_doctor.background import deferring_interrupts, raise_deferred
from te_doctor.probes.exits import exit_in_words

#: Return codes that ``run`` uses for failures that happen before or instead of the command.
NOT_FOUND = 127
NOT_EXECUTABLE = 126
TIMED_OUT = 124
#: Commands started by ``run_command`` that have not ended yet (any thread).
_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()
#: How many ``run_command`` calls are between starting their child and recording it in
#: ``_RUNNING`` (in another thread the child may already run while that thread waits).
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


def run_command(
    argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None
) -> CommandResult:
    """Run ``argv`` (never through a shell) and kill its whole process group on timeout."""
    args = tuple(argv)
    proc = _start(args, env)
    if isinstance(proc, CommandResult):
        raise_deferred()
        return proc
    started = time.monotonic()
    try:
        raise_deferred()  # Ctrl-C while the child started: now that it is tracked, stop it
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


def _start(
    args: tuple[str, ...], env: Mapping[str, str] | None
) -> subprocess.Popen[bytes] | CommandResult:
    """The started child, recorded in ``_RUNNING``, or why it could not start. An interrupt
    meanwhile is held back (``deferring_interrupts``): raised halfway through ``Popen`` it
    would leave the child running with nobody holding it."""
    with _RUNNING_LOCK:
        _STARTING[0] += 1
    try:
        with deferring_interrupts():
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env=dict(env) if env is not None else None,
            )
            with _RUNNING_LOCK:
                _RUNNING.add(proc)
        return proc
    except FileNotFoundError:
        return CommandResult(args, NOT_FOUND, "", "not found")
    except PermissionError as exc:
        return CommandResult(args, NOT_EXECUTABLE, "", str(exc))
    except OSError as exc:
        return CommandResult(args, NOT_EXECUTABLE, "", str(exc))
    finally:
        with _RUNNING_LOCK:
            _STARTING[0] -= 1


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
