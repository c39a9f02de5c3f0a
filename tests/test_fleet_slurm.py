"""`te-doctor fleet run` through a real Slurm cluster (`.ci/run` starts one on this machine).

Where Slurm is not running the tests skip, saying so; with ``TE_DOCTOR_REQUIRE_SLURM=1`` (set
by ``.ci/run``) they fail instead, so CI can never skip them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

HANG_TASK = Path(__file__).parent / "data" / "fleet" / "hang_task.py"


def _slurm_problem() -> str:
    """Why Slurm cannot run jobs here, or "" when a node is idle."""
    if shutil.which("srun") is None or shutil.which("sinfo") is None:
        return "Slurm is not installed (srun/sinfo not found); .ci/slurm.sh start installs it"
    try:
        states = subprocess.run(
            ["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=10
        )
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 10 s (slurmctld not running?)"
    if states.returncode != 0:
        return f"sinfo failed: {states.stderr.strip()} (run .ci/slurm.sh start)"
    if not {"idle", "mixed"} & set(states.stdout.split()):
        return f"no idle Slurm node (sinfo: {states.stdout.strip() or 'nothing'})"
    return ""


@pytest.fixture(scope="module", autouse=True)
def slurm() -> None:
    problem = _slurm_problem()
    if problem and os.environ.get("TE_DOCTOR_REQUIRE_SLURM") == "1":
        pytest.fail(f"TE_DOCTOR_REQUIRE_SLURM=1 but {problem}")
    if problem:
        pytest.skip(problem)


def fleet_run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", "fleet", "run", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def reports(directory: Path) -> dict[str, dict[str, object]]:
    found = {}
    for file in directory.glob("*.json"):
        data = json.loads(file.read_text())
        if data.get("schema") == "te-doctor/node-report/v1":
            found[str(data["task_id"])] = data
    return found


def test_a_sweep_collects_every_task_and_reports_the_wedged_one(tmp_path: Path) -> None:
    started = time.monotonic()
    done = fleet_run(
        "--ntasks",
        "4",
        "--dir",
        str(tmp_path),
        "--node-timeout",
        "15",
        "--fail-on",
        "never",
        "--probe-command",
        f"{sys.executable} {HANG_TASK}",
    )
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    found = reports(tmp_path)
    assert sorted(found) == ["0", "1", "2", "3"]
    assert {task: r["status"] for task, r in found.items()} == {
        "0": "ok",
        "1": "ok",
        "2": "timed-out",
        "3": "ok",
    }
    job_ids = {r["job_id"] for r in found.values()}
    assert len(job_ids) == 1 and job_ids != {""}  # the tasks of one Slurm job
    node = str(found["0"]["node"])
    assert "Gate: FAIL: 3 of 4 node(s) healthy" in done.stdout
    assert f"1 node(s) timed out: {node}[2]" in done.stdout
    assert f"{node}[2]: timed out: the probe did not finish within 15 s" in done.stdout
    assert took < 120
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "te_doctor",
            "fleet",
            str(tmp_path),
            "--fail-on",
            "never",
            "--min-healthy",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stdout
    assert "Gate: PASS: 3 of 4 node(s) healthy; --min-healthy 3" in again.stdout


def test_an_sbatch_array_sweep(tmp_path: Path) -> None:
    done = fleet_run(
        "--ntasks",
        "3",
        "--launcher",
        "sbatch-array",
        "--dir",
        str(tmp_path),
        "--node-timeout",
        "60",
        "--fail-on",
        "never",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = reports(tmp_path)
    assert sorted(found) == ["0", "1", "2"]
    assert {r["status"] for r in found.values()} == {"ok"}
    assert "Gate: PASS: 3 of 3 node(s) healthy" in done.stdout


def test_a_sweep_past_its_deadline_is_cancelled_and_the_silent_tasks_named(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    done = fleet_run(
        "--ntasks",
        "2",
        "--dir",
        str(tmp_path),
        "--node-timeout",
        "120",
        "--deadline",
        "5",
        "--probe-command",
        "sleep 600",
    )
    assert time.monotonic() - started < 60
    assert done.returncode == 1
    assert "the sweep passed --deadline 5 s: cancelled" in done.stderr
    assert "never reported: task 0 of te-doctor-fleet-" in done.stdout
    name = next(line for line in done.stderr.splitlines() if " as te-doctor-fleet-" in line)
    job_name = name.split(" as ")[1].split(" ")[0]
    for _ in range(50):
        queue = subprocess.run(
            ["squeue", "-h", "--name", job_name], capture_output=True, text=True, timeout=10
        )
        if not queue.stdout.strip():
            break
        time.sleep(0.2)
    assert not queue.stdout.strip(), f"{job_name} is still queued: {queue.stdout}"
