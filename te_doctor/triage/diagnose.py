"""Diagnose a machine from pasted text: the same rules as a live check, ranked for a maintainer.

Facts come only from what the text states; everything else is unknown (never guessed), so
rules that need it are "undecided" and turn into "ask the reporter for ..." lines, never for a
format the paste already holds, and a message names an unstated fact "not in the paste".
Error signatures are matched on the captured error lines and then on the whole text the
environment parsers did not read (a warning in a log, an error quoted in a sentence), and that
text can also rule out a signature the error lines fired (its ``when.none``); causes rank in
that order, then the rules the stated environment fires (a GPU without FP8 only when
the paste is about FP8: ``triage/relevance.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from te_doctor.engine.conditions import Truth
from te_doctor.engine.derived import add_majors
from te_doctor.engine.error_capture import error_facts
from te_doctor.engine.error_causes import signatures
from te_doctor.engine.evaluate import (
    Finding,
    MissingFact,
    Outcome,
    evaluate,
    evaluate_rule,
    fired_on,
    with_error_text,
)
from te_doctor.engine.fact_paths import FACT_TYPES
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_model import Rule
from te_doctor.snapshot.facts import Fact
from te_doctor.triage.relevance import about_low_precision, bearing_on_report

SOURCE = "triage"
#: What a message says in place of a fact the paste does not state.
NOT_PASTED = "not in the paste"
#: Smoke facts other than the error text: a pasted report never ran te-doctor's smoke test.
_NO_SMOKE = tuple(
    path for path in FACT_TYPES if path.startswith("smoke.") and not path.startswith("smoke.error")
)
_SMI = "the output of `nvidia-smi`"
_COLLECT_ENV = "the output of `python -m torch.utils.collect_env`"
_PROBE = "the output of `te-doctor probe --format json --redact`"
_PLAN = "the output of `te-doctor plan --format markdown`"
#: A paste rarely shows the loader path: no forward-compatibility libcuda is assumed, so the
#: driver-too-old errors still fire on the driver and CUDA versions it does state.
_NO_FORWARD_COMPAT = ("driver.forward_compat_cuda_version", "driver.forward_compat_cuda_major")
#: Fact prefix -> what to ask the reporter for, to settle rules that need those facts.
ASK_FOR: tuple[tuple[str, str], ...] = (
    ("smoke.error", "the full error message and traceback"),
    ("driver.", _SMI),
    ("gpus.", _SMI),
    ("gpu.", _SMI),
    ("torch.", _COLLECT_ENV),
    ("host.", _COLLECT_ENV),
    ("cuda.toolkit", "the output of `nvcc --version`"),
    ("packages.", "the output of `pip list`"),
    ("te.", _PROBE),
    ("cuda.", _PROBE),
    ("cudnn.", _PROBE),
    ("build.", _PLAN),
    ("env.", "the relevant environment variables (`env | grep -E 'CUDA|NVTE|NCCL'`)"),
    ("smoke.", "the output of `te-doctor check --format markdown`"),
    ("plan.", _PLAN),
)
#: Request -> the report formats (parsers' names) that already are that output.
_ALREADY_PASTED: Mapping[str, frozenset[str]] = {
    _SMI: frozenset({"nvidia-smi"}),
    _COLLECT_ENV: frozenset({"collect_env"}),
    "the output of `nvcc --version`": frozenset({"nvcc"}),
    "the output of `pip list`": frozenset({"pip-list", "pip-freeze", "conda-list"}),
    _PROBE: frozenset({"te-doctor-json", "te-doctor-text"}),
}


@dataclass(frozen=True, slots=True)
class Request:
    """Information to ask the reporter for, and how many undecided rules it would settle."""

    what: str
    settles: int


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Likely causes (ranked), what could not be decided, and what to ask for."""

    formats: tuple[str, ...]
    facts_found: Mapping[str, str]
    causes: tuple[Finding, ...]
    undecided: tuple[Finding, ...]
    ask_for: tuple[Request, ...]


def pasted_facts(
    facts: Mapping[str, object],
    sources: Mapping[str, str],
    error_text: str,
    absent: Mapping[str, str] | None = None,
) -> FlatFacts:
    """FlatFacts holding only what the text stated: values, and (``absent``: path -> where)
    what it says is not there; everything else is unknown."""
    values: dict[str, Fact[Any]] = {
        path: Fact.of(value, f"{SOURCE}: {sources.get(path, 'pasted text')}")
        for path, value in facts.items()
    }
    for path, where in (absent or {}).items():
        values[path] = Fact.absent(f"not there, says {where}", SOURCE)
    values.update(
        {path: Fact.absent("a pasted report has no smoke test", SOURCE) for path in _NO_SMOKE}
    )
    for path in _NO_FORWARD_COMPAT:
        values.setdefault(
            path, Fact.absent("not in the pasted text: read as no cuda-compat", SOURCE)
        )
    add_majors(values)  # derived, as flatten() derives them for a live machine
    if error_text:
        values.update(error_facts(error_text, f"{SOURCE}: pasted error"))
    gpu = {path: fact for path, fact in values.items() if path.startswith("gpu.")}
    count = values.get("gpus.count")
    gpus: tuple[Mapping[str, Fact[Any]], ...] = (
        (gpu,) if gpu and (count is None or count.value) else ()
    )
    return FlatFacts(values, gpus, environment_complete=False)


def diagnose(
    facts: FlatFacts, rules: Sequence[Rule], formats: Sequence[str] = (), prose: str = ""
) -> Diagnosis:
    """Evaluate every rule and rank the findings for a bug report.

    ``prose`` is the pasted text the environment parsers did not read; error signatures that do
    not match the captured error lines are tried on it too.
    """
    findings = _named_gpu_counts(
        _not_stated_is_not_evidence(evaluate(facts, rules, unknown_text=NOT_PASTED), facts, rules),
        facts,
        rules,
    )
    matching = signatures(rules)
    findings = _ruled_out_by_prose(facts, matching, prose, findings)
    in_prose = _fired_on_prose(facts, matching, prose, findings)
    findings = tuple(in_prose.get(f.rule_id, f) for f in findings)
    reads_error = {r.id for r in matching}
    error = facts.values.get("smoke.error_text")
    pasted = (prose, str(error.value) if error is not None and error.known else "")
    fired = bearing_on_report(
        (f for f in findings if f.outcome is Outcome.FIRED),
        reads_error,
        about_low_precision(pasted, formats),
    )

    required = {rule.id: len(rule.when.all) for rule in rules}

    def rank(finding: Finding) -> tuple[int, int, int, str]:
        """Error signatures first, then severity, then the narrower rule (more conditions
        that all had to hold: an error line *and* an environment fact beats the line alone)."""
        tier = 1 if finding.rule_id in in_prose else 0 if finding.rule_id in reads_error else 2
        return tier, -finding.severity.rank, -required.get(finding.rule_id, 0), finding.rule_id

    causes = sorted(fired, key=rank)
    undecided = tuple(f for f in findings if f.outcome is Outcome.UNDECIDED)
    return Diagnosis(
        formats=tuple(formats),
        facts_found={
            p: str(f.value)
            for p, f in sorted(facts.values.items())
            if f.known and f.source.startswith(SOURCE) and not p.startswith("smoke.")
        },
        causes=tuple(causes),
        undecided=undecided,
        ask_for=_requests(undecided, formats),
    )


def _ruled_out_by_prose(
    facts: FlatFacts, matching: Sequence[Rule], prose: str, findings: Sequence[Finding]
) -> tuple[Finding, ...]:
    """A signature that fired on the error lines stays silent when one of its exclusions
    (``when.none``) matches the rest of the text: a paste that names a Blackwell GPU rules out
    "a GPU older than Ampere", though the error line alone does not say which GPU it ran on."""
    excluding = {rule.id: rule.when.none for rule in matching if rule.when.none}
    if not prose.strip() or not excluding:
        return tuple(findings)
    with_prose = with_error_text(facts, prose, f"{SOURCE}: pasted text")

    def ruled_out(finding: Finding) -> bool:
        none = excluding.get(finding.rule_id, ())
        return finding.fired and any(leaf.evaluate(with_prose)[0] is Truth.TRUE for leaf in none)

    return tuple(replace(f, outcome=Outcome.PASSED) if ruled_out(f) else f for f in findings)


def _fired_on_prose(
    facts: FlatFacts, matching: Sequence[Rule], prose: str, findings: Sequence[Finding]
) -> dict[str, Finding]:
    """Signatures that did not fire on the error lines but do on the rest of the text."""
    if not prose.strip():
        return {}
    with_prose = with_error_text(facts, prose, f"{SOURCE}: pasted text")
    found = fired_on(with_prose, matching, findings, NOT_PASTED)
    kept = _not_stated_is_not_evidence(tuple(found.values()), with_prose, matching)
    return {f.rule_id: f for f in kept if f.outcome is Outcome.FIRED}


def _named_gpu_counts(
    findings: Sequence[Finding], facts: FlatFacts, rules: Sequence[Rule]
) -> tuple[Finding, ...]:
    """A paste that names a GPU but not how many states there is at least one: a rule left
    undecided only by ``gpus.count`` fires when it fires for one GPU and for several alike."""
    if not facts.gpus or not _unstated(facts, "gpus.count"):
        return tuple(findings)
    by_id = {rule.id: rule for rule in rules}
    result = []
    for finding in findings:
        rule = by_id.get(finding.rule_id)
        if (
            rule is not None
            and finding.outcome is Outcome.UNDECIDED
            and {m.path for m in finding.missing} == {"gpus.count"}
            and all(_fires_with_count(facts, rule, n) for n in (1, 2, 8))
        ):
            finding = replace(finding, outcome=Outcome.FIRED, missing=())
        result.append(finding)
    return tuple(result)


def _fires_with_count(facts: FlatFacts, rule: Rule, count: int) -> bool:
    values = {**facts.values, "gpus.count": Fact.of(count, f"{SOURCE}: a GPU is named")}
    probe = FlatFacts(values, facts.gpus, facts.environment_complete)
    return evaluate_rule(probe, rule).outcome is Outcome.FIRED


def _not_stated_is_not_evidence(
    findings: Sequence[Finding], facts: FlatFacts, rules: Sequence[Rule]
) -> tuple[Finding, ...]:
    """Undecide a fired rule that fired only because a fact was not pasted.

    ``X is unknown`` means a probe could not tell; a paste that never mentions X tells nothing
    either way. A rule that fires on such a leaf, but not once the unstated facts are taken as
    known-absent, is undecided: the reporter is asked for them instead.
    """
    by_id = {rule.id: rule for rule in rules}
    result = []
    for finding in findings:
        rule = by_id.get(finding.rule_id)
        if finding.outcome is Outcome.FIRED and rule is not None:
            unstated = tuple(
                dict.fromkeys(
                    leaf.path
                    for leaf in rule.when.leaves()
                    if leaf.op == "is unknown" and _unstated(facts, leaf.path)
                )
            )
            if unstated:
                stated = {
                    **facts.values,
                    **{path: Fact.absent("not in the pasted text", SOURCE) for path in unstated},
                }
                probe = FlatFacts(stated, facts.gpus, facts.environment_complete)
                if evaluate_rule(probe, rule).outcome is not Outcome.FIRED:
                    finding = replace(
                        finding,
                        outcome=Outcome.UNDECIDED,
                        missing=tuple(
                            MissingFact(path, "not in the pasted text") for path in unstated
                        ),
                    )
        result.append(finding)
    return tuple(result)


def _unstated(facts: FlatFacts, path: str) -> bool:
    """True when the pasted text said nothing about ``path`` (it is unknown only by omission)."""
    fact = facts.values.get(path)
    return fact is None or (not fact.known and not fact.source.startswith(SOURCE))


def _requests(undecided: Sequence[Finding], formats: Sequence[str]) -> tuple[Request, ...]:
    """What to ask for, most rules settled first; never a format the paste already holds."""
    pasted = set(formats)
    counts: Counter[str] = Counter()
    for finding in undecided:
        wanted = {_ask(missing.path) for missing in finding.missing}
        counts.update(w for w in wanted if w and not pasted & _ALREADY_PASTED.get(w, set()))
    return tuple(Request(what, n) for what, n in counts.most_common())


def _ask(path: str) -> str:
    return next((what for prefix, what in ASK_FOR if path.startswith(prefix)), "")
