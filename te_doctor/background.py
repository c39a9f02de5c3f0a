"""Work started now and waited for later: the smoke test, the rule set, slow tool calls."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn, TypeVar

T = TypeVar("T")

#: The longest a wait sleeps at a time. Linux may hand Ctrl-C or SIGTERM to any thread, and
#: Python runs the handler only in the main thread once it runs again: a main thread asleep in
#: a plain ``join()`` would not notice until the work ended (the smoke child's whole timeout).
WAKE_S = 0.1

#: The interrupts that arrived, each as its KeyboardInterrupt's message ("" for Ctrl-C). Python
#: prints and drops an exception raised while the main thread runs a finalizer (a weakref
#: callback, ``__del__``): a wait that finds one here raises it again rather than wait on.
_ARRIVED: list[str] = []
#: Whether the main thread is starting a child (``deferring_interrupts``), and the interrupts
#: that arrived meanwhile, raised by ``raise_deferred`` once the child is tracked.
_DEFERRING = [False]
_DEFERRED: list[str] = []


def interrupt(message: str = "") -> NoReturn:
    """Stop the main thread's work as Ctrl-C does, and remember it for the waits (a handler's
    body: cli.main installs it for SIGINT and SIGTERM)."""
    _ARRIVED.append(message)
    if message:
        raise KeyboardInterrupt(message)
    raise KeyboardInterrupt


def on_signal(message: str = "") -> None:
    """A Ctrl-C or SIGTERM handler's body (cli.main installs it): ``interrupt``, unless the main
    thread is starting a child process (``deferring_interrupts``), which an exception in the
    middle would leave running untracked: then the interrupt waits for ``raise_deferred``."""
    if _DEFERRING[0]:
        _ARRIVED.append(message)
        _DEFERRED.append(message)
        return
    interrupt(message)


@contextmanager
def deferring_interrupts() -> Iterator[None]:
    """Hold back the main thread's interrupt while the block runs (other threads get none)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _DEFERRING[0] = True
    try:
        yield
    finally:
        _DEFERRING[0] = False


def raise_deferred() -> None:
    """Raise the interrupt ``deferring_interrupts`` held back, if one arrived (in the main
    thread only: another thread must not take it over)."""
    if _DEFERRED and threading.current_thread() is threading.main_thread():
        message = _DEFERRED[-1]
        _DEFERRED.clear()
        interrupt(message)


@contextmanager
def quiet_dropped_interrupts() -> Iterator[None]:
    """While the block runs, a KeyboardInterrupt that Python drops because it was raised in a
    finalizer is not printed as an "Exception ignored" traceback: it is remembered, and the
    next wait (``join``) raises it again. Any other unraisable exception is printed as before."""
    previous = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not (_ARRIVED and isinstance(unraisable.exc_value, KeyboardInterrupt)):
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def forget_interrupts() -> None:
    """A new run starts (te-doctor's CLI called again in one process): nothing has arrived."""
    _ARRIVED.clear()
    _DEFERRED.clear()


def join(worker: threading.Thread, timeout: float | None = None) -> None:
    """``worker.join(timeout)`` that wakes every ``WAKE_S`` so a signal is acted on at once,
    even one whose KeyboardInterrupt a finalizer dropped."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while worker.is_alive():
        if _ARRIVED:
            interrupt(_ARRIVED[-1])
        left = WAKE_S if deadline is None else min(WAKE_S, deadline - time.monotonic())
        if left <= 0:
            return
        worker.join(left)


def in_background(work: Callable[[], T], name: str) -> Callable[[], T]:
    """Start ``work`` in a daemon thread; the returned function waits for it and gives its
    result, or raises what it raised (in the caller's thread, as if called there).

    A daemon, so an interrupted te-doctor does not wait for it.
    """
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(work())
        except BaseException as exc:  # noqa: BLE001 - wait() raises it in the caller's thread
            errors.append(exc)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()

    def wait() -> T:
        join(worker)
        if errors:
            raise errors[0]
        return results[0]

    return wait
