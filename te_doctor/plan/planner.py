"""``te-doctor plan``: how to install Transformer Engine here, decided before anything runs.

Pure: a function of the snapshot, the planning rules (``rules/plan/*.toml``) and the release
data (``rules/plan/releases.toml``). For each candidate TE version, newest first, the plan
facts (``plan.te_version``, ``plan.core_cuda_major``, ...) are overlaid on the machine's facts
and the planning rules evaluated: a fired error that reads a plan fact means that version does
not fit; any other fired error is a blocker the user must fix first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from te_doctor.check.commands import rerun_command, with_interpreter
from te_doctor.engine.evaluate import Finding, evaluate
from te_doctor.engine.flatten import FlatFacts, flatten
from te_doctor.engine.rule_model import Rule, Severity
from te_doctor.errors import TeDoctorError
from te_doctor.plan.data import Releases, load_plan_rules, load_releases
from te_doctor.plan.steps import (
    Step,
    container,
    environment,
    max_jobs,
    steps,
    toolkit_for,
    tools_to_install,
    torch_build_for,
)
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.model import Snapshot

_PLAN_FACTS = ("plan.te_version", "plan.core_cuda_major")


@dataclass(frozen=True, slots=True)
class Plan:
    """The install plan for one machine."""

    framework: str
    te_version: str
    core_package: str
    core_cuda_major: int
    fits: bool
    version_reasons: tuple[str, ...]
    findings: tuple[Finding, ...]
    env: Mapping[str, str]
    steps: tuple[Step, ...]
    alternative: str

    @property
    def blockers(self) -> tuple[Finding, ...]:
        """Fired errors: what must be fixed before the install can work."""
        return tuple(f for f in self.findings if f.fired and f.severity is Severity.ERROR)

    @property
    def exit_code(self) -> int:
        """0 when the plan is sound, 1 while a blocker remains."""
        return 0 if self.fits and not self.blockers else 1


def make_plan(
    snapshot: Snapshot,
    *,
    framework: str = "pytorch",
    te_spec: str | None = None,
    rules: Sequence[Rule] | None = None,
    releases: Releases | None = None,
    python: str | None = None,
) -> Plan:
    """The plan for ``snapshot``; raises ``TeDoctorError`` for a bad ``te_spec``.

    ``python``: the interpreter ``--python`` named, carried into the closing check.
    """
    rules = load_plan_rules() if rules is None else rules
    releases = releases or load_releases()
    facts = flatten(snapshot)
    spec = _spec(te_spec)
    candidates = [v for v in releases.te_versions if spec.contains(Version(v), prereleases=True)]
    if not candidates:
        raise TeDoctorError(f"--te-version {te_spec}: no published TE release matches it")
    reasons: list[str] = []
    chosen: tuple[str, int, tuple[Finding, ...]] | None = None
    for major in _core_majors(facts):
        for version in candidates:
            if Version(version) < Version(releases.first_core.get(major, "999")):
                reasons.append(
                    f"{version}: no transformer-engine-cu{major} core before "
                    f"{releases.first_core.get(major, 'any release')}"
                )
                continue
            findings = evaluate(_overlay(facts, framework, version, major, snapshot), rules)
            misfits = [
                f
                for f in findings
                if f.fired and f.severity is Severity.ERROR and _reads_plan(f, rules)
            ]
            if not misfits:
                chosen = (version, major, findings)
                break
            reasons.append(
                f"{version} (cu{major}): " + "; ".join(f"{f.rule_id} {f.message}" for f in misfits)
            )
        if chosen:
            break
    fits = chosen is not None
    if chosen is None:  # nothing fits: show the newest candidate and everything against it
        major = _core_majors(facts)[0]
        findings = evaluate(_overlay(facts, framework, candidates[0], major, snapshot), rules)
        chosen = (candidates[0], major, findings)
    version, major, findings = chosen
    interpreter = snapshot.host.python_executable.get() or ""
    findings = tuple(replace(f, fix=with_interpreter(f.fix, interpreter)) for f in findings)
    env = environment(facts, framework, snapshot, major)
    return Plan(
        framework=framework,
        te_version=version,
        core_package=f"transformer-engine-cu{major}",
        core_cuda_major=major,
        fits=fits,
        version_reasons=tuple(reasons),
        findings=findings,
        env=env,
        steps=steps(facts, framework, (version, major), env, snapshot, rerun_command(python)),
        alternative=container(facts, releases, framework),
    )


def _spec(te_spec: str | None) -> SpecifierSet:
    if not te_spec:
        return SpecifierSet()
    text = te_spec if te_spec[0] in "<>=!~" else f"=={te_spec}"
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise TeDoctorError(
            f'--te-version {te_spec}: not a version or specifier (e.g. 2.20.2, ">=2.9,<2.12")'
        ) from None


def _core_majors(facts: FlatFacts) -> list[int]:
    """The TE core CUDA majors to try, best first, so that toolkit, torch and core agree.

    Torch's major when it is a CUDA build (the core must match it). Otherwise the toolkit's
    major, when the driver (if there is one) runs it: the extension is compiled with that
    toolkit, so torch and core follow it (CUDA 13 toolkit: a cu130 torch and a cu13 core).
    Otherwise the newest the driver runs; with neither, CUDA 12 first.
    """
    torch_major = facts.get("torch.cuda_major").value
    if isinstance(torch_major, int):
        return [torch_major]
    driver_major = facts.get("driver.cuda_major").get()
    toolkit_major = facts.get("cuda.toolkit_major").get()
    if toolkit_major in (12, 13) and (driver_major is None or driver_major >= toolkit_major):
        first = int(toolkit_major)
    else:
        first = 13 if isinstance(driver_major, int) and driver_major >= 13 else 12
    return [first, 25 - first]


def _overlay(
    facts: FlatFacts, framework: str, version: str, major: int, snapshot: Snapshot
) -> FlatFacts:
    """The facts as they will be once the plan's own steps ran (build tools installed, and
    CUDA_HOME at a toolkit of the plan's CUDA major when the default one is of the other)."""
    plan: dict[str, Fact[Any]] = {
        "plan.framework": Fact.of(framework, "plan"),
        "plan.te_version": Fact.of(version, "plan"),
        "plan.core_cuda_major": Fact.of(major, "plan"),
        "plan.torch_cuda_build": Fact.of(torch_build_for(major, facts), "plan"),
        "plan.max_jobs": Fact.of(max_jobs(snapshot), "plan"),
    }
    for fact, _, minimum in tools_to_install(facts, framework, version):
        plan[fact] = Fact.of(minimum, "plan: installed by its own step")
    toolkit = toolkit_for(major, snapshot)
    if toolkit is not None:
        plan["cuda.toolkit_version"] = Fact.of(toolkit[1], "plan: CUDA_HOME")
        plan["cuda.toolkit_major"] = Fact.of(major, "plan: CUDA_HOME")
    return FlatFacts({**facts.values, **plan}, facts.gpus)


def _reads_plan(finding: Finding, rules: Sequence[Rule]) -> bool:
    rule = next(r for r in rules if r.id == finding.rule_id)
    return any(path in _PLAN_FACTS for path in rule.facts_used())
