"""Exit codes and the errors te-doctor raises for *its own* failures (bad input, bad data).

Problems found on the machine are never exceptions: they are facts in the snapshot.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Process exit codes, documented in the README and in ``--help``."""

    OK = 0
    FINDINGS = 1
    USAGE = 2
    INTERNAL = 3
    INTERRUPTED = 130


class TeDoctorError(Exception):
    """Base class for errors caused by input te-doctor was given; rendered as one line."""

    exit_code: ExitCode = ExitCode.USAGE


class SnapshotError(TeDoctorError):
    """A snapshot file that is malformed, truncated or from a newer schema."""


class InterpreterError(TeDoctorError):
    """``--python PATH`` cannot be run, or is no Python te-doctor can diagnose.

    ``output`` is what it printed, for the error signatures to name the cause.
    """

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class OutputClosedError(TeDoctorError):
    """stdout's reader went away before the output was written (``te-doctor check | head``)."""

    exit_code = ExitCode.FINDINGS
