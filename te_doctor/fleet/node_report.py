"""One node's report: its identity in the scheduler, how the probe ended, and the snapshot.

``te-doctor fleet node`` runs on every node (a Slurm task, a Kubernetes pod). The probe runs
in a child process killed at ``--timeout``, so a wedged node still writes a report, "timed
out", and the sweep never waits on it. The report is written atomically, so the aggregator
never reads half a file from a node still writing.
"""

from __future__ import annotations

import datetime
import json
import re
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from te_doctor import __version__
from te_doctor.files import write_atomically
from te_doctor.probes.commands import run_command
from te_doctor.probes.exits import exit_in_words

NODE_REPORT_SCHEMA = "te-doctor/node-report/v1"
#: Where the node name, job id and task id come from, first match wins.
NODE_VARIABLES = ("TE_DOCTOR_NODE_NAME", "SLURMD_NODENAME")
JOB_VARIABLES = ("TE_DOCTOR_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_JOB_ID")
TASK_VARIABLES = (
    "TE_DOCTOR_TASK_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_PROCID",
    "JOB_COMPLETION_INDEX",
)
DETAIL_LIMIT = 2000
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class NodeIdentity:
    """Who wrote a report: node name, scheduler job id and task id ("" when not in a job)."""

    node: str
    job_id: str
    task_id: str

    def file_name(self) -> str:
        """``<node>-<job>-<task>.json``, safe on any filesystem."""
        parts = [self.node or "node", self.job_id or "nojob", self.task_id or "0"]
        return "-".join(_UNSAFE.sub("_", part) for part in parts) + ".json"


def identity_from_env(env: Mapping[str, str], node_name: str | None = None) -> NodeIdentity:
    """The identity from ``--node-name`` or the scheduler's environment variables."""

    def first(names: Sequence[str]) -> str:
        return next((env[name] for name in names if env.get(name)), "")

    node = node_name or first(NODE_VARIABLES) or socket.gethostname()
    return NodeIdentity(node, first(JOB_VARIABLES), first(TASK_VARIABLES) or "0")


def probe_argv(python: str, *, smoke: bool) -> list[str]:
    """The default probe: this te-doctor, printing the snapshot as JSON."""
    return [python, "-m", "te_doctor", "probe", "--format", "json", *(["--smoke"] if smoke else [])]


def collect(
    identity: NodeIdentity,
    argv: Sequence[str],
    timeout_s: float,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run the probe ``argv`` (it prints a snapshot on stdout) and build the node's report."""
    started = time.monotonic()
    result = run_command(argv, timeout=timeout_s, env=env)
    duration = round(time.monotonic() - started, 3)
    snapshot: Any = None
    if result.timed_out:
        status, detail = "timed-out", f"the probe did not finish within {timeout_s:g} s"
    elif result.returncode != 0:
        tail = result.stderr.strip().splitlines()[-1:] or [""]
        ended = exit_in_words(result.returncode)
        status, detail = "failed", f"the probe ended ({ended}): {tail[0]}"
    else:
        try:
            snapshot = json.loads(result.stdout)
            status, detail = "ok", ""
        except ValueError as exc:
            status, detail = "failed", f"the probe printed no JSON snapshot: {exc}"
    return {
        "schema": NODE_REPORT_SCHEMA,
        "node": identity.node,
        "job_id": identity.job_id,
        "task_id": identity.task_id,
        "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "te_doctor_version": __version__,
        "status": status,
        "detail": detail[:DETAIL_LIMIT],
        "duration_s": duration,
        "snapshot": snapshot,
    }


def write(directory: Path, identity: NodeIdentity, report: Mapping[str, Any]) -> Path:
    """Write the report into ``directory`` atomically; returns its path."""
    target = directory / identity.file_name()
    write_atomically(target, json.dumps(report))
    return target
