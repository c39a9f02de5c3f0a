"""Human-readable snapshot: one block per section, one line per fact, with its evidence."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from te_doctor.snapshot.codec import field_types
from te_doctor.snapshot.facts import Fact, FactState
from te_doctor.snapshot.labels import LABELS, TITLES
from te_doctor.snapshot.model import (
    GpuFacts,
    LibraryCopy,
    NeededLibrary,
    PackageFacts,
    Snapshot,
    ToolkitFacts,
)

_WIDTH = 36


def render_snapshot_text(snapshot: Snapshot) -> str:
    """The whole snapshot as aligned text."""
    meta = snapshot.meta
    lines = [
        f"te-doctor {meta.te_doctor_version} snapshot (schema {snapshot.schema_version}), "
        f"recorded {meta.created_at}" + (", personal data redacted" if meta.redacted else "")
    ]
    for section, title in TITLES.items():
        lines += ["", title]
        lines += _section_lines(section, getattr(snapshot, section))
    lines += ["", "Probes"]
    lines += [
        f"  {p.name:<20} {p.state:<7} {p.duration_ms:8.1f} ms"
        + (f"  {p.detail}" if p.detail else "")
        for p in snapshot.probes
    ]
    return "\n".join(lines) + "\n"


def _section_lines(section: str, value: Any) -> list[str]:
    if section == "gpus":
        return [_gpu_line(gpu) for gpu in value] or ["  (none)"]
    if isinstance(value, Mapping) or section == "environment":
        variables = value.variables if section == "environment" else value
        return [f"  {name}={text}" for name, text in variables.items()] or ["  (none relevant)"]
    lines = []
    for name in field_types(type(value)):
        label = LABELS.get(f"{section}.{name}", name.replace("_", " "))
        lines += _field_lines(label, getattr(value, name))
    return lines


def _field_lines(label: str, value: Any) -> list[str]:
    if isinstance(value, Fact):
        return [f"  {label:<{_WIDTH}} {describe(value)}"]
    if isinstance(value, tuple):
        if not value:
            return [f"  {label:<{_WIDTH}} (none)"]
        return [f"  {label}:"] + [f"    - {_item(item)}" for item in value]
    return [f"  {label:<{_WIDTH}} {value}"]


def describe(fact: Fact[Any]) -> str:
    """``value  [source]``, or why there is no value."""
    if fact.state is FactState.KNOWN:
        value = ", ".join(fact.value) if isinstance(fact.value, tuple) else fact.value
        return f"{value}  [{fact.source}]"
    word = "not present" if fact.state is FactState.ABSENT else "UNKNOWN"
    return f"{word}: {fact.reason}"


def _item(item: Any) -> str:
    if isinstance(item, LibraryCopy):
        return f"{item.name} {item.version.get() or '?'} at {item.path} ({item.origin})"
    if isinstance(item, NeededLibrary):
        where = item.resolved.get()
        return (
            f"{item.name} -> {where}"
            if where
            else f"{item.name} -> NOT FOUND: {item.resolved.reason}"
        )
    if isinstance(item, PackageFacts):
        return f"{item.name} {item.version.get() or '?'} ({item.install_kind}) in {item.location}"
    if isinstance(item, ToolkitFacts):
        nvcc = item.nvcc.get() or "no nvcc"
        return f"{item.path}: CUDA {item.version.get() or '?'}, {nvcc} (found by {item.found_by})"
    if dataclasses.is_dataclass(item):
        parts = []
        for name in field_types(type(item)):
            field = getattr(item, name)
            parts.append(f"{name}={field.get() if isinstance(field, Fact) else field}")
        return ", ".join(parts)
    return str(item)


def _gpu_line(gpu: GpuFacts) -> str:
    cc = gpu.compute_capability.get() or "?"
    memory = gpu.memory_total_mib.get()
    parts = [
        f"  #{gpu.index} {gpu.name.get() or '?'}",
        f"compute capability {cc}",
        f"{memory} MiB" if memory is not None else "memory ?",
        f"MIG {gpu.mig_mode.get() or 'n/a'}",
        f"persistence {'on' if gpu.persistence_mode.get() else 'off'}",
        "visible" if gpu.visible else "hidden by CUDA_VISIBLE_DEVICES",
        f"uuid {gpu.uuid.get() or '?'}",
    ]
    return ", ".join(parts)
