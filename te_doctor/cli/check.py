"""The ``check``, ``rules`` and ``explain`` commands (wiring only; logic lives in check.py)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from te_doctor.cli.colour import wants_colour
from te_doctor.cli.options import (
    complete_path_names,
    complete_rule_ids,
    format_option,
    output_option,
    python_option,
    snapshot_option,
)
from te_doctor.cli.output import write
from te_doctor.errors import ExitCode, TeDoctorError
from te_doctor.probes.target import Target
from te_doctor.render.style import Style, can_encode

if TYPE_CHECKING:
    from te_doctor.engine.paths import ExecutionPath
    from te_doctor.engine.rule_model import Rule

#: ``--for`` choices: the frameworks of rules/frameworks/settings.toml (a test keeps them equal).
FRAMEWORKS = ("megatron", "nemo", "accelerate", "lightning", "hf")

RULES_DIR = click.option(
    "--rules-dir",
    "rules_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Also load the rule files in DIR (repeatable), validated like the built-in ones.",
)


@click.command()
@snapshot_option("Evaluate a saved snapshot (from `te-doctor probe --format json`) offline.")
@python_option("Diagnose this interpreter (its packages; the smoke test runs under it).")
@format_option("json", "markdown", "junit", help="Report format.")
@output_option("the report")
@click.option(
    "--verbose", "-v", is_flag=True, help="Also list passed, not applicable and undecided rules."
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="One summary line for scripts (text format), no progress on stderr.",
)
@click.option(
    "--fail-on",
    default="error",
    show_default=True,
    type=click.Choice(["error", "warning", "never"]),
    help="Exit 1 when a finding of this severity (or worse) fires.",
)
@click.option(
    "--require",
    multiple=True,
    metavar="PATH",
    shell_complete=complete_path_names,
    help="Exit 1 unless this execution path (or family: fp8, te-fp8, bf16, ...) is viable.",
)
@click.option("--ignore", multiple=True, metavar="RULE", help="Skip a rule, by id or name.")
@click.option(
    "--expect-gpus",
    type=click.IntRange(min=0),
    metavar="N",
    help="Exit 1 when fewer than N GPUs are visible.",
)
@click.option(
    "--device",
    type=click.IntRange(min=0),
    metavar="N",
    help="The GPU (physical index) that gpu.* facts describe; default the first visible.",
)
@click.option(
    "--smoke/--no-smoke",
    default=True,
    show_default=True,
    help="Run the real GEMMs in an isolated child process (not with --snapshot).",
)
@click.option(
    "--smoke-timeout",
    type=click.FloatRange(min=1),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Kill the smoke child after this long.",
)
@click.option(
    "--color",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", "always", "never"]),
    help="Colour in text output; auto follows NO_COLOR, FORCE_COLOR and CLICOLOR_FORCE.",
)
@RULES_DIR
@click.option(
    "--for",
    "frameworks",
    multiple=True,
    type=click.Choice(FRAMEWORKS),
    help="Also show the recommended path's settings for this framework (repeatable), "
    "after the snippet and in the JSON report.",
)
def check(
    snapshot_file: Path | None,
    python: Target,
    output_format: str,
    output: Path | None,
    verbose: bool,
    quiet: bool,
    fail_on: str,
    require: tuple[str, ...],
    ignore: tuple[str, ...],
    expect_gpus: int | None,
    device: int | None,
    smoke: bool,
    smoke_timeout: float,
    color: str,
    rules_dirs: tuple[Path, ...],
    frameworks: tuple[str, ...],
) -> None:
    """Can this machine run TE FP8? Findings, fixes, viable paths, and a CI gate."""
    from te_doctor.background import in_background

    # The rule engine loads while the machine is probed and smoke-tested.
    rule_set = in_background(lambda: _load_rule_set(rules_dirs), "te-doctor-rules")
    from te_doctor.bench.citation import cite
    from te_doctor.check.report import GateOptions, Report
    from te_doctor.check.snapshot_source import take_snapshot
    from te_doctor.cli.live import live
    from te_doctor.engine.frameworks import framework_advice
    from te_doctor.render.check_renderers import CHECK_RENDERERS, CheckFormat
    from te_doctor.render.check_text import render_check_line

    options = GateOptions(fail_on=fail_on, require=require, ignore=ignore, expect_gpus=expect_gpus)
    with live("probing the machine", quiet=quiet) as status:
        snapshot = take_snapshot(
            snapshot_file,
            python,
            smoke=smoke,
            smoke_timeout_s=smoke_timeout,
            progress=status.update if status.enabled else None,
        )
    from te_doctor.check.pipeline import run_check

    report = run_check(snapshot, options, device=device, python=python.python, rule_set=rule_set())
    report = dataclasses.replace(
        report,
        measured=cite(snapshot, report.recommendation.path),
        frameworks=framework_advice(frameworks, report.recommendation),
    )
    to_terminal = output is None and sys.stdout.isatty()
    style = Style(
        color=wants_colour(
            color, to_terminal=sys.stdout.isatty(), to_file=output is not None, env=os.environ
        ),
        unicode=output is not None or can_encode(sys.stdout.encoding),
        verbose=verbose,
        width=shutil.get_terminal_size().columns if to_terminal else None,
    )
    render: Callable[[Report, Style], str] = CHECK_RENDERERS[CheckFormat(output_format)]
    if quiet and output_format == "text":
        render = render_check_line
    write(render(report, style), output, color=style.color)
    if not report.gate.passed:
        raise click.exceptions.Exit(ExitCode.FINDINGS)


def _load_rule_set(
    rules_dirs: tuple[Path, ...],
) -> tuple[tuple[Rule, ...], tuple[ExecutionPath, ...]]:
    from te_doctor.check.pipeline import load_rule_set

    return load_rule_set(rules_dirs)


@click.command(name="rules")
@format_option("json", "markdown")
@RULES_DIR
def list_rules(output_format: str, rules_dirs: tuple[Path, ...]) -> None:
    """List every rule (built-in and --rules-dir)."""
    from te_doctor.check.pipeline import load_rule_set
    from te_doctor.render.rules_list import rules_json, rules_markdown, rules_text

    rules, _ = load_rule_set(rules_dirs)
    render = {"text": rules_text, "json": rules_json, "markdown": rules_markdown}[output_format]
    click.echo(render(rules), nl=False)


@click.command()
@click.argument("rule_id", shell_complete=complete_rule_ids)
@RULES_DIR
def explain(rule_id: str, rules_dirs: tuple[Path, ...]) -> None:
    """Explain one rule in full (by id, e.g. TED102, or name)."""
    import difflib

    from te_doctor.check.pipeline import load_rule_set
    from te_doctor.render.rules_list import explain as explain_rule

    rules, _ = load_rule_set(rules_dirs)
    found = next((r for r in rules if rule_id in (r.id, r.name) or rule_id.upper() == r.id), None)
    if found is None:
        typo = rule_id.upper().replace("O", "0")  # TED1O2: a letter O for a zero
        close = [r.id for r in rules if r.id == typo] or difflib.get_close_matches(
            rule_id, [r.id for r in rules] + [r.name for r in rules], n=1
        )
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise TeDoctorError(f"no rule {rule_id!r}{hint}; `te-doctor rules` lists them")
    click.echo(explain_rule(found), nl=False)
