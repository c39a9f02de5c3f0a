"""Work started in the background and waited for: its result, or its error in the caller."""

from __future__ import annotations

import signal
import threading

import pytest

from te_doctor.background import in_background, join
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
