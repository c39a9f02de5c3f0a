"""The ``triage`` command (wiring only; parsing and diagnosis live in te_doctor/triage/)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from te_doctor.cli.check import RULES_DIR
from te_doctor.cli.options import format_option, output_option
from te_doctor.cli.output import write
from te_doctor.errors import TeDoctorError


@click.command()
@click.argument("source", metavar="FILE|-")
@format_option("json", "markdown")
@output_option("the diagnosis")
@click.option(
    "--no-redact",
    is_flag=True,
    help="Keep user names, home paths, tokens and GPU UUIDs in the output.",
)
@RULES_DIR
def triage(
    source: str,
    output_format: str,
    output: Path | None,
    no_redact: bool,
    rules_dirs: tuple[Path, ...],
) -> None:
    """Diagnose from pasted text (collect_env, nvidia-smi, pip list, tracebacks, ...)."""
    from te_doctor.check.pipeline import load_rule_set
    from te_doctor.render.triage_render import TRIAGE_RENDERERS
    from te_doctor.snapshot.redact import redact_pasted_text
    from te_doctor.triage.diagnose import diagnose, pasted_facts
    from te_doctor.triage.parsers import parse_report

    parsed = parse_report(read_pasted(source))
    rules, _ = load_rule_set(rules_dirs)
    facts = pasted_facts(parsed.facts, parsed.sources, parsed.error_text, parsed.absent)
    text = TRIAGE_RENDERERS[output_format](
        diagnose(facts, rules, parsed.formats, parsed.unread_text)
    )
    write(text if no_redact else redact_pasted_text(text), output)


#: Far more than any bug report; the parsers also bound what they scan.
MAX_PASTE_BYTES = 200 * 2**20


def read_pasted(source: str) -> str:
    """The text of FILE, or of stdin for ``-``; undecodable bytes are replaced, never fatal."""
    data: bytes
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_PASTE_BYTES)
        else:
            with open(source, "rb") as handle:
                data = handle.read(MAX_PASTE_BYTES)
    except OSError as exc:
        raise TeDoctorError(f"{source}: cannot read: {exc.strerror or exc}") from None
    return data.decode("utf-8", errors="replace")


@click.command()
@click.argument("left", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("right", type=click.Path(dir_okay=False, path_type=Path), required=False)
@format_option("json")
@output_option("the comparison")
@RULES_DIR
def diff(
    left: Path,
    right: Path | None,
    output_format: str,
    output: Path | None,
    rules_dirs: tuple[Path, ...],
) -> None:
    """Compare two snapshots (or a snapshot and this machine): what differs, what it explains."""
    from te_doctor.check.pipeline import load_rule_set
    from te_doctor.check.snapshot_source import take_snapshot
    from te_doctor.engine.flatten import flatten
    from te_doctor.probes.target import choose_target
    from te_doctor.render.diff_render import DIFF_RENDERERS
    from te_doctor.triage.diff import compare

    rules, _ = load_rule_set(rules_dirs)
    first = take_snapshot(left, None)
    # No second file: this machine, probed now, for the interpreter `check` would diagnose.
    second = take_snapshot(right, choose_target(None, os.environ))
    names = (str(left), str(right) if right else "this machine")
    comparison = compare(flatten(first), flatten(second), rules, names)
    write(DIFF_RENDERERS[output_format](comparison), output)
