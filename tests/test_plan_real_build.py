"""The plan's prediction checked against a real build: CPU torch cannot build TE's extension.

In a temporary venv with the CPU build of torch 2.13.0, `te-doctor plan` must predict that
compiling transformer_engine_torch fails, and why; then the real `pip install` of that sdist
runs (bounded in time, nothing else installed) and must fail for exactly that reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail
from tests.real_venv import OfflineError, ensure_venv

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
TE_VERSION = "2.20.2"


@pytest.fixture(scope="module")
def cpu_torch_python() -> Path:
    try:
        return ensure_venv(installs=(("torch==2.13.0",),), name="cpu-torch")
    except OfflineError as exc:
        skip_or_fail(f"no network to build the CPU-torch venv: {exc}")


def test_plan_predicts_the_real_build_failure(cpu_torch_python: Path) -> None:
    plan = subprocess.run(
        [
            sys.executable,
            "-m",
            "te_doctor",
            "plan",
            "--python",
            str(cpu_torch_python),
            "--te-version",
            TE_VERSION,
            "--format",
            "json",
            "--no-pip",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert plan.returncode == 1, plan.stderr  # a blocker remains
    data = json.loads(plan.stdout)
    blockers = [f for f in data["findings"] if f["rule_id"] in data["blockers"]]
    predicted = " ".join(f["message"] + " " + f["fix"] for f in blockers)
    assert "CPU-only" in predicted, predicted

    build = subprocess.run(
        [
            str(cpu_torch_python),
            "-m",
            "pip",
            "install",
            "--no-build-isolation",
            "--no-deps",
            "--no-input",
            f"transformer_engine_torch=={TE_VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = build.stdout + build.stderr
    if build.returncode != 0 and any(
        marker in output
        for marker in ("NewConnectionError", "Temporary failure in name resolution")
    ):
        skip_or_fail("the package index is unreachable: the real build cannot be tried")
    assert build.returncode != 0, "the build was predicted to fail but succeeded"
    # setup.py parses torch.version.cuda, which is None for a CPU build of torch.
    assert "Invalid version: None" in output, output[-3000:]
