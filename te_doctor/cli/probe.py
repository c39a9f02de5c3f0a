"""``te-doctor probe``: record every fact about this machine (the bug-report artifact)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from te_doctor.cli.help_text import EXIT_CODES_HELP
from te_doctor.cli.options import format_option, output_option, python_option, snapshot_option
from te_doctor.cli.output import write
from te_doctor.probes.target import Target
from te_doctor.render.snapshot_renderers import SNAPSHOT_RENDERERS, OutputFormat


@click.command(epilog=EXIT_CODES_HELP)
@format_option("json", help="Output format.")
@output_option("the snapshot")
@click.option(
    "--redact",
    is_flag=True,
    help="Also strip hostname, user names, home paths and GPU UUIDs/serials. "
    "Secrets in environment variables are always removed.",
)
@snapshot_option("Render a saved snapshot instead of probing this machine.")
@python_option("Diagnose the packages of this interpreter (e.g. a venv's bin/python).")
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
    python: Target,
    smoke: bool,
) -> None:
    """Record every fact about this machine (the bug-report artifact)."""
    from te_doctor.check.snapshot_source import take_snapshot
    from te_doctor.snapshot.redact import redact_personal

    snapshot = take_snapshot(snapshot_file, python, smoke=smoke)
    if redact:
        snapshot = redact_personal(snapshot, home=os.environ.get("HOME", ""))
    write(SNAPSHOT_RENDERERS[OutputFormat(output_format)](snapshot), output)
