"""The ``plan`` command (wiring only; the planner lives in plan.py)."""

from __future__ import annotations

from pathlib import Path

import click

from te_doctor.cli.options import format_option, output_option, python_option, snapshot_option
from te_doctor.cli.output import write
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
    from te_doctor.check.snapshot_source import take_snapshot
    from te_doctor.cli.live import live
    from te_doctor.plan.pip_predict import predict
    from te_doctor.plan.planner import make_plan
    from te_doctor.render.plan_render import PLAN_RENDERERS

    snapshot = take_snapshot(snapshot_file, python, smoke=False)
    chosen = make_plan(snapshot, framework=framework, te_spec=te_spec, python=python.python)
    interpreter = snapshot.host.python_executable.get()
    pip = None
    if not ask_pip:
        not_asked = "--no-pip"
    elif snapshot_file is not None:
        not_asked = "a saved snapshot: pip answers only on the machine itself"
    elif not interpreter:
        not_asked = "the interpreter to ask it under is unknown"
    else:
        not_asked = ""
        with live("asking pip's resolver (dry run, nothing is installed)"):
            pip = predict(interpreter, chosen.te_version, chosen.core_cuda_major)
    write(PLAN_RENDERERS[output_format](chosen, pip, not_asked), output)
    if chosen.exit_code:
        raise click.exceptions.Exit(ExitCode.FINDINGS)
