"""The recommender: the best execution path that works here, and why better ones do not.

Pure: a function of the facts, the findings, the smoke results and the paths. A path is
ruled out when a fired error finding blocks it, when its requirements are false, or when its
smoke check ran and failed. The first remaining path wins; it is "verified" when its smoke
check passed on this machine, "predicted" otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from te_doctor.engine.conditions import Truth
from te_doctor.engine.evaluate import Finding
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.paths import ExecutionPath, candidates
from te_doctor.engine.requirement_words import requirement_sentences
from te_doctor.engine.rule_model import Severity
from te_doctor.snapshot.smoke_model import SmokeCheck, SmokeFacts


@dataclass(frozen=True, slots=True)
class PathVerdict:
    """Whether a path is viable here, how sure we are, and every reason it is not.

    For a viable opt-in path that was not chosen, ``reasons`` says why it is not the default.
    """

    id: str
    title: str
    families: tuple[str, ...]
    viable: bool
    verification: str
    evidence: str
    blocked_by_rules: bool
    #: Every reason in words: a blocking finding's message with its rule id, a failed smoke
    #: check, or an unmet requirement ("needs ...; <what is here>").
    reasons: tuple[str, ...]
    #: The ids of the fired error rules that rule the path out.
    rules: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The path to use, how to enable it, and the whole ranking behind the choice."""

    path: str
    title: str
    verification: str
    evidence: str
    snippet: str
    env: Mapping[str, str]
    ranking: tuple[PathVerdict, ...]
    #: With nothing viable: the first path this hardware could run once its software is fixed.
    closest: str = ""


def recommend(
    facts: FlatFacts,
    findings: Sequence[Finding],
    smoke: SmokeFacts,
    paths: Sequence[ExecutionPath],
    require: Sequence[str] = (),
) -> Recommendation:
    """Rank every path and pick the first viable one ``require`` allows (opt-in paths only
    when asked for); with nothing viable among those, the first viable default path."""
    blocking: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.fired and finding.severity is Severity.ERROR:
            for blocked in finding.blocks:
                blocking.setdefault(blocked, []).append(finding)
    checks = {(c.name, _device_kind(c.device)): c for c in smoke.checks}
    ranking = tuple(_judge(path, facts, blocking.get(path.id, []), checks) for path in paths)
    allowed = candidates(paths, require)
    if require and not any(v.viable and v.id in allowed for v in ranking):
        allowed = candidates(paths)
    best = next((v for v in ranking if v.viable and v.id in allowed), None)
    ranking = tuple(_passed_over(v, paths, best) for v in ranking)
    chosen = next((p for p in paths if best is not None and p.id == best.id), None)
    if best is None or chosen is None:
        closest = next(
            (
                v.id
                for v, path in zip(ranking, paths, strict=True)
                if not v.blocked_by_rules and v.reasons and hardware_fits(path, facts)
            ),
            "",
        )
        return Recommendation("", "", "none-viable", "", "", {}, ranking, closest)
    snippet = chosen.snippet_for(facts)
    return Recommendation(
        best.id, best.title, best.verification, best.evidence, snippet, chosen.env, ranking
    )


def _judge(
    path: ExecutionPath,
    facts: FlatFacts,
    blockers: list[Finding],
    checks: Mapping[tuple[str, str], SmokeCheck],
) -> PathVerdict:
    truth, _unknown = path.requires.evaluate(facts)
    wanted = Truth.UNKNOWN if truth is Truth.UNKNOWN else Truth.FALSE
    unmet = requirement_sentences(
        [leaf for leaf in path.requires.all if leaf.evaluate(facts)[0] is wanted], facts
    )
    check = checks.get((path.verified_by, path.device))
    failed = check is not None and check.status in ("failed", "numerics")
    smoke_reason = (
        (f"{SMOKE_REASON}{check.name} {_SMOKE_WORDS[check.status]}{_detail(check)}",)
        if failed and check
        else ()
    )
    # A rule that blocks the path explains it better than the bare requirement does.
    reasons = tuple(f"{f.message.rstrip('. ')} ({f.rule_id})" for f in blockers)
    reasons = reasons or smoke_reason or unmet
    viable = truth is Truth.TRUE and not blockers and not failed
    verified = viable and check is not None and check.status == "ok"
    return PathVerdict(
        id=path.id,
        title=path.title,
        families=path.families,
        viable=viable,
        verification="verified" if verified else "predicted" if viable else "ruled-out",
        evidence=_evidence(check) if verified and check else "",
        blocked_by_rules=bool(blockers),
        reasons=reasons if not viable else (),
        rules=tuple(f.rule_id for f in blockers),
    )


_SMOKE_WORDS = {"failed": "failed", "numerics": "gave wrong numbers"}
#: How a reason that a path's own smoke GEMM failed begins (then the check's name).
SMOKE_REASON = "its smoke GEMM "


def _detail(check: SmokeCheck) -> str:
    return f": {check.detail}" if check.detail else ""


def hardware_fits(path: ExecutionPath, facts: FlatFacts) -> bool:
    """No requirement on the GPU itself (``gpu.*``, ``gpus.*``) is false: software can fix it."""
    return all(
        leaf.evaluate(facts)[0] is not Truth.FALSE
        for leaf in path.requires.leaves()
        if leaf.path.startswith(("gpu.", "gpus."))
    )


def _passed_over(
    verdict: PathVerdict, paths: Sequence[ExecutionPath], best: PathVerdict | None
) -> PathVerdict:
    """A viable opt-in path that was not chosen says why in its reasons."""
    path = next(p for p in paths if p.id == verdict.id)
    if not (verdict.viable and path.opt_in) or (best is not None and best.id == verdict.id):
        return verdict
    return replace(verdict, reasons=(path.opt_in,))


def _device_kind(device: str) -> str:
    return "cuda" if device.startswith("cuda") else device


def _evidence(check: SmokeCheck) -> str:
    error = check.rel_error.value
    if error is None:
        return f"smoke GEMM {check.name} on {check.device} ran"
    return (
        f"smoke GEMM {check.name} on {check.device}: relative error {_ratio(error)} "
        f"(tolerance {_ratio(check.tolerance)})"
    )


def _ratio(value: float) -> str:
    """0.042 -> "4.2%"; tiny values in scientific notation rather than "0.00%"."""
    return f"{value:.1%}" if value >= 1e-3 else f"{value:.1e}"
