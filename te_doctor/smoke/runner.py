"""Start the smoke child with a timeout, in its own process group, and read its result file."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from te_doctor.files import read_json_object
from te_doctor.probes.commands import run_command
from te_doctor.smoke.result import from_child
from te_doctor.snapshot.model import SmokeFacts

DEFAULT_TIMEOUT_S = 30.0
#: How often the result file is read for progress.
POLL_S = 0.2
CHILD = Path(__file__).parent / "child" / "te_doctor_smoke_child.py"


@contextmanager
def _watching(out: Path, progress: Callable[[str], None] | None) -> Iterator[None]:
    """Tell ``progress`` the stage (and GEMM check) the child is in, polling its result file."""
    if progress is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL_S):
            data = read_json_object(out) or {}
            stage, check = data.get("stage"), data.get("running_check")
            if isinstance(stage, str) and stage:
                progress(f"smoke test: {stage}" + (f", {check}" if isinstance(check, str) else ""))

    progress("smoke test: starting the child")
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def run_smoke(
    python: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    child: Path = CHILD,
    env: Mapping[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> SmokeFacts:
    """Run ``child`` under ``python``; never raises, never waits past ``timeout_s`` (+1 s).

    The child's stdout (where CUDA, TE and NCCL print) is ignored: it reports through a file,
    rewritten after every stage and check; ``progress`` hears which one runs as it changes.
    """
    with tempfile.TemporaryDirectory(prefix="te-doctor-smoke-") as scratch:
        out = Path(scratch) / "result.json"
        started = time.monotonic()
        with _watching(out, progress):
            result = run_command(
                [python, str(child), "--out", str(out)], timeout=timeout_s, env=env
            )
        duration_ms = (time.monotonic() - started) * 1000
        stderr = result.stderr
        if result.returncode in (126, 127) and not out.exists():
            stderr = f"cannot start {python}: {result.stderr}"
        return from_child(
            read_json_object(out),
            returncode=None if result.timed_out else result.returncode,
            stderr="" if result.timed_out else stderr,
            python=python,
            duration_ms=duration_ms,
            timeout_s=timeout_s,
        )
