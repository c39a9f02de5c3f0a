"""``te-doctor check`` from a snapshot: the rules and paths, evaluated into the report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from te_doctor import __version__
from te_doctor.check.report import GateOptions, Report, build_report
from te_doctor.engine.flatten import flatten
from te_doctor.engine.paths import ExecutionPath, load_paths
from te_doctor.engine.remedies import load_remedies
from te_doctor.engine.rule_model import Rule
from te_doctor.engine.rules import load_rules
from te_doctor.errors import TeDoctorError
from te_doctor.snapshot.model import Snapshot


def load_rule_set(
    rules_dirs: Sequence[Path] = (),
) -> tuple[tuple[Rule, ...], tuple[ExecutionPath, ...]]:
    """The built-in rules plus each ``--rules-dir``, and the execution paths they may block."""
    paths = load_paths()
    return load_rules(rules_dirs, known_paths=[p.id for p in paths]), paths


def run_check(
    snapshot: Snapshot,
    options: GateOptions,
    *,
    rules_dirs: Sequence[Path] = (),
    device: int | None = None,
    python: str | None = None,
    rule_set: tuple[tuple[Rule, ...], tuple[ExecutionPath, ...]] | None = None,
) -> Report:
    """Evaluate every rule on ``snapshot`` and judge the gate; an absent ``device`` is an error.

    ``python``: the interpreter ``--python`` named, carried into the report's commands.
    ``rule_set``: ``load_rule_set(rules_dirs)`` when the caller already has it.
    """
    if device is not None and all(gpu.index != device for gpu in snapshot.gpus):
        there = ", ".join(str(gpu.index) for gpu in snapshot.gpus) or "none"
        raise TeDoctorError(f"--device {device}: no such GPU (GPU indices here: {there})")
    rules, paths = rule_set or load_rule_set(rules_dirs)
    facts = flatten(snapshot, device)
    return build_report(
        snapshot, facts, rules, paths, options, __version__, remedies=load_remedies(), python=python
    )
