"""Fixtures shared by several test modules."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

from tests.real_venv import OfflineError, ensure_venv

# te-doctor diagnoses the activated environment when it runs in another one. The suite means
# its own interpreter wherever it runs (a developer's conda base, an activated other venv);
# the tests of that choice set these variables themselves.
for _variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
    if os.path.realpath(os.environ.get(_variable) or sys.prefix) != os.path.realpath(sys.prefix):
        del os.environ[_variable]

#: Set in .ci/run: tests against real installs fail instead of skipping when pip is offline.
REQUIRE_REAL_VENV = "TE_DOCTOR_REQUIRE_REAL_VENV"
#: Set in .ci/run: tests on the workplace's shared/ real reports fail instead of skipping.
REQUIRE_SHARED = "TE_DOCTOR_REQUIRE_SHARED"
#: Set in .ci/run's full run: tests marked ``torch`` fail instead of skipping without torch.
REQUIRE_TORCH = "TE_DOCTOR_REQUIRE_TORCH"
NO_TORCH = (
    f"torch is not installed for Python {sys.version_info.major}.{sys.version_info.minor}: the "
    "dev group's torch==2.13.0 is the CPU build this project's machines hold for Python 3.11"
)


def need_torch() -> ModuleType:
    """torch, or a skip saying why it is missing (a failure where ``TE_DOCTOR_REQUIRE_TORCH=1``)."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        if os.environ.get(REQUIRE_TORCH) == "1":
            pytest.fail(f"{REQUIRE_TORCH}=1 but {NO_TORCH}")
        pytest.skip(NO_TORCH)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked ``torch`` run the real torch (CPU): skipped, with the reason, without it."""
    if item.get_closest_marker("torch") is not None:
        need_torch()


def skip_unless_shared(path: Path) -> None:
    """Skip when ``path`` (under the workplace's shared/) is absent; fail in CI instead."""
    if path.exists():
        return
    reason = f"{path} is absent: the real failure reports exist only in the workplace"
    if os.environ.get(REQUIRE_SHARED) == "1":
        pytest.fail(f"{REQUIRE_SHARED}=1 but {reason}")
    pytest.skip(reason)


def skip_or_fail(reason: str) -> NoReturn:
    """Skip with ``reason`` locally; fail where ``TE_DOCTOR_REQUIRE_REAL_VENV=1`` (CI)."""
    if os.environ.get(REQUIRE_REAL_VENV) == "1":
        pytest.fail(f"{REQUIRE_REAL_VENV}=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def venv_python() -> Path:
    """The broken venv's interpreter; the tests skip when it cannot be built offline."""
    try:
        return ensure_venv()
    except OfflineError as exc:
        skip_or_fail(f"no network to build the real TE venv (pip cannot reach an index): {exc}")


@pytest.fixture(scope="session")
def te_root(venv_python: Path) -> Path:
    """The real TE wheel's ``transformer_engine`` package directory in the broken venv."""
    purelib = subprocess.run(
        [str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    return Path(purelib) / "transformer_engine"


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """te-doctor's wheel, built once per session from this checkout (no network needed)."""
    outdir = tmp_path_factory.mktemp("wheel")
    root = Path(__file__).parents[1]
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(outdir)]
        + [str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    (wheel,) = outdir.glob("te_doctor-*.whl")
    return wheel
