"""Tracebacks and error lines of a pasted report, outside the lines a tool parser read.

The capture itself (what counts as a traceback or an error line) is
:mod:`te_doctor.engine.error_capture`, shared with ``check``, which runs it on what the smoke
child or a ``--python`` interpreter printed.
"""

from __future__ import annotations

from te_doctor.engine.error_capture import capture_errors
from te_doctor.triage.parse_common import Findings, Report

FORMAT = "traceback"


def parse(report: Report, skip: list[tuple[int, int]]) -> tuple[str, Findings]:
    """Every traceback and error line, joined by newlines, outside the ``skip`` line ranges
    (the capture itself is the engine's, shared with ``check``)."""
    found = Findings()
    owned = [False] * len(report.lines)
    for start, end in skip:
        for number in range(max(start, 0), min(end, len(report.lines))):
            owned[number] = True
    captured = capture_errors(report.lines, owned)
    if captured.traceback:
        found.recognised(FORMAT)
    return captured.text, found
