"""Launching ``te-doctor fleet node`` on every node through Slurm, and not waiting forever.

``srun`` starts one task per node (``--nodes N --ntasks-per-node 1``) in one step: the usual
way for a reservation that is already allocated or a partition that has room. ``sbatch
--array`` queues one single-node job per task, for large clusters where a single N-node
allocation would wait long. Either way each task writes its own report, enforces its own probe
timeout, and the whole sweep has a deadline after which the job is cancelled and the tasks
that did not report are named by the aggregation.
"""

from __future__ import annotations

import datetime
import json
import shlex
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from te_doctor.fleet.reading import RUN_MANIFEST_SCHEMA
from te_doctor.probes.commands import CommandResult, run_command

LAUNCHERS = ("srun", "sbatch-array")
MANIFEST = "fleet-run.json"


@dataclass(frozen=True, slots=True)
class Sweep:
    """One fleet sweep: how it is launched and where the reports go."""

    launcher: str
    tasks: int
    one_per_node: bool
    directory: Path
    partition: str = ""
    scheduler_args: tuple[str, ...] = ()
    job_name: str = ""

    @staticmethod
    def new_job_name() -> str:
        """A name unique enough to cancel exactly this sweep."""
        return f"te-doctor-fleet-{uuid.uuid4().hex[:8]}"


def scheduler_argv(sweep: Sweep, node_argv: Sequence[str]) -> list[str]:
    """The ``srun`` or ``sbatch`` command line that runs ``node_argv`` once per task."""
    common = [f"--job-name={sweep.job_name}"]
    if sweep.partition:
        common.append(f"--partition={sweep.partition}")
    if sweep.launcher == "srun":
        argv = ["srun", *common, f"--ntasks={sweep.tasks}", "--kill-on-bad-exit=0"]
        if sweep.one_per_node:
            argv += [f"--nodes={sweep.tasks}", "--ntasks-per-node=1"]
        return [*argv, *sweep.scheduler_args, *node_argv]
    argv = ["sbatch", "--wait", *common, f"--array=0-{sweep.tasks - 1}", "--ntasks=1"]
    argv += ["--exclusive"] if sweep.one_per_node else []
    argv += [f"--output={sweep.directory / 'slurm-%A_%a.out'}"]
    return [*argv, *sweep.scheduler_args, "--wrap", shlex.join(node_argv)]


def write_manifest(sweep: Sweep) -> Path:
    """Record what was launched, so that tasks that never report can be named."""
    sweep.directory.mkdir(parents=True, exist_ok=True)
    manifest = sweep.directory / MANIFEST
    data = {
        "schema": RUN_MANIFEST_SCHEMA,
        "launcher": sweep.launcher,
        "job_name": sweep.job_name,
        "expected_tasks": sweep.tasks,
        "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    manifest.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return manifest


def launch(sweep: Sweep, node_argv: Sequence[str], deadline_s: float) -> CommandResult:
    """Run the sweep; past ``deadline_s``, or when te-doctor is interrupted (Ctrl-C, SIGTERM),
    the job is cancelled (``scancel --name``): killing srun or sbatch alone leaves it queued."""
    write_manifest(sweep)
    try:
        result = run_command(scheduler_argv(sweep, node_argv), timeout=deadline_s)
    except KeyboardInterrupt:
        cancel(sweep)
        raise
    if result.timed_out:
        cancel(sweep)
    return result


def cancel(sweep: Sweep) -> CommandResult:
    """Cancel every job of the sweep by its unique name."""
    return run_command(["scancel", f"--name={sweep.job_name}"], timeout=30)
