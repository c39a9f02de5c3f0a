"""``te-doctor probe --python`` against a real, broken Transformer Engine install.

The venv (``tests/real_venv.py``) holds torch 2.13.0+cpu and TE 2.20.2 for CUDA 13 without
cuDNN, cuBLAS or NCCL. te-doctor must describe exactly that from the files on disk, and
``import transformer_engine`` really failing there shows the description is the true one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from te_doctor.snapshot.facts import FactState
from te_doctor.snapshot.file import loads
from te_doctor.snapshot.model import Snapshot

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TE_VERSION = "2.20.2"


@pytest.fixture(scope="module")
def snapshot(venv_python: Path) -> Snapshot:
    """The JSON snapshot of the broken venv."""
    return loads(probe(venv_python, "json"))


def probe(python: Path, output_format: str) -> str:
    """Run ``te-doctor probe --python`` in a fresh process and return its stdout."""
    result = subprocess.run(
        [sys.executable, "-m", "te_doctor", "probe", "--format", output_format]
        + ["--python", str(python)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def site_packages(python: Path) -> Path:
    """The venv's site-packages directory, symlinks resolved."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return (python.parent.parent / "lib" / version / "site-packages").resolve()


def test_snapshot_describes_the_install(venv_python: Path, snapshot: Snapshot) -> None:
    torch = snapshot.torch
    assert torch.version.get() == "2.13.0+cpu"
    assert torch.cuda_version.state is FactState.ABSENT

    te = snapshot.transformer_engine
    assert te.version.get() == TE_VERSION
    assert te.core_package.get() == "transformer-engine-cu13"
    assert te.core_cuda_major.get() == 13
    core = te.core_library.get()
    assert core is not None
    wheel_lib = site_packages(venv_python) / "transformer_engine" / "wheel_lib"
    assert Path(core).resolve().parent == wheel_lib
    assert Path(core).name.startswith("libtransformer_engine")
    assert te.torch_extension.state is FactState.ABSENT
    archs = te.core_cuda_archs.get() or ()
    assert {"sm_80", "sm_90", "sm_100", "sm_120"} <= set(archs)  # read from the real fatbin

    needed = {lib.name: lib.resolved for lib in te.needed_libraries}
    assert needed["libcudnn.so.9"].state is FactState.ABSENT
    assert needed["libcublas.so.13"].state is FactState.ABSENT

    installed = {p.name: p for p in snapshot.packages.installed}
    for name, version in (
        ("torch", "2.13.0+cpu"),
        ("transformer-engine", TE_VERSION),
        ("transformer-engine-cu13", TE_VERSION),
    ):
        assert installed[name].version.get() == version
        assert installed[name].install_kind == "wheel"
        assert Path(installed[name].location).resolve() == site_packages(venv_python)
    assert not [name for name in installed if name.startswith("nvidia-")]


def test_import_fails_for_the_reason_the_snapshot_gives(
    venv_python: Path, snapshot: Snapshot
) -> None:
    needed = {lib.name: lib.resolved for lib in snapshot.transformer_engine.needed_libraries}
    assert needed["libcudnn.so.9"].state is FactState.ABSENT
    loaded = {lib.name: lib.resolved for lib in snapshot.transformer_engine.loaded_at_import}
    predicted = "cudnn shared object not found"
    assert predicted in loaded["libcudnn"].reason
    result = subprocess.run(
        [str(venv_python), "-c", "import transformer_engine"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert predicted in result.stderr


def test_text_report_names_what_is_missing(venv_python: Path) -> None:
    lines = probe(venv_python, "text").splitlines()
    extension = next(line for line in lines if line.strip().startswith("torch extension"))
    assert "not present" in extension
    assert any("libcudnn.so.9" in line for line in lines)


def check(python: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    """``te-doctor check --python PATH --format json`` (smoke test included), parsed."""
    import json

    result = subprocess.run(
        [sys.executable, "-m", "te_doctor", "check", "--python", str(python), "--format", "json"]
        + ["--fail-on", "never", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def fired(report: dict[str, object]) -> set[str]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return {f["rule_id"] for f in findings if f["outcome"] == "fired"}


def test_check_names_the_cause_and_recommends_what_works(venv_python: Path) -> None:
    """The real import failure is caught by the smoke test, explained, and routed around."""
    report = check(venv_python)
    assert {"TED801", "TED705", "TED301"} <= fired(report)  # import failed; cuDNN is the cause
    smoke = report["smoke"]
    assert isinstance(smoke, dict)
    assert smoke["outcome"]["value"] == "failed" and smoke["stage"]["value"] == "import-te"
    recommendation = report["recommendation"]
    assert isinstance(recommendation, dict)
    # the CPU paths are what works; BF16 autocast on the CPU, verified by its smoke check
    assert recommendation["path"] == "cpu-bf16" and recommendation["verification"] == "verified"


def test_wrong_fp8_numbers_are_reported_as_a_numerics_failure(venv_python: Path) -> None:
    import os

    report = check(venv_python, env={**os.environ, "TE_DOCTOR_SMOKE_FAULT": "wrong-scale"})
    assert "TED806" in fired(report)
    smoke = report["smoke"]
    assert isinstance(smoke, dict)
    statuses = {c["name"]: c["status"] for c in smoke["checks"]}
    assert statuses["torch-fp8"] == "numerics" and statuses["cpu"] == "ok"
