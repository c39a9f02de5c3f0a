"""Hand-made facts, rules and execution paths for table tests of the engine, recommender, gate."""

from __future__ import annotations

from typing import Any

from te_doctor.engine.condition_parser import parse_leaf
from te_doctor.engine.conditions import Condition
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.paths import ExecutionPath
from te_doctor.engine.rule_fields import parse_condition
from te_doctor.engine.rule_model import Rule, Severity
from te_doctor.snapshot.facts import Fact

#: The reasons of the absent (``None``) and unknown (``"?"``) facts that ``fact`` makes.
ABSENT_REASON = "not installed"
UNKNOWN_REASON = "the driver did not answer"


def fact(value: Any) -> Fact[Any]:
    """``None``: absent; ``"?"``: unknown; anything else: known."""
    if value is None:
        return Fact.absent(ABSENT_REASON, "test")
    if value == "?":
        return Fact.unknown(UNKNOWN_REASON, "test")
    return Fact.of(value, "test")


def flat(values: dict[str, Any], gpu_names: tuple[Any, ...] = ()) -> FlatFacts:
    """Facts by path (values as for ``fact``), and visible GPUs with these names (each with
    the selected GPU's compute capability, when ``values`` has one)."""
    capability = values.get("gpu.compute_capability")
    gpus = tuple(
        {"gpu.name": fact(name), "gpu.compute_capability": fact(capability)} for name in gpu_names
    )
    return FlatFacts({path: fact(value) for path, value in values.items()}, gpus)


def rule(
    rule_id: str,
    when: str,
    *,
    severity: Severity = Severity.WARNING,
    summary: str = "",
    fix: str = "",
    blocks: tuple[str, ...] = (),
) -> Rule:
    """A rule with one leaf, named ``rule-<id>``, in the ``config`` category."""
    return Rule(
        id=rule_id,
        name=f"rule-{rule_id.lower()}",
        severity=severity,
        category="config",
        summary=summary,
        why="",
        fix=fix,
        source="test",
        since="0.1",
        docs="",
        status="",
        blocks=blocks,
        when=Condition(all=(parse_leaf(when),)),
        fires=(),
        clear=(),
        file="test.toml",
    )


def path(
    path_id: str, requires: list[str], families: tuple[str, ...], opt_in: str = ""
) -> ExecutionPath:
    """A path verified by the smoke check of its own name; ``cpu`` runs on the CPU."""
    return ExecutionPath(
        id=path_id,
        title=f"{path_id} title",
        families=families,
        requires=parse_condition({"all": requires}, path_id),
        verified_by=path_id,
        device="cpu" if path_id == "cpu" else "cuda",
        snippet=f"use_{path_id.replace('-', '_')}()",
        env={"PATH_ID": path_id},
        opt_in=opt_in,
    )
