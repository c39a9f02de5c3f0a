"""The ``fleet`` commands: ``node`` (on every node), ``run`` (launch through Slurm) and
``aggregate`` (the default: ``te-doctor fleet DIR`` reads a directory of reports)."""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from te_doctor.cli.check import RULES_DIR
from te_doctor.cli.options import Decorator, complete_path_names, format_option, output_option
from te_doctor.cli.output import write
from te_doctor.errors import ExitCode, TeDoctorError

FLEET_HELP = """\b
te-doctor fleet DIR...          aggregate reports (same as `fleet aggregate`)
te-doctor fleet node --dir DIR  probe this node, write its report (one per Slurm task / pod)
te-doctor fleet run --nodes N   launch `fleet node` through Slurm, then aggregate
"""


class FleetGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, means ``aggregate``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["aggregate", *args]
        return super().parse_args(ctx, args)


def gate_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The aggregation's output and gate options, shared by ``aggregate`` and ``run``."""
    decorators: list[Decorator] = [
        format_option(
            "json",
            "markdown",
            "prometheus",
            help="prometheus: gauges for node-exporter's textfile collector.",
        ),
        output_option("the fleet summary"),
        click.option(
            "--fail-on",
            default="error",
            show_default=True,
            type=click.Choice(["error", "warning", "never"]),
            help="A node fails when a finding of this severity (or worse) fires.",
        ),
        click.option(
            "--require",
            multiple=True,
            metavar="PATH",
            shell_complete=complete_path_names,
            help="A node fails unless this execution path (or family) is viable on it.",
        ),
        click.option("--ignore", multiple=True, metavar="RULE", help="Skip a rule (id or name)."),
        click.option(
            "--expect-gpus",
            type=click.IntRange(min=0),
            metavar="N",
            help="A node fails with fewer than N GPUs visible.",
        ),
        click.option(
            "--min-healthy",
            type=click.IntRange(min=0),
            metavar="N",
            help="Exit 0 when at least N nodes are healthy (default: every node must be).",
        ),
        click.option(
            "--expect-nodes",
            type=click.IntRange(min=1),
            metavar="N",
            help="N nodes should have reported (those short of it are missing).",
        ),
        RULES_DIR,
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


@click.group(cls=FleetGroup, epilog=FLEET_HELP)
def fleet() -> None:
    """Check a GPU fleet: a report per node, aggregated into a gate for the reservation."""


@fleet.command()
@click.argument(
    "sources",
    nargs=-1,
    required=True,
    metavar="DIR|FILE...",
    type=click.Path(exists=True, path_type=Path),
)
@gate_options
def aggregate(sources: tuple[Path, ...], **options: Any) -> None:
    """Aggregate node reports, snapshots or check reports: gate, verdicts, odd nodes out."""
    _aggregate_and_exit(sources, **options)


@fleet.command()
@click.option(
    "--dir",
    "directory",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The shared directory the report goes into.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="Report the node as timed out when the probe takes longer.",
)
@click.option("--smoke", is_flag=True, help="Also run the smoke test (real GEMMs).")
@click.option(
    "--node-name", metavar="NAME", help="Default: $TE_DOCTOR_NODE_NAME, Slurm's, the host name."
)
@click.option(
    "--probe-command",
    metavar="CMD",
    help="Run this instead of te-doctor's probe; it must print a snapshot as JSON "
    "(e.g. the probe inside the training container).",
)
def node(
    directory: Path, timeout: float, smoke: bool, node_name: str | None, probe_command: str | None
) -> None:
    """Probe this node in a child (killed at --timeout) and write its report into --dir."""
    from te_doctor.fleet.node_report import collect, identity_from_env, probe_argv
    from te_doctor.fleet.node_report import write as write_report

    identity = identity_from_env(os.environ, node_name)
    argv = shlex.split(probe_command) if probe_command else probe_argv(sys.executable, smoke=smoke)
    report = collect(identity, argv, timeout)
    try:
        written = write_report(directory, identity, report)
    except OSError as exc:
        raise TeDoctorError(
            f"--dir {directory}: cannot write the report: {exc.strerror or exc}"
        ) from None
    click.echo(f"te-doctor: {identity.node}: {report['status']}: wrote {written}", err=True)


@fleet.command()
@click.option(
    "--nodes", type=click.IntRange(min=1), metavar="N", help="One task on each of N nodes."
)
@click.option(
    "--ntasks",
    type=click.IntRange(min=1),
    metavar="N",
    help="N tasks wherever Slurm places them (several may share a node).",
)
@click.option("--partition", "-p", default="", help="The Slurm partition.")
@click.option(
    "--launcher",
    type=click.Choice(["srun", "sbatch-array"]),
    default="srun",
    show_default=True,
    help="One srun step, or an sbatch job array (large clusters).",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the reports go (shared by the nodes); default ./te-doctor-fleet-<time>.",
)
@click.option(
    "--node-timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    metavar="SECONDS",
    help="A node whose probe takes longer is reported as timed out.",
)
@click.option(
    "--deadline",
    type=click.FloatRange(min=1),
    default=1800.0,
    show_default=True,
    metavar="SECONDS",
    help="Cancel the whole sweep (queueing included) after this long.",
)
@click.option("--smoke", is_flag=True, help="Also run the smoke test on every node.")
@click.option("--probe-command", metavar="CMD", help="Passed to `fleet node` on every node.")
@click.option(
    "--scheduler-arg",
    "scheduler_args",
    multiple=True,
    metavar="ARG",
    help="Passed to srun/sbatch as is (repeatable), e.g. --scheduler-arg=--gpus-per-node=8.",
)
@gate_options
def run(
    nodes: int | None,
    ntasks: int | None,
    partition: str,
    launcher: str,
    directory: Path | None,
    node_timeout: float,
    deadline: float,
    smoke: bool,
    probe_command: str | None,
    scheduler_args: tuple[str, ...],
    **options: Any,
) -> None:
    """Run `fleet node` on every node through Slurm, wait, and aggregate the reports."""
    from te_doctor.fleet.launch import Sweep, launch

    if (nodes is None) == (ntasks is None):
        raise TeDoctorError("fleet run: give exactly one of --nodes N or --ntasks N")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = directory or Path(f"te-doctor-fleet-{stamp}")
    sweep = Sweep(
        launcher=launcher,
        tasks=nodes or ntasks or 1,
        one_per_node=nodes is not None,
        directory=target.resolve(),
        partition=partition,
        scheduler_args=scheduler_args,
        job_name=Sweep.new_job_name(),
    )
    node_argv = [
        sys.executable,
        "-m",
        "te_doctor",
        "fleet",
        "node",
        "--dir",
        str(sweep.directory),
        "--timeout",
        f"{node_timeout:g}",
        *(["--smoke"] if smoke else []),
        *(["--probe-command", probe_command] if probe_command else []),
    ]
    click.echo(
        f"te-doctor: {launcher} {sweep.tasks} task(s) as {sweep.job_name} -> {target}", err=True
    )
    started = time.monotonic()
    try:
        result = launch(sweep, node_argv, deadline)
    except OSError as exc:  # the manifest could not be written
        raise TeDoctorError(f"--dir {target}: cannot write there: {exc.strerror or exc}") from None
    took = time.monotonic() - started
    if result.timed_out:
        click.echo(f"te-doctor: the sweep passed --deadline {deadline:g} s: cancelled", err=True)
    elif result.returncode in (126, 127):
        raise TeDoctorError(
            f"fleet run: cannot start {launcher.split('-')[0]}: is Slurm installed?"
        )
    elif result.returncode != 0:
        tail = (result.stderr.strip().splitlines() or [""])[-1]
        click.echo(f"te-doctor: {launcher} exited with {result.returncode}: {tail}", err=True)
    click.echo(f"te-doctor: sweep finished in {took:.1f} s", err=True)
    _aggregate_and_exit((sweep.directory,), **options)


def _aggregate_and_exit(
    sources: tuple[Path, ...],
    output_format: str,
    output: Path | None,
    fail_on: str,
    require: tuple[str, ...],
    ignore: tuple[str, ...],
    expect_gpus: int | None,
    min_healthy: int | None,
    expect_nodes: int | None,
    rules_dirs: tuple[Path, ...],
) -> None:
    from te_doctor.check.pipeline import load_rule_set
    from te_doctor.check.report import GateOptions
    from te_doctor.fleet.aggregate import aggregate
    from te_doctor.fleet.gate import FleetOptions
    from te_doctor.fleet.reading import report_files
    from te_doctor.render.fleet_render import FLEET_RENDERERS

    gate = GateOptions(fail_on=fail_on, require=require, ignore=ignore, expect_gpus=expect_gpus)
    options = FleetOptions(gate, min_healthy=min_healthy, expect_nodes=expect_nodes)
    rules, paths = load_rule_set(rules_dirs)
    result = aggregate(report_files(sources), rules, paths, options)
    write(FLEET_RENDERERS[output_format](result), output)
    if not result.gate.passed:
        raise click.exceptions.Exit(ExitCode.FINDINGS)
