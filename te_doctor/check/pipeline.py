"""``te-doctor check`` end to end: snapshot (probed or loaded), rules, paths, report."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from te_doctor import __version__
from te_doctor.check.report import GateOptions, Report, build_report
from te_doctor.engine.flatten import flatten
from te_doctor.engine.paths import ExecutionPath, load_paths
from te_doctor.engine.remedies import load_remedies
from te_doctor.engine.rule_model import Rule
from te_doctor.engine.rules import load_rules
from te_doctor.errors import TeDoctorError
from te_doctor.probes.target import Target
from te_doctor.snapshot.absent import not_run
from te_doctor.snapshot.model import SmokeFacts, Snapshot


def load_rule_set(
    rules_dirs: Sequence[Path] = (),
) -> tuple[tuple[Rule, ...], tuple[ExecutionPath, ...]]:
    """The built-in rules plus each ``--rules-dir``, and the execution paths they may block."""
    paths = load_paths()
    return load_rules(rules_dirs, known_paths=[p.id for p in paths]), paths


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


def run_check(
    snapshot: Snapshot,
    options: GateOptions,
    *,
    rules_dirs: Sequence[Path] = (),
    device: int | None = None,
    python: str | None = None,
) -> Report:
    """Evaluate every rule on ``snapshot`` and judge the gate; an absent ``device`` is an error.

    ``python``: the interpreter ``--python`` named, carried into the report's commands.
    """
    if device is not None and all(gpu.index != device for gpu in snapshot.gpus):
        there = ", ".join(str(gpu.index) for gpu in snapshot.gpus) or "none"
        raise TeDoctorError(f"--device {device}: no such GPU (GPU indices here: {there})")
    rules, paths = load_rule_set(rules_dirs)
    facts = flatten(snapshot, device)
    return build_report(
        snapshot, facts, rules, paths, options, __version__, remedies=load_remedies(), python=python
    )
