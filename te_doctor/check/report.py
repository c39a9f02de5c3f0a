"""The check report and the CI gate: which findings, which paths, pass or fail, and why.

Pure: built from a snapshot's facts, the rules and the gate options. Renderers format it;
the CLI turns ``gate.passed`` into the exit code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from te_doctor.check.areas import Area, build_areas
from te_doctor.check.commands import rerun_command, with_interpreter
from te_doctor.check.headline import Headline, build_headline
from te_doctor.engine.evaluate import Finding, Outcome, evaluate
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.frameworks import FrameworkAdvice
from te_doctor.engine.paths import ExecutionPath, path_names
from te_doctor.engine.recommend import PathVerdict, Recommendation, recommend
from te_doctor.engine.remedies import Remedy, Start, choose_remedy
from te_doctor.engine.rule_model import Rule, Severity
from te_doctor.errors import TeDoctorError
from te_doctor.snapshot.model import ProbeStatus, SmokeFacts, Snapshot

#: v3 (from v2): findings may be "not-applicable" (false only because something they read is
#: not here, where v2 said "passed"); path reasons are sentences in words, the blocking rule
#: ids are in ``rules``; new ``areas``, ``headline``, ``start`` and ``rerun``. Readers of v2
#: keep working on v3 by ignoring the new keys and treating "not-applicable" as not fired.
#: v3 also carries ``frameworks``, the settings ``check --for`` asked for (an empty list
#: otherwise).
REPORT_SCHEMA = "te-doctor/report/v3"
#: What a report's texts say where a fact has no value (an undecided rule's message).
NOT_KNOWN = "(not known)"
FAIL_ON = ("error", "warning", "never")


@dataclass(frozen=True, slots=True)
class GateOptions:
    """What makes ``check`` fail (exit 1)."""

    fail_on: str = "error"
    require: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    expect_gpus: int | None = None


@dataclass(frozen=True, slots=True)
class Gate:
    """The gate verdict and every reason it failed."""

    passed: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Machine:
    """The few facts a report's header shows."""

    gpus: str
    driver: str
    torch: str
    transformer_engine: str
    recorded_at: str
    #: The interpreter diagnosed, its version, and why it was the one (the active venv, ...).
    python: str


@dataclass(frozen=True, slots=True)
class BenchCitation:
    """The last bench result for this machine: its verdict and the chosen path's speed-up."""

    file: str
    created_at: str
    workload: str
    verdict: str
    path: str
    component: str
    baseline: str
    speedup: float | None


@dataclass(frozen=True, slots=True)
class Report:
    """Everything ``te-doctor check`` concluded about one machine."""

    schema: str
    te_doctor_version: str
    machine: Machine
    findings: tuple[Finding, ...]
    recommendation: Recommendation
    smoke: SmokeFacts
    gate: Gate
    options: GateOptions
    probe_errors: tuple[ProbeStatus, ...]
    #: One line per component, each with what was found and its findings.
    areas: tuple[Area, ...]
    #: FP8 here in a sentence: where it works, or the causes that matter.
    headline: Headline
    #: Where to start: the fix for the worst finding's root cause (None: nothing to fix).
    start: Start | None
    #: The command that checks this machine again (``--python`` carried through).
    rerun: str
    #: The last ``te-doctor bench`` result for this machine, when one was saved.
    measured: BenchCitation | None = None
    #: ``check --for``: each framework's settings for the recommended path (optional in the
    #: schema: reports without it stay valid).
    frameworks: tuple[FrameworkAdvice, ...] = field(default=(), metadata={"optional": True})

    def fired(self) -> tuple[Finding, ...]:
        """Findings whose rule fired, worst first."""
        return tuple(f for f in self.findings if f.outcome is Outcome.FIRED)


def build_report(
    snapshot: Snapshot,
    facts: FlatFacts,
    rules: Sequence[Rule],
    paths: Sequence[ExecutionPath],
    options: GateOptions,
    version: str,
    *,
    remedies: Sequence[Remedy] = (),
    python: str | None = None,
) -> Report:
    """Evaluate, judge the paths and the gate; raises ``TeDoctorError`` for unknown names.

    ``python`` is the interpreter ``--python`` named, if any: the rerun command carries it.
    Every ``pip`` in a fix runs under the diagnosed interpreter.
    """
    _check_names(rules, paths, options)
    ignored = set(options.ignore)
    active = [r for r in rules if r.id not in ignored and r.name not in ignored]
    interpreter = snapshot.host.python_executable.get() or ""
    findings = tuple(
        replace(f, fix=with_interpreter(f.fix, interpreter)) if f.fix else f
        for f in evaluate(facts, active, unknown_text=NOT_KNOWN)
    )
    recommendation = recommend(facts, findings, snapshot.smoke, paths, options.require)
    start = choose_remedy(facts, findings, remedies)
    if start is not None:
        start = replace(
            start,
            steps=tuple(with_interpreter(step, interpreter) for step in start.steps),
        )
    return Report(
        schema=REPORT_SCHEMA,
        te_doctor_version=version,
        machine=_machine(facts, snapshot),
        findings=findings,
        recommendation=recommendation,
        smoke=snapshot.smoke,
        gate=_gate(facts, findings, recommendation.ranking, paths, options),
        options=options,
        probe_errors=tuple(p for p in snapshot.probes if p.state == "error"),
        areas=build_areas(facts, snapshot, findings, active),
        headline=build_headline(recommendation.ranking, paths, facts),
        start=start,
        rerun=rerun_command(python),
    )


def _check_names(
    rules: Sequence[Rule], paths: Sequence[ExecutionPath], options: GateOptions
) -> None:
    known_rules = {r.id for r in rules} | {r.name for r in rules}
    for name in options.ignore:
        if name not in known_rules:
            raise TeDoctorError(
                f"--ignore {name}: no rule has that id or name (see `te-doctor rules`)"
            )
    names = path_names(paths)
    for name in options.require:
        if name not in names:
            raise TeDoctorError(
                f"--require {name}: unknown execution path; choose from {', '.join(sorted(names))}"
            )
    if options.fail_on not in FAIL_ON:
        raise TeDoctorError(f"--fail-on {options.fail_on}: choose from {', '.join(FAIL_ON)}")


def _gate(
    facts: FlatFacts,
    findings: Sequence[Finding],
    verdicts: Sequence[PathVerdict],
    paths: Sequence[ExecutionPath],
    options: GateOptions,
) -> Gate:
    reasons: list[str] = []
    if options.fail_on != "never":
        threshold = Severity(options.fail_on).rank
        bad = [f for f in findings if f.fired and f.severity.rank >= threshold]
        if bad:
            reasons.append(
                f"{len(bad)} finding(s) at or above --fail-on {options.fail_on}: "
                + ", ".join(f.rule_id for f in bad)
            )
        reasons.extend(_nothing_runs(facts, verdicts, paths))
    viable = {v.id for v in verdicts if v.viable}
    names = path_names(paths)
    reasons.extend(
        f"--require {name}: no viable execution path ({', '.join(names[name])})"
        for name in options.require
        if not viable & set(names[name])
    )
    if options.expect_gpus is not None:
        count = facts.get("gpus.count")
        seen = count.value if isinstance(count.value, int) else 0
        if seen < options.expect_gpus:
            shown = seen if count.known else f"unknown ({count.reason})"
            reasons.append(f"--expect-gpus {options.expect_gpus}: {shown} visible")
    return Gate(passed=not reasons, reasons=tuple(reasons))


def _nothing_runs(
    facts: FlatFacts, verdicts: Sequence[PathVerdict], paths: Sequence[ExecutionPath]
) -> list[str]:
    """A machine where no path works, or only the CPU next to idle GPUs, fails the gate."""
    viable = [v.id for v in verdicts if v.viable]
    if not viable:
        return ["no execution path is viable here"]
    on_cpu = {p.id for p in paths if p.device == "cpu"}
    gpus = facts.get("gpus.count").get()
    if isinstance(gpus, int) and gpus > 0 and set(viable) <= on_cpu:
        return [f"only the CPU path is viable on a machine with {gpus} GPU(s)"]
    return []


def _machine(facts: FlatFacts, snapshot: Snapshot) -> Machine:
    def show(path: str, missing: str) -> str:
        fact = facts.get(path)
        return str(fact.value) if fact.known else missing

    names = [str(g["gpu.name"].value) for g in facts.gpus if g["gpu.name"].known]
    gpus = ", ".join(f"{names.count(n)}x {n}" for n in dict.fromkeys(names)) or "no visible GPU"
    return Machine(
        gpus=gpus,
        driver=show("driver.version", "no driver"),
        torch=show("torch.version", "not installed"),
        transformer_engine=show("te.version", "not installed"),
        recorded_at=snapshot.meta.created_at,
        python=_interpreter(snapshot),
    )


def _interpreter(snapshot: Snapshot) -> str:
    """``/venv/bin/python (Python 3.12.3): the active virtual environment (VIRTUAL_ENV); ...``."""
    host = snapshot.host
    version = host.python_version.get()
    shown = (host.python_executable.get() or "an unknown interpreter") + (
        f" (Python {version})" if version else ""
    )
    why = host.python_chosen_by.get()
    return f"{shown}: {why}" if why else shown
