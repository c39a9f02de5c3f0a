"""Command-line wiring: the command group, loading each command only when it runs, and exit codes.

``te-doctor --help`` lists the commands from ``COMMANDS`` without importing them; a command's
module (and everything it needs) is imported when that command is invoked.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

import click

from te_doctor import __version__
from te_doctor.background import forget_interrupts, on_signal, quiet_dropped_interrupts
from te_doctor.cli.help_text import EXIT_CODES_HELP
from te_doctor.errors import ExitCode, OutputClosedError, TeDoctorError

#: Command name -> (module, attribute, one-line help as the command's docstring starts).
COMMANDS: Mapping[str, tuple[str, str, str]] = {
    "bench": (
        "te_doctor.cli.bench",
        "bench",
        "Measure what each execution path buys on this machine, for one layer's shapes.",
    ),
    "check": (
        "te_doctor.cli.check",
        "check",
        "Can this machine run TE FP8? Findings, fixes, viable paths, and a CI gate.",
    ),
    "diff": (
        "te_doctor.cli.triage",
        "diff",
        "Compare two snapshots (or a snapshot and this machine): what differs, what it explains.",
    ),
    "explain": (
        "te_doctor.cli.check",
        "explain",
        "Explain one rule in full (by id, e.g. TED102, or name).",
    ),
    "fleet": (
        "te_doctor.cli.fleet",
        "fleet",
        "Check a GPU fleet: a report per node, aggregated into a gate for the reservation.",
    ),
    "plan": (
        "te_doctor.cli.plan",
        "plan",
        "How to install TE here, before anyone runs pip: steps, blockers, fixes.",
    ),
    "probe": (
        "te_doctor.cli.probe",
        "probe",
        "Record every fact about this machine (the bug-report artifact).",
    ),
    "rules": ("te_doctor.cli.check", "list_rules", "List every rule (built-in and --rules-dir)."),
    "triage": (
        "te_doctor.cli.triage",
        "triage",
        "Diagnose from pasted text (collect_env, nvidia-smi, pip list, tracebacks, ...).",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use, listed from ``COMMANDS``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attribute, _summary = COMMANDS[cmd_name]
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, _shortened(COMMANDS[name][2], limit)) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _shortened(text: str, limit: int) -> str:
    """``text`` cut at a word to at most ``limit`` characters, with "..." when cut."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 3, 0)].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "..."


@click.group(
    cls=LazyGroup,
    epilog=EXIT_CODES_HELP,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="te-doctor")
def cli() -> None:
    """Can this machine run Transformer Engine FP8? If not, why, and what works instead."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code instead of raising ``SystemExit``."""
    _survive_closed_streams()
    forget_interrupts()
    previous = _interrupts_remembered()
    try:
        with quiet_dropped_interrupts():
            return _run(argv)
    finally:  # called in-process (tests, the API): leave the caller's signal handling as it was
        for number, handler in previous.items():
            signal.signal(number, handler)


def _run(argv: Sequence[str] | None) -> int:
    try:
        code = cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="te-doctor",
            standalone_mode=False,
        )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return ExitCode.USAGE
    except (click.Abort, KeyboardInterrupt) as exc:
        signal_name = str(exc.__cause__ if isinstance(exc, click.Abort) else exc)  # SIGTERM
        how = f" ({signal_name})" if signal_name else ""
        click.echo(f"te-doctor: interrupted{how}", err=True)
        return ExitCode.INTERRUPTED
    except TeDoctorError as exc:
        if isinstance(exc, OutputClosedError):  # nothing more goes there, not even at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        click.echo(f"te-doctor: error: {exc}", err=True)
        return int(exc.exit_code)
    except Exception:  # noqa: BLE001 - last resort: never a bare traceback without context
        click.echo("te-doctor: an unexpected error has occurred (a te-doctor bug):", err=True)
        traceback.print_exc(file=sys.stderr)
        click.echo(
            "Please report it with the output of `te-doctor probe --format json --redact`.",
            err=True,
        )
        return ExitCode.INTERNAL
    return code if isinstance(code, int) else ExitCode.OK


def _survive_closed_streams() -> None:
    """Started with stdout or stderr closed (``>&-``): write what would go there to /dev/null,
    so ``-o FILE`` still works and the exit code still tells the result. A strict stream (a
    UTF-8 locale) writes non-UTF-8 bytes from the environment or a path as backslash escapes."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
        elif getattr(stream, "errors", "") == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _interrupts_remembered() -> dict[int, Any]:
    """SIGTERM (a batch system's cancel, ``kill``) ends te-doctor like Ctrl-C: children are
    stopped, a fleet sweep's job is cancelled, exit 130. Both are remembered, so a wait still
    stops when a finalizer dropped the KeyboardInterrupt (``background.interrupt``). Only the
    main thread may set handlers, and an ignored Ctrl-C (``nohup``) stays ignored; returns the
    handlers replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handle(number: int, frame: object) -> None:
        on_signal("" if number == signal.SIGINT else signal.Signals(number).name)

    previous: dict[int, Any] = {signal.SIGTERM: signal.signal(signal.SIGTERM, handle)}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, handle)
    return previous
