"""The report's first line about FP8: where it works, or the one or two causes that matter.

Pure: a function of the ranked paths, the paths' requirements and the facts. With a
Transformer Engine FP8 path viable there is nothing to explain. Otherwise the causes, in
order: fired errors that rule out the TE FP8 paths this GPU could run (all TE FP8 paths when
it can run none), fired errors that rule out any other FP8 path when no FP8 path is viable,
then the smoke GEMMs of those TE FP8 paths that failed (seen, so before what is predicted),
then what the best TE FP8 path this GPU could run still lacks ("Transformer Engine is not
installed"). A lack already said by an earlier cause is not repeated; two are shown, the rest
counted ("and N more below").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.paths import ExecutionPath
from te_doctor.engine.recommend import SMOKE_REASON, PathVerdict, hardware_fits

SHOWN_CAUSES = 2


@dataclass(frozen=True, slots=True)
class Headline:
    """FP8 here in a sentence or two."""

    #: The viable FP8 paths, best first.
    fp8_paths: tuple[str, ...]
    #: A Transformer Engine FP8 path is among them.
    te_fp8: bool
    #: At most two causes, in words, that rule Transformer Engine FP8 (or all FP8) out.
    causes: tuple[str, ...]
    #: How many further causes the report lists below.
    more: int


def build_headline(
    ranking: Sequence[PathVerdict], paths: Sequence[ExecutionPath], facts: FlatFacts
) -> Headline:
    """The headline for this ranking."""
    fp8 = [v for v in ranking if "fp8" in v.families]
    viable = tuple(v.id for v in fp8 if v.viable)
    te_paths = [v for v in fp8 if "te-fp8" in v.families]
    if any(v.viable for v in te_paths):
        return Headline(viable, True, (), 0)
    runnable = {p.id for p in paths if hardware_fits(p, facts)}
    target = [v for v in te_paths if v.id in runnable] or ([] if viable else te_paths)
    causes: list[str] = []
    for verdict in target + ([] if viable else fp8):
        causes += [r for r in _rule_reasons(verdict) if r not in causes]
    for verdict in target:
        causes += [r for r in _smoke_failures(verdict) if r not in causes]
    if target:
        for reason in target[0].reasons[len(target[0].rules) :]:
            lack = _lack(reason)
            if not any(lack in cause for cause in causes):
                causes.append(lack)
    shown = tuple(causes[:SHOWN_CAUSES])
    return Headline(viable, False, shown, len(causes) - len(shown))


def _rule_reasons(verdict: PathVerdict) -> list[str]:
    return list(verdict.reasons[: len(verdict.rules)])


def _smoke_failures(verdict: PathVerdict) -> list[str]:
    """The path's failed smoke GEMM, in the words every path it failed for shares."""
    return [
        _lack(reason)
        for reason in verdict.reasons[len(verdict.rules) :]
        if reason.startswith(SMOKE_REASON)
    ]


def _lack(reason: str) -> str:
    """What is missing, from ``needs ...; <what is here>``; a failed smoke GEMM without the
    path's name (so it is said once); other reasons whole."""
    if reason.startswith(SMOKE_REASON):
        return "the FP8 smoke GEMM " + reason.removeprefix(SMOKE_REASON).split(" ", 1)[1]
    needs, _, found = reason.rpartition("; ")
    if not needs.startswith("needs ") or found.startswith("te-doctor could not tell"):
        return reason
    return found
