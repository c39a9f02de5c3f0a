"""The runtime API: pick the best execution path once, then enable it in a training script.

``select_path()`` probes this machine in process (no torch import), runs the smoke test in a
child process, applies the rules and the recommender (``te_doctor.check.pipeline``), and returns a
``SelectedPath`` (``te_doctor.runtime.enable``) whose methods turn the path on. The decision is
cached per machine (``te_doctor.runtime.decision_cache``), so a later run only probes (about 0.1 s)
and skips the smoke test.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from te_doctor.check.report import GateOptions, Report
from te_doctor.engine.paths import ExecutionPath, candidates, load_paths, path_names
from te_doctor.engine.recommend import PathVerdict
from te_doctor.errors import TeDoctorError
from te_doctor.runtime.decision_cache import (
    cache_key,
    default_cache_dir,
    key_facts,
    locked,
    read_cache,
    write_cache,
)
from te_doctor.runtime.enable import SelectedPath, cannot_enable, importable
from te_doctor.snapshot.model import SmokeFacts

#: Smoke outcomes that are a property of the machine (the child finished); a crash, a timeout
#: or a signal may be transient, so those decisions are not cached.
SETTLED_OUTCOMES = ("ok", "failed")
#: How long a process waits for another's decision beyond that one's smoke test.
LOCK_MARGIN_S = 30.0


class UnknownPathError(TeDoctorError):
    """``require`` names neither an execution path nor a family."""


class NoViablePathError(TeDoctorError):
    """No execution path (of the required family) is viable and enable-able here.

    ``skipped`` holds ``(path id, why)`` for every path of the family, best first.
    """

    def __init__(self, message: str, require: str | None, skipped: Sequence[tuple[str, str]]):
        super().__init__(message)
        self.require = require
        self.skipped = tuple(skipped)


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """Every path's verdict on this machine, as ``select_path`` decides once and caches it."""

    verdicts: tuple[PathVerdict, ...]
    paths: tuple[ExecutionPath, ...]
    from_cache: bool


def choose(
    verdicts: Sequence[PathVerdict],
    paths: Sequence[ExecutionPath],
    *,
    require: str | None = None,
    is_importable: Callable[[str], bool] = importable,
    from_cache: bool = False,
) -> SelectedPath:
    """The first viable, enable-able path (of ``require``'s family); raises ``TeDoctorError``."""
    wanted = set(_required(require, paths))
    devices = {p.id: p.device for p in paths}
    skipped: list[tuple[str, str]] = []
    for verdict in verdicts:
        if verdict.id not in wanted:
            continue
        why = "; ".join(verdict.reasons) or "ruled out"
        if verdict.viable:
            why = cannot_enable(verdict.id, is_importable)
            if not why:
                return SelectedPath(
                    id=verdict.id,
                    title=verdict.title,
                    verification=verdict.verification,
                    evidence=verdict.evidence,
                    reasons_skipped=tuple(f"{i}: {w}" for i, w in skipped),
                    device=devices.get(verdict.id, "cuda"),
                    from_cache=from_cache,
                )
        skipped.append((verdict.id, why))
    raise NoViablePathError(
        f"{'require=' + repr(require) if require else 'te-doctor'}: no viable execution path "
        f"here: {_grouped(skipped)}",
        require,
        skipped,
    )


def _required(require: str | None, paths: Sequence[ExecutionPath]) -> tuple[str, ...]:
    names = path_names(paths)
    if require is None:
        return candidates(paths)
    if require not in names:
        raise UnknownPathError(
            f"require={require!r}: unknown execution path; choose from {', '.join(sorted(names))}"
        )
    return candidates(paths, (require,))


def _grouped(skipped: Sequence[tuple[str, str]]) -> str:
    """``"a, b: why; c: other"``: paths ruled out for the same reason share it."""
    by_reason: dict[str, list[str]] = {}
    for path_id, why in skipped:
        by_reason.setdefault(why, []).append(path_id)
    return "; ".join(f"{', '.join(ids)}: {why}" for why, ids in by_reason.items())


def explained_verdicts(report: Report, smoke: SmokeFacts) -> tuple[PathVerdict, ...]:
    """The report's ranking with "predicted" evidence explained (reasons are sentences)."""
    checks = {c.name: c for c in smoke.checks}
    explained = []
    for verdict in report.recommendation.ranking:
        evidence = verdict.evidence
        if verdict.viable and not evidence:
            check = checks.get(verdict.id)
            outcome = smoke.outcome.value
            if not smoke.outcome.known:
                why = "the smoke test was not run"
            elif outcome not in SETTLED_OUTCOMES:
                first = (smoke.error_text.value or "").splitlines()[:1]
                why = f"the smoke test ended {outcome}" + (f": {first[0]}" if first else "")
            elif check is not None:
                why = f"its smoke check was {check.status}: {check.detail}"
            else:
                why = "the smoke test has no check for it"
            evidence = f"predicted from the probed facts ({why})"
        explained.append(dataclasses.replace(verdict, evidence=evidence))
    return tuple(explained)


def select_path(
    *,
    require: str | None = None,
    smoke: bool = True,
    cache: bool = True,
    cache_dir: Path | str | None = None,
    timeout_s: float = 30.0,
) -> SelectedPath:
    """The best execution path for this machine, decided once and cached.

    ``require``: a path id or family (``fp8``, ``te-fp8``, ``bf16``, ...); raises
    ``NoViablePathError`` when none of it is viable here. ``smoke``: run the smoke test (in a
    child process, at most ``timeout_s``) so the choice is "verified", not just "predicted".
    ``cache=False`` neither reads nor writes the cache.
    """
    _required(require, load_paths())  # an unknown name fails before any probing
    decision = decide(smoke=smoke, cache=cache, cache_dir=cache_dir, timeout_s=timeout_s)
    return choose(
        decision.verdicts, decision.paths, require=require, from_cache=decision.from_cache
    )


def check_require(require: str) -> None:
    """Raise ``UnknownPathError`` unless ``require`` names a path or a family."""
    _required(require, load_paths())


def decide(
    *,
    smoke: bool = True,
    cache: bool = True,
    cache_dir: Path | str | None = None,
    timeout_s: float = 30.0,
) -> Decision:
    """Every path's verdict here (``select_path`` without the choice), decided once and cached."""
    from te_doctor.check.pipeline import run_check
    from te_doctor.check.snapshot_source import take_snapshot
    from te_doctor.smoke.runner import run_smoke

    paths = load_paths()
    probed = take_snapshot(None, None, smoke=False)
    facts = key_facts(probed, smoke=smoke)
    key = cache_key(facts)
    file = Path(cache_dir or default_cache_dir()) / f"{key[:32]}.json"
    lock_wait_s = timeout_s + LOCK_MARGIN_S if smoke else LOCK_MARGIN_S
    with locked(file, lock_wait_s) if cache else contextlib.nullcontext("held") as lock:
        if lock == "busy":
            warnings.warn(
                f"te-doctor: {file.with_suffix('.lock')} was still locked after {lock_wait_s:g} s "
                "(another process deciding); deciding without the lock",
                RuntimeWarning,
                stacklevel=2,
            )
        verdicts = read_cache(file, key) if cache else None
        if verdicts is not None and {v.id for v in verdicts} == {p.id for p in paths}:
            return Decision(verdicts, paths, from_cache=True)
        snapshot = probed
        if smoke:  # the probe already ran: only the smoke test is still missing
            python = probed.host.python_executable.value or ""
            snapshot = dataclasses.replace(probed, smoke=run_smoke(python, timeout_s=timeout_s))
        verdicts = explained_verdicts(run_check(snapshot, GateOptions()), snapshot.smoke)
        if cache and (not smoke or snapshot.smoke.outcome.value in SETTLED_OUTCOMES):
            write_cache(file, key, facts, verdicts)
    return Decision(verdicts, paths, from_cache=False)
