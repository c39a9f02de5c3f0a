"""`te-doctor fleet node`: one report per node, whatever its probe does, with its identity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from te_doctor.fleet.node_report import NodeIdentity, identity_from_env
from te_doctor.snapshot.model import SCHEMA_VERSION

CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "TE_DOCTOR_"))}


def node(
    directory: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", "fleet", "node", "--dir", str(directory), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**CLEAN, **(env or {})},
    )


def only_report(directory: Path) -> dict[str, object]:
    (file,) = directory.glob("*.json")
    data: dict[str, object] = json.loads(file.read_text())
    return data


def test_identity_comes_from_slurm_kubernetes_or_the_options() -> None:
    slurm = {"SLURMD_NODENAME": "gpu017", "SLURM_JOB_ID": "991", "SLURM_PROCID": "3"}
    assert identity_from_env(slurm) == NodeIdentity("gpu017", "991", "3")
    array = {**slurm, "SLURM_ARRAY_JOB_ID": "990", "SLURM_ARRAY_TASK_ID": "12"}
    assert identity_from_env(array) == NodeIdentity("gpu017", "990", "12")
    pod = {
        "TE_DOCTOR_NODE_NAME": "k8s-gpu-3",
        "TE_DOCTOR_JOB_ID": "sweep",
        "JOB_COMPLETION_INDEX": "7",
    }
    assert identity_from_env(pod) == NodeIdentity("k8s-gpu-3", "sweep", "7")
    assert identity_from_env(slurm, node_name="given").node == "given"
    assert identity_from_env({}).task_id == "0" and identity_from_env({}).node
    assert NodeIdentity("a/b c", "", "0").file_name() == "a_b_c-nojob-0.json"


def test_a_node_writes_its_snapshot_and_who_it_is(tmp_path: Path) -> None:
    env = {"SLURMD_NODENAME": "gpu017", "SLURM_JOB_ID": "991", "SLURM_PROCID": "3"}
    done = node(tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "gpu017-991-3.json").is_file()
    report = only_report(tmp_path)
    assert report["schema"] == "te-doctor/node-report/v1" and report["status"] == "ok"
    assert (report["node"], report["job_id"], report["task_id"]) == ("gpu017", "991", "3")
    snapshot = report["snapshot"]
    assert isinstance(snapshot, dict) and snapshot["schema_version"] == SCHEMA_VERSION
    assert not list(tmp_path.glob(".node-*"))  # no temporary file left behind


def test_a_hanging_probe_is_reported_as_timed_out(tmp_path: Path) -> None:
    started = time.monotonic()
    done = node(tmp_path, "--timeout", "1", "--probe-command", "sleep 30")
    assert done.returncode == 0 and time.monotonic() - started < 10
    report = only_report(tmp_path)
    assert report["status"] == "timed-out" and report["snapshot"] is None
    assert report["detail"] == "the probe did not finish within 1 s"


def test_a_failing_or_silent_probe_is_reported_as_failed(tmp_path: Path) -> None:
    script = "import sys; sys.exit('nvidia-smi: NVML: driver/library version mismatch')"
    node(tmp_path, "--probe-command", f'{sys.executable} -c "{script}"')
    report = only_report(tmp_path)
    assert report["status"] == "failed"
    assert report["detail"] == (
        "the probe exited with code 1: nvidia-smi: NVML: driver/library version mismatch"
    )
    for file in tmp_path.glob("*.json"):
        file.unlink()
    node(tmp_path, "--probe-command", "echo not-json")
    assert str(only_report(tmp_path)["detail"]).startswith("the probe printed no JSON snapshot")


def test_a_report_directory_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = node(blocker / "reports")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"te-doctor: error: --dir {blocker / 'reports'}: cannot write the report: Not a directory"
    )
