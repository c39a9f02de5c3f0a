"""The ``plan`` command (wiring only; the planner lives in plan.py)."""

from __future__ import annotations

from pathlib import Path

import click

from te_doctor.cli.check import write
from te_doctor.cli.options import format_option, output_option, python_option, snapshot_option
from te_doctor.errors import ExitCode
from te_doctor.probes.target import Target


@click.command()
@click.option(
    "--framework",
    type=click.Choice(["pytorch", "jax"]),
    default="pytorch",
    show_default=True,
    help="Which TE extension to install.",
)
@click.option(
    "--te-version",
    "te_spec",
    metavar="SPEC",
    help='A TE version (2.20.2) or specifier (">=2.9,<2.12"); default: newest that fits.',
)
@python_option("Plan for this interpreter (a venv's bin/python).")
@format_option("json", "markdown")
@output_option("the plan")
@click.option(
    "--pip/--no-pip",
    "ask_pip",
    default=True,
    show_default=True,
    help="Ask pip's resolver (dry run, wheels only: nothing is installed or built).",
)
@snapshot_option("Plan for a saved snapshot instead of this machine (pip is not asked).")
def plan(
    framework: str,
    te_spec: str | None,
    python: Target,
    output_format: str,
    output: Path | None,
    ask_pip: bool,
    snapshot_file: Path | None,
) -> None:
    """How to install TE here, before anyone runs pip: steps, blockers, fixes."""
    from te_doctor.check.pipeline import take_snapshot
    from te_doctor.plan.pip_predict import predict
    from te_doctor.plan.planner import make_plan
    from te_doctor.render.plan_render import PLAN_RENDERERS

    snapshot = take_snapshot(snapshot_file, python, smoke=False)
    chosen = make_plan(snapshot, framework=framework, te_spec=te_spec)
    interpreter = snapshot.host.python_executable.get()
    pip = None
    if ask_pip and snapshot_file is None and interpreter:
        pip = predict(interpreter, chosen.te_version, chosen.core_cuda_major)
    write(PLAN_RENDERERS[output_format](chosen, pip), output)
    if chosen.exit_code:
        raise click.exceptions.Exit(ExitCode.FINDINGS)
