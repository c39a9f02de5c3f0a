"""Files on a shared filesystem: the umask's mode, a bounded cache lock, a movable cache."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

import te_doctor.runtime.selection as selection
from te_doctor.bench.store import default_store_dir, save
from te_doctor.files import CACHE_DIR_VARIABLE, current_umask, write_atomically
from te_doctor.runtime.decision_cache import default_cache_dir, locked, write_cache


@pytest.fixture
def umask() -> Iterator[None]:
    """Restore the test process's umask afterwards."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield
    os.umask(saved)


def decide(cache_dir: Path | None) -> None:
    """``select_path`` without the smoke test; without torch nothing is viable, which raises
    once the decision is cached: what these tests look at is the cache, not the choice."""
    with contextlib.suppress(selection.NoViablePathError):
        selection.select_path(smoke=False, cache_dir=cache_dir)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(("mask", "expected"), [(0o002, 0o664), (0o022, 0o644), (0o077, 0o600)])
def test_files_get_the_umask_mode_not_0600(
    tmp_path: Path, umask: None, mask: int, expected: int
) -> None:
    os.umask(mask)
    assert current_umask() == mask
    report = tmp_path / "reports" / "node-1.json"
    write_atomically(report, "{}")
    bench = save("{}", "key", tmp_path / "bench")
    cache = tmp_path / "paths" / "decision.json"
    write_cache(cache, "key", {}, ())
    assert [mode(report), mode(bench), mode(cache)] == [expected] * 3
    assert [p.name for p in report.parent.iterdir()] == ["node-1.json"]  # no temporary left


def test_the_cache_directory_follows_te_doctor_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(CACHE_DIR_VARIABLE, raising=False)
    assert default_cache_dir() == tmp_path / "xdg" / "te-doctor" / "paths"
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "shared"))
    assert default_cache_dir() == tmp_path / "shared" / "paths"
    assert default_store_dir() == tmp_path / "shared" / "bench"
    decide(cache_dir=None)
    assert len(list((tmp_path / "shared" / "paths").glob("*.json"))) == 1
    assert not (tmp_path / "xdg").exists()


def _hold(lock: Path) -> int:
    """Take ``lock`` as another process would (flock locks belong to the open file)."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_held_lock_is_waited_for_then_skipped(tmp_path: Path) -> None:
    file = tmp_path / "decision.json"
    with locked(file, 0.0) as state:
        assert state == "held"
    fd = _hold(file.with_suffix(".lock"))
    try:
        with locked(file, 0.3) as state:
            assert state == "busy"
    finally:
        os.close(fd)
    with locked(file, 0.3) as state:
        assert state == "held"


def test_select_path_says_it_decided_without_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selection, "LOCK_MARGIN_S", 0.2)
    decide(cache_dir=tmp_path)  # creates the lock file
    (lock,) = tmp_path.glob("*.lock")
    fd = _hold(lock)
    try:
        with pytest.warns(RuntimeWarning, match=r"still locked after 0\.2 s .* without the lock"):
            decide(cache_dir=tmp_path)
    finally:
        os.close(fd)
