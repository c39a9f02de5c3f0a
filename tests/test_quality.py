"""ruff and mypy run as part of the test suite, so the README's one test command covers them;
the suite's own preconditions are checked here too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import need_torch

ROOT = Path(__file__).parents[1]


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e . --group dev")
    return found


@pytest.mark.parametrize(
    "argv",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["mypy"]],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_code_quality(argv: list[str]) -> None:
    result = subprocess.run(
        [tool(argv[0]), *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.torch
def test_torch_is_installed_where_the_suite_needs_it() -> None:
    """Where ``TE_DOCTOR_REQUIRE_TORCH=1`` (.ci/run's full run) a missing torch fails here, so
    the tests that also accept a machine without torch cannot quietly take that branch there."""
    assert need_torch().__version__.startswith("2.")
