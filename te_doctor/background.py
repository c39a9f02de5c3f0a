"""Work started now and waited for later: the smoke test, the rule set, slow tool calls."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


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
        worker.join()
        if errors:
            raise errors[0]
        return results[0]

    return wait
