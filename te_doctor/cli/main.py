"""Command-line wiring: the command group, loading each command only when it runs, and exit codes.

``te-doctor --help`` lists the commands from ``COMMANDS`` without importing them; a command's
module (and everything it needs) is imported when that command is invoked.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Mapping, Sequence

import click

from te_doctor import __version__
from te_doctor.cli.help_text import EXIT_CODES_HELP
from te_doctor.errors import ExitCode, TeDoctorError

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
    except (click.Abort, KeyboardInterrupt):
        click.echo("te-doctor: interrupted", err=True)
        return ExitCode.INTERRUPTED
    except TeDoctorError as exc:
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
