"""Command-line wiring: parse options, call the pipeline, write output, map errors to exit codes."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import click

from te_doctor import __version__
from te_doctor.cli_bench import bench
from te_doctor.cli_check import check, explain, list_rules, write
from te_doctor.cli_fleet import fleet
from te_doctor.cli_options import format_option, output_option, python_option, snapshot_option
from te_doctor.cli_plan import plan
from te_doctor.cli_triage import diff, triage
from te_doctor.errors import ExitCode, TeDoctorError
from te_doctor.render import SNAPSHOT_RENDERERS, OutputFormat

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  check: the gate failed; plan: a blocker remains; bench: nothing measured
  2  bad input: a flag, rule file or snapshot
  3  internal error (a te-doctor bug: please report it)
  130 interrupted
"""


@click.group(epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="te-doctor")
def cli() -> None:
    """Can this machine run Transformer Engine FP8? If not, why, and what works instead."""


@cli.command(epilog=EXIT_CODES_HELP)
@format_option("json", help="Output format.")
@output_option("the snapshot")
@click.option(
    "--redact",
    is_flag=True,
    help="Also strip hostname, user names, home paths and GPU UUIDs/serials. "
    "Secrets in environment variables are always removed.",
)
@snapshot_option("Render a saved snapshot instead of probing this machine.")
@python_option("Diagnose the packages of another interpreter (e.g. a venv's bin/python).")
@click.option(
    "--smoke",
    is_flag=True,
    help="Also run the smoke test (real GEMMs in a child process) and record its results.",
)
def probe(
    output_format: str,
    output: Path | None,
    redact: bool,
    snapshot_file: Path | None,
    python: str | None,
    smoke: bool,
) -> None:
    """Record every fact about this machine (the bug-report artifact)."""
    from te_doctor.check import take_snapshot
    from te_doctor.redact import redact_personal

    snapshot = take_snapshot(snapshot_file, python, smoke=smoke)
    if redact:
        snapshot = redact_personal(snapshot, home=os.environ.get("HOME", ""))
    write(SNAPSHOT_RENDERERS[OutputFormat(output_format)](snapshot), output)


cli.add_command(check)
cli.add_command(list_rules)
cli.add_command(explain)
cli.add_command(plan)
cli.add_command(triage)
cli.add_command(diff)
cli.add_command(fleet)
cli.add_command(bench)


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
