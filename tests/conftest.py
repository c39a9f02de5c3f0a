"""Fixtures shared by several test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.real_venv import OfflineError, ensure_venv


@pytest.fixture(scope="session")
def venv_python() -> Path:
    """The broken venv's interpreter; the tests skip when it cannot be built offline."""
    try:
        return ensure_venv()
    except OfflineError as exc:
        pytest.skip(f"no network to build the real TE venv (pip cannot reach an index): {exc}")
