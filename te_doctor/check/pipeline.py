"""``te-doctor check`` end to end: snapshot (probed or loaded), rules, paths, report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from te_doctor import __version__
from te_doctor.check.report import GateOptions, Report, build_report
from te_doctor.engine.flatten import flatten
from te_doctor.engine.paths import ExecutionPath, load_paths
from te_doctor.engine.rule_model import Rule
from te_doctor.engine.rules import load_rules
from te_doctor.errors import TeDoctorError
from te_doctor.probes.target import Target
from te_doctor.snapshot.model import Snapshot


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
) -> Snapshot:
    """Load a saved snapshot, or probe this machine for ``target`` (None: this interpreter).

    With ``smoke``, the smoke test runs in a child of the diagnosed interpreter.
    """
    if snapshot_file is not None:
        from te_doctor.snapshot.file import load

        return load(snapshot_file)
    from te_doctor.probes import collect_snapshot
    from te_doctor.probes.real import real_context
    from te_doctor.smoke.runner import run_smoke

    context = real_context(target)
    facts = run_smoke(context.python.executable, timeout_s=smoke_timeout_s) if smoke else None
    return collect_snapshot(context, smoke=facts)


def run_check(
    snapshot: Snapshot,
    options: GateOptions,
    *,
    rules_dirs: Sequence[Path] = (),
    device: int | None = None,
) -> Report:
    """Evaluate every rule on ``snapshot`` and judge the gate; an absent ``device`` is an error."""
    if device is not None and all(gpu.index != device for gpu in snapshot.gpus):
        there = ", ".join(str(gpu.index) for gpu in snapshot.gpus) or "none"
        raise TeDoctorError(f"--device {device}: no such GPU (GPU indices here: {there})")
    rules, paths = load_rule_set(rules_dirs)
    return build_report(snapshot, flatten(snapshot, device), rules, paths, options, __version__)
