"""How a process ended, in words: one phrasing for every child and tool te-doctor runs.

``subprocess`` reports a child killed by a signal as a negative return code (-11), a shell
reports it as 128 + the signal (139), and 126/127 are the shells' (and ``run_command``'s) codes
for a program that could not be executed or was not found. A bare ``exit -11`` names none of it.
"""

from __future__ import annotations

import signal

#: What a signal usually means when it kills a Python process running torch or TE.
SIGNAL_MEANINGS = {
    "SIGSEGV": "segmentation fault",
    "SIGABRT": "aborted",
    "SIGKILL": "likely the OOM killer",
    "SIGBUS": "bus error",
    "SIGILL": "illegal instruction: code built for a newer CPU",
    "SIGFPE": "arithmetic fault",
    "SIGTERM": "terminated",
    "SIGINT": "interrupted",
    "SIGHUP": "hang-up",
    "SIGPIPE": "broken pipe",
}
#: Exit codes with a conventional meaning (shells, ``timeout(1)``, ``run_command``).
EXIT_MEANINGS = {127: "not found", 126: "not executable", 124: "timed out"}
_SHELL_SIGNAL_BASE = 128


def signal_in_words(number: int) -> str:
    """``11`` -> ``SIGSEGV (segmentation fault)``; an unknown number stays a number."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    meaning = SIGNAL_MEANINGS.get(name)
    return f"{name} ({meaning})" if meaning else name


def exit_in_words(returncode: int) -> str:
    """How a process with this return code ended, e.g. ``killed by SIGSEGV (segmentation
    fault)``, ``exit 127 (not found)``, ``exit 139 (SIGSEGV (segmentation fault), as a shell
    reports it)`` or ``exit 1``."""
    if returncode < 0:
        return f"killed by {signal_in_words(-returncode)}"
    if returncode in EXIT_MEANINGS:
        return f"exit {returncode} ({EXIT_MEANINGS[returncode]})"
    number = returncode - _SHELL_SIGNAL_BASE
    if 0 < number < 65 and _known_signal(number):
        return f"exit {returncode} ({signal_in_words(number)}, as a shell reports it)"
    return f"exit {returncode}"


def _known_signal(number: int) -> bool:
    try:
        signal.Signals(number)
    except ValueError:
        return False
    return True
