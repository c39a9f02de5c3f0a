"""Start the smoke child with a timeout, in its own process group, and read its result file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from te_doctor.smoke.result import from_child
from te_doctor.snapshot import SmokeFacts

DEFAULT_TIMEOUT_S = 30.0
CHILD = Path(__file__).with_name("child.py")


def run_smoke(
    python: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    child: Path = CHILD,
    env: Mapping[str, str] | None = None,
) -> SmokeFacts:
    """Run ``child`` under ``python``; never raises, never waits past ``timeout_s`` (+1 s)."""
    with tempfile.TemporaryDirectory(prefix="te-doctor-smoke-") as scratch:
        out = Path(scratch) / "result.json"
        started = time.monotonic()
        returncode, stderr = _run([python, str(child), "--out", str(out)], timeout_s, env)
        duration_ms = (time.monotonic() - started) * 1000
        return from_child(
            _read(out),
            returncode=returncode,
            stderr=stderr,
            python=python,
            duration_ms=duration_ms,
            timeout_s=timeout_s,
        )


def _run(
    argv: list[str], timeout_s: float, env: Mapping[str, str] | None
) -> tuple[int | None, str]:
    """(returncode, stderr); returncode None after a timeout kill. Stdout is discarded."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env=dict(env) if env is not None else None,
        )
    except OSError as exc:
        return 127, f"cannot start {argv[0]}: {exc}"
    try:
        _, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        try:
            _, err = proc.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:
            err = b""
        return None, err.decode("utf-8", errors="replace")
    return proc.returncode, err.decode("utf-8", errors="replace")


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
