"""te-doctor diagnoses the environment the user has activated, not its own isolated one.

Installed on its own (pipx, uvx, its own venv) and run inside an activated venv or conda
environment, ``check`` and ``probe`` describe that environment; ``--python self`` keeps
te-doctor's own; the Python API keeps diagnosing the process that calls it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from te_doctor.probes.target import NAMED, Target, choose_target
from te_doctor.runtime.selection import NoViablePathError, select_path
from tests.conftest import skip_or_fail
from tests.real_venv import OfflineError, run_install

OWN = "/opt/pipx/venvs/te-doctor"
ALONE = "te-doctor's own interpreter (no other environment is active)"
TORCH_VERSION_PY = "__version__ = '2.6.0+cu126'\ncuda = '12.6'\n"


@pytest.mark.parametrize(
    ("option", "env", "files", "expected"),
    [
        (
            None,
            {},
            (),
            Target(None, "te-doctor's own interpreter (no other environment is active)"),
        ),
        (
            None,
            {"VIRTUAL_ENV": "/work/train"},
            ("/work/train/bin/python",),
            Target(
                "/work/train/bin/python",
                f"the active virtual environment (VIRTUAL_ENV); te-doctor itself runs in {OWN} "
                "(--python self diagnoses that one)",
            ),
        ),
        (
            None,
            {"CONDA_PREFIX": "/opt/conda/envs/te"},
            ("/opt/conda/envs/te/bin/python3",),
            Target(
                "/opt/conda/envs/te/bin/python3",
                f"the active conda environment (CONDA_PREFIX); te-doctor itself runs in {OWN} "
                "(--python self diagnoses that one)",
            ),
        ),
        (  # a venv made from a conda Python and activated inside it: the venv is innermost
            None,
            {"VIRTUAL_ENV": "/work/train", "CONDA_PREFIX": "/opt/conda"},
            ("/work/train/bin/python", "/opt/conda/bin/python"),
            Target("/work/train/bin/python", ""),
        ),
        (
            None,
            {"VIRTUAL_ENV": OWN},
            (f"{OWN}/bin/python",),
            Target(None, "te-doctor's own interpreter, which is the active virtual environment"),
        ),
        (
            None,
            {"VIRTUAL_ENV": "/gone"},
            (),
            Target(None, "te-doctor's own interpreter: VIRTUAL_ENV=/gone has no bin/python"),
        ),
        (
            "self",
            {"VIRTUAL_ENV": "/work/train"},
            ("/work/train/bin/python",),
            Target(None, "te-doctor's own interpreter (--python self)"),
        ),
        (
            "/srv/py",
            {"VIRTUAL_ENV": "/work/train"},
            ("/work/train/bin/python",),
            Target("/srv/py", NAMED),
        ),
    ],
)
def test_the_target_is_the_interpreter_users_mean(
    option: str | None, env: dict[str, str], files: tuple[str, ...], expected: Target
) -> None:
    chosen = choose_target(option, env, own_prefix=OWN, is_file=lambda p: p in files)
    assert chosen.python == expected.python
    assert chosen.why.startswith(expected.why)


# --------------------------------------------------------------------------- a real activation


def fake_stack(venv: Path) -> None:
    """torch and Transformer Engine as pip leaves them on disk: metadata and files, no code."""
    site = next((venv / "lib").glob("python3.*")) / "site-packages"
    for name, version, files in (
        (
            "torch",
            "2.6.0+cu126",
            {"torch/version.py": "__version__ = '2.6.0+cu126'\ncuda = '12.6'\n"},
        ),
        ("transformer_engine", "2.4.0", {"transformer_engine/__init__.py": ""}),
    ):
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        dist = name.replace("_", "-")
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n\n", encoding="utf-8"
        )
        (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
        for relative, text in files.items():
            (site / relative).parent.mkdir(parents=True, exist_ok=True)
            (site / relative).write_text(text, encoding="utf-8")


def activated(venv: Path) -> dict[str, str]:
    """The environment ``source venv/bin/activate`` makes."""
    env = {k: v for k, v in os.environ.items() if k not in ("CONDA_PREFIX", "PYTHONHOME")}
    return {**env, "VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{env.get('PATH', '')}"}


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, env=env)


@pytest.fixture(scope="module")
def train_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An activatable venv holding (fake) torch 2.6.0+cu126 and TE 2.4.0, and nothing else."""
    venv = tmp_path_factory.mktemp("train") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    fake_stack(venv)
    return venv


def describe(probe_json: str) -> tuple[str, str, dict[str, str]]:
    host = json.loads(probe_json)
    packages = {p["name"]: p["version"].get("value", "") for p in host["packages"]["installed"]}
    return (
        host["host"]["python_executable"]["value"],
        host["host"]["python_chosen_by"]["value"],
        packages,
    )


def test_probe_and_check_describe_the_activated_venv(train_venv: Path) -> None:
    """te-doctor run from this interpreter (another environment) inside the activated venv."""
    env = activated(train_venv)
    te_doctor = [sys.executable, "-m", "te_doctor"]
    probed = run([*te_doctor, "probe", "--format", "json"], env)
    assert probed.returncode == 0, probed.stderr
    python, why, packages = describe(probed.stdout)
    assert python == f"{train_venv}/bin/python"
    assert why.startswith("the active virtual environment (VIRTUAL_ENV)")
    assert packages == {"torch": "2.6.0+cu126", "transformer-engine": "2.4.0"}

    own = run([*te_doctor, "probe", "--format", "json", "--python", "self"], env)
    python, why, packages = describe(own.stdout)
    assert python == sys.executable and why == "te-doctor's own interpreter (--python self)"
    assert packages.get("torch") != "2.6.0+cu126"


def test_select_path_keeps_diagnosing_its_own_process(
    train_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Called from a training script, the API describes that script's interpreter."""
    monkeypatch.setenv("VIRTUAL_ENV", str(train_venv))
    with contextlib.suppress(NoViablePathError):  # where this Python has no torch
        select_path(smoke=False, cache_dir=tmp_path)
    (decision,) = tmp_path.glob("*.json")
    assert json.loads(decision.read_text(encoding="utf-8"))["facts"]["python"] == sys.executable


@pytest.mark.slow
def test_isolated_install_diagnoses_the_activated_venv(
    train_venv: Path, built_wheel: Path, tmp_path: Path
) -> None:
    """The README's recommendation end to end: te-doctor installed in a venv of its own (as
    pipx and uvx do), the user's venv activated, `te-doctor check` and `probe` from PATH."""
    tool = tmp_path / "te-doctor-venv"
    try:
        run_install([sys.executable, "-m", "venv", str(tool)])
        run_install([str(tool / "bin" / "python"), "-m", "pip", "install", "-q", str(built_wheel)])
    except OfflineError as exc:
        skip_or_fail(f"no package index to install te-doctor's dependencies: {exc}")
    env = activated(train_venv)
    env["PATH"] = f"{env['PATH']}:{tool}/bin"  # te-doctor on PATH after the venv, as pipx puts it
    probed = run(["te-doctor", "probe", "--format", "json"], env)
    assert probed.returncode == 0, probed.stderr
    python, why, packages = describe(probed.stdout)
    assert (python, packages["torch"]) == (f"{train_venv}/bin/python", "2.6.0+cu126")
    assert f"te-doctor itself runs in {tool}" in why

    checked = run(["te-doctor", "check", "--fail-on", "never"], env)
    assert checked.returncode == 0, checked.stderr
    header = checked.stdout.splitlines()[:2]
    assert "torch 2.6.0+cu126; Transformer Engine 2.4.0" in header[0]
    assert header[1].startswith(
        f"Diagnosed: {train_venv}/bin/python (Python {sys.version.split()[0]}): "
        "the active virtual environment (VIRTUAL_ENV)"
    )
    assert "Smoke test: failed in stage " in checked.stdout  # the fake torch does not import
    assert f"ran under {train_venv}/bin/python" in checked.stdout
