"""Work started in the background and waited for: its result, or its error in the caller."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from te_doctor.background import (
    deferring_interrupts,
    forget_interrupts,
    in_background,
    interrupt,
    join,
    on_signal,
    quiet_dropped_interrupts,
    raise_deferred,
)
from te_doctor.engine.rule_model import RuleFileError


def test_the_result_comes_from_another_thread() -> None:
    wait = in_background(lambda: threading.current_thread().name, "te-doctor-test")
    assert wait() == "te-doctor-test"


def test_an_error_is_raised_where_the_result_is_waited_for() -> None:
    def broken() -> None:
        raise RuleFileError("rules/x.toml: rule TED1: bad")

    wait = in_background(broken, "te-doctor-test")
    with pytest.raises(RuleFileError, match="rules/x.toml: rule TED1: bad"):
        wait()


def test_join_gives_up_at_its_timeout_and_returns_when_the_work_ends() -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=True)
    worker.start()
    join(worker, timeout=0.25)  # longer than one wake-up slice
    assert worker.is_alive()
    release.set()
    join(worker)
    assert not worker.is_alive()


def test_a_signal_handled_while_waiting_ends_the_wait() -> None:
    """The main thread's wait wakes in slices, so a handler that raises stops it."""
    release = threading.Event()
    wait = in_background(release.wait, "te-doctor-test")

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            wait()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        release.set()


#: The dropped KeyboardInterrupt is what these tests make; pytest would report it as a warning.
DROPPED = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


class _InterruptedFinalizer:
    """Python prints and drops what a finalizer raises ('Exception ignored in: ...')."""

    def __del__(self) -> None:
        interrupt("SIGTERM")


@DROPPED
def test_an_interrupt_a_finalizer_dropped_still_ends_the_wait() -> None:
    """Ctrl-C that lands in a weakref callback or ``__del__`` raises there and is dropped; the
    wait for the smoke child must still end, not run to the child's timeout (a CI run hung so)."""
    release = threading.Event()
    wait = in_background(release.wait, "te-doctor-test")
    _InterruptedFinalizer()  # collected at once: its KeyboardInterrupt is dropped
    try:
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            wait()
    finally:
        forget_interrupts()
        release.set()


@DROPPED
def test_a_forgotten_interrupt_does_not_end_a_later_wait() -> None:
    _InterruptedFinalizer()
    forget_interrupts()
    assert in_background(lambda: "done", "te-doctor-test")() == "done"


DROPPED_CTRL_C = """
import faulthandler, signal, sys, threading
faulthandler.dump_traceback_later(25, exit=True)  # a hang shows where it waits, not a timeout
from te_doctor.background import in_background
from te_doctor.cli import main as cli

class Finalizer:
    def __del__(self):
        try:
            signal.raise_signal(signal.SIGINT)  # the handler runs here, in the finalizer
        except KeyboardInterrupt:
            print("dropped in the finalizer", file=sys.stderr)
            raise

def hang(argv):
    Finalizer()
    return in_background(threading.Event().wait, "smoke")()

cli._run = hang
try:
    cli.main([])
except KeyboardInterrupt:
    print("interrupted", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_the_cli_remembers_ctrl_c_and_gives_the_handler_back() -> None:
    run = subprocess.run(
        [sys.executable, "-c", DROPPED_CTRL_C], capture_output=True, text=True, timeout=30
    )
    assert "dropped in the finalizer" in run.stderr
    assert "Exception ignored" not in run.stderr  # the user pressed Ctrl-C: no traceback
    assert run.stdout == "interrupted True\n", run.stderr


class _Finalizer:
    """Raises ``error`` when collected, where Python can only drop it."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __del__(self) -> None:
        raise self.error


def test_only_a_dropped_interrupt_goes_unprinted(monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list[BaseException | None] = []
    monkeypatch.setattr(
        sys, "unraisablehook", lambda unraisable: printed.append(unraisable.exc_value)
    )
    forget_interrupts()
    try:
        with quiet_dropped_interrupts():
            _Finalizer(KeyboardInterrupt())  # no signal arrived: a finalizer's own bug
            _InterruptedFinalizer()
            _Finalizer(ValueError("a finalizer's bug"))
        _InterruptedFinalizer()  # the hook is given back
    finally:
        forget_interrupts()
    assert [type(exc) for exc in printed] == [KeyboardInterrupt, ValueError, KeyboardInterrupt]


def test_a_deferred_interrupt_is_raised_in_the_main_thread_only() -> None:
    """Ctrl-C held back while the main thread started a child is the main thread's to raise; a
    worker thread that starts a command of its own at that moment must not take it over."""
    forget_interrupts()
    with deferring_interrupts():
        on_signal("")  # what the handler does when Ctrl-C arrives in the block
    raised: list[BaseException] = []

    def worker() -> None:
        try:
            raise_deferred()
        except BaseException as exc:  # noqa: BLE001 - the test reports it below
            raised.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    assert raised == []
    with pytest.raises(KeyboardInterrupt):
        raise_deferred()
    forget_interrupts()
