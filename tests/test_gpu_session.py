"""``benchmarks/gpu_session.sh --dry-run``: the GPU validation kit's steps, run for real on the CPU.

The kit exists for a GPU machine lent for a few minutes with no network, so it must not fail
there for want of a rehearsal: here it runs every step with the GPUs hidden and must leave the
same at most 8 files (16 MiB each at most), a snapshot that te-doctor loads, a check report
that fits its schema, and a log with every step's exit status.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from te_doctor.check.schemas import report_schema
from te_doctor.snapshot.file import load

REPO = Path(__file__).resolve().parents[1]
SESSION = REPO / "benchmarks" / "gpu_session.sh"
STEPS = ("environment", "probe", "check-json", "check-text", "nvidia-smi", "bench", "pytest-gpu")


@pytest.mark.slow
def test_the_dry_run_leaves_every_file_and_logs_every_step(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = subprocess.run(
        ["bash", str(SESSION), "--dry-run", "--python", sys.executable, str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in out.iterdir())
    assert len(files) <= 8 and all((out / f).stat().st_size <= 16 * 2**20 for f in files)
    snapshots = [f for f in files if f.startswith("real-") and f.endswith(".json")]
    assert snapshots == ["real-no-gpu-no-driver-torch-" + torch_slug() + ".json"], files
    assert {"check.json", "check.txt", "nvidia-smi.txt", "bench.json", "pytest-gpu.txt"} <= set(
        files
    )
    snapshot = load(out / snapshots[0])
    assert snapshot.meta.redacted and snapshot.smoke.outcome.value == "ok"
    jsonschema.Draft202012Validator(report_schema()).validate(
        json.loads((out / "check.json").read_text(encoding="utf-8"))
    )
    log = (out / "session.log").read_text(encoding="utf-8")
    for step in STEPS:
        assert f"step {step}: " in log, step
    assert "step probe: exit 0" in log and "step pytest-gpu: exit 0" in log
    assert "needs torch with a CUDA device" in (out / "pytest-gpu.txt").read_text(encoding="utf-8")


def test_usage_errors_exit_2() -> None:
    for argv in ([], ["--python"], ["--bogus", "x"], ["a", "b"]):
        result = subprocess.run(
            ["bash", str(SESSION), *argv], capture_output=True, text=True, timeout=30, check=False
        )
        assert result.returncode == 2 and "usage:" in result.stderr, argv


def torch_slug() -> str:
    """This interpreter's torch version as the fixture name spells it (2.13.0+cpu: 2-13-0-cpu)."""
    import importlib.metadata
    import re

    return re.sub(r"[^a-z0-9]+", "-", importlib.metadata.version("torch").lower()).strip("-")
