"""Turn a Snapshot into the flat ``path -> Fact`` view that rules are evaluated against.

Pure: the same snapshot always gives the same facts. Derived facts (CUDA majors, whether a
binary carries code the GPU can run) are computed here, once, so rules stay one-line leaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from te_doctor.engine.derived import add_majors
from te_doctor.engine.fact_paths import FACT_TYPES
from te_doctor.engine.flatten_gpus import GPU_PATHS, gpu_aggregates, gpu_facts, select_gpu
from te_doctor.engine.flatten_libraries import driver_library_facts, library_facts
from te_doctor.engine.flatten_smoke import smoke_facts
from te_doctor.engine.flatten_stack import (
    driver_facts,
    host_facts,
    package_facts,
    probe_failed,
    torch_and_te_facts,
)
from te_doctor.snapshot.codec import field_types
from te_doctor.snapshot.facts import Fact, FactState
from te_doctor.snapshot.model import Snapshot


@dataclass(frozen=True, slots=True)
class FlatFacts:
    """The facts of one snapshot by path; ``gpus`` holds the ``gpu.*`` facts of each visible GPU."""

    values: Mapping[str, Fact[Any]]
    gpus: tuple[Mapping[str, Fact[Any]], ...]
    #: False when the environment variables were not all recorded (a pasted bug report).
    environment_complete: bool = True

    def get(self, path: str) -> Fact[Any]:
        """The fact at ``path``; family members that were not found are absent (or unknown).

        A package missing from a complete package list is absent; with no complete list (a
        failed probe, a pasted report without ``pip list``) it is unknown.
        """
        if path in self.values:
            return self.values[path]
        family, _, name = path.partition(".")
        if family == "packages":
            listing = self.values.get("packages.duplicate_count")
            if listing is None or listing.state is FactState.UNKNOWN:
                reason = listing.reason if listing else "no complete package list"
                return Fact.unknown(reason, "packages")
            return Fact.absent(f"{name.replace('_', '-')} is not installed", "packages")
        if family == "env" and self.environment_complete:
            return Fact.absent(f"{name} is not set", "environment")
        return Fact.unknown(f"{path} was not recorded", "snapshot")


def flatten(snapshot: Snapshot, device: int | None = None) -> FlatFacts:
    """The flat facts of ``snapshot``; ``gpu.*`` describe ``device`` (default: first visible)."""
    values: dict[str, Fact[Any]] = {}
    host_facts(values, snapshot)
    driver_facts(values, snapshot)
    failed = tuple(p.name for p in snapshot.probes if p.state == "error")
    values.update(library_facts(snapshot, failed))
    package_facts(values, snapshot)
    torch_and_te_facts(values, snapshot)
    values.update(
        {f"env.{k}": Fact.of(v, "environment") for k, v in snapshot.environment.variables.items()}
    )
    values.update(smoke_facts(snapshot))
    values.update(
        {p: Fact.absent("no install plan", "plan") for p in FACT_TYPES if p.startswith("plan.")}
    )
    build = snapshot.build
    values.update({f"build.{name}": getattr(build, name) for name in field_types(type(build))})
    visible = [gpu for gpu in snapshot.gpus if gpu.visible]
    values.update(driver_library_facts(snapshot, visible))
    add_majors(values)
    per_gpu = tuple(gpu_facts(gpu, snapshot) for gpu in visible)
    gpu_aggregates(values, snapshot, visible)
    selected = select_gpu(snapshot, visible, device)
    if selected is not None:
        values.update(gpu_facts(selected, snapshot))
    else:
        reason = values["gpus.count"].reason or "no visible GPU"
        state = values["gpus.count"].state
        for path in GPU_PATHS:
            values[path] = Fact(
                state if state is not FactState.KNOWN else FactState.ABSENT,
                None,
                reason,
                "nvidia",
            )
    return FlatFacts(
        values, per_gpu, environment_complete=not probe_failed(snapshot, "environment")
    )
