"""The snapshot a command works from: a saved one, or this machine probed (and smoke-tested).

Apart from the rule engine, so that ``probe`` and ``plan``'s first step load none of it. The
smoke child starts first and the probes run while it imports torch.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path

from te_doctor.probes.target import Target
from te_doctor.snapshot.absent import not_run
from te_doctor.snapshot.model import SmokeFacts, Snapshot


def take_snapshot(
    snapshot_file: Path | None,
    target: Target | None,
    *,
    smoke: bool = False,
    smoke_timeout_s: float = 30.0,
    progress: Callable[[str], None] | None = None,
) -> Snapshot:
    """Load a saved snapshot, or probe this machine for ``target`` (None: this interpreter).

    With ``smoke``, the smoke test runs in a child of the diagnosed interpreter; ``progress``
    hears what runs.
    """
    if snapshot_file is not None:
        from te_doctor.snapshot.file import load

        return load(snapshot_file)
    from te_doctor.probes import collect_snapshot
    from te_doctor.probes.real import real_context

    context = real_context(target)
    if progress is not None:
        progress("probing the machine")
    if not smoke:
        return collect_snapshot(context)
    smoke_result = _smoke_in_background(context.python.executable, smoke_timeout_s, progress)
    probed = collect_snapshot(context)  # while the smoke child imports torch
    return dataclasses.replace(probed, smoke=smoke_result())


def _smoke_in_background(
    python: str, timeout_s: float, progress: Callable[[str], None] | None
) -> Callable[[], SmokeFacts]:
    """Start the smoke test in a thread; the returned function waits for its result.

    The thread is a daemon, so an interrupted check does not wait for it (its child, killed
    at ``timeout_s`` in any case, is the runner's to end).
    """
    from te_doctor.smoke.runner import run_smoke

    box: list[SmokeFacts] = []
    worker = threading.Thread(
        target=lambda: box.append(run_smoke(python, timeout_s=timeout_s, progress=progress)),
        name="te-doctor-smoke",
        daemon=True,
    )
    worker.start()

    def result() -> SmokeFacts:
        worker.join()
        return box[0] if box else not_run("the smoke test ended without a result")

    return result
