"""A one-line live status on stderr while a slow step runs (the smoke test, pip, a bench path).

Only on a terminal and never with ``--quiet``: on a pipe or in a log nothing is written. The
line appears once a step has run for half a second, shows what runs and for how long, is
redrawn in place, and is erased when the step ends, so the report starts on a clean line.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

#: Steps shorter than this show nothing.
DELAY_S = 0.5
REDRAW_S = 0.1
_SPINNER = "|/-\\"


class LiveStatus:
    """The status line; ``update`` changes its text from any thread."""

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self._stream = stream or sys.stderr
        self._text = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    def update(self, text: str) -> None:
        """What the line says now."""
        self._text = text

    def start(self) -> None:
        """Begin drawing (after ``DELAY_S``) when enabled."""
        if self.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop drawing and erase the line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._drawn:
            self._stream.write("\r\x1b[K")
            self._stream.flush()

    def _run(self) -> None:
        started = time.monotonic()
        if self._stop.wait(DELAY_S):
            return
        turn = 0
        while not self._stop.is_set():
            width = shutil.get_terminal_size((80, 24)).columns
            elapsed = time.monotonic() - started
            line = f"{_SPINNER[turn % len(_SPINNER)]} {self._text} ({elapsed:.0f} s)"
            self._stream.write("\r\x1b[K" + line[: max(width - 1, 10)])
            self._stream.flush()
            self._drawn = True
            turn += 1
            self._stop.wait(REDRAW_S)


def shows_status(quiet: bool, stream: TextIO | None = None) -> bool:
    """True on a terminal without ``--quiet``."""
    target = stream or sys.stderr
    return not quiet and target.isatty()


@contextmanager
def live(text: str, *, quiet: bool = False) -> Iterator[LiveStatus]:
    """A status line saying ``text`` while the block runs (terminals only)."""
    status = LiveStatus(shows_status(quiet))
    status.update(text)
    status.start()
    try:
        yield status
    finally:
        status.stop()
