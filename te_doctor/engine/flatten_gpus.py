"""Flat facts of the GPUs: the selected GPU's ``gpu.*``, each visible GPU's, and ``gpus.*``."""

from __future__ import annotations

from typing import Any

from te_doctor.engine.derived import DERIVED, cc_key, runs_on
from te_doctor.engine.forward_compat import gpu_supports_forward_compat
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.model import GpuFacts, Snapshot

GPU_PATHS = (
    "gpu.index",
    "gpu.name",
    "gpu.compute_capability",
    "gpu.memory_total_mib",
    "gpu.mig_mode",
    "gpu.persistence_mode",
    "gpu.torch_has_kernels",
    "gpu.te_has_kernels",
    "gpu.te_has_arch_specific_kernels",
    "gpu.forward_compatible",
)


def gpu_aggregates(
    values: dict[str, Fact[Any]], snapshot: Snapshot, visible: list[GpuFacts]
) -> None:
    count = snapshot.driver.visible_gpu_count
    values["gpus.count"] = count
    if not count.known:
        for path in ("gpus.distinct_names", "gpus.min_compute_capability"):
            values[path] = Fact(count.state, None, count.reason, count.source)
        return
    values["gpus.distinct_names"] = Fact.of(len({g.name.get() for g in visible}), DERIVED)
    ccs = [cc for g in visible if (cc := g.compute_capability.get()) is not None]
    if not visible:
        values["gpus.min_compute_capability"] = Fact.absent("no visible GPU", DERIVED)
    elif len(ccs) < len(visible):
        values["gpus.min_compute_capability"] = Fact.unknown(
            "a GPU's compute capability is unknown", DERIVED
        )
    else:
        values["gpus.min_compute_capability"] = Fact.of(min(ccs, key=cc_key), DERIVED)


def gpu_facts(gpu: GpuFacts, snapshot: Snapshot) -> dict[str, Fact[Any]]:
    cc, te_archs = gpu.compute_capability, snapshot.transformer_engine.core_cuda_archs
    return {
        "gpu.index": Fact.of(gpu.index, "nvidia"),
        "gpu.name": gpu.name,
        "gpu.compute_capability": gpu.compute_capability,
        "gpu.memory_total_mib": gpu.memory_total_mib,
        "gpu.mig_mode": gpu.mig_mode,
        "gpu.persistence_mode": gpu.persistence_mode,
        "gpu.torch_has_kernels": runs_on(snapshot.torch.cuda_arch_list, cc),
        "gpu.te_has_kernels": runs_on(te_archs, cc),
        "gpu.te_has_arch_specific_kernels": runs_on(te_archs, cc, specific=True),
        "gpu.forward_compatible": gpu_supports_forward_compat(gpu.name),
    }


def select_gpu(snapshot: Snapshot, visible: list[GpuFacts], device: int | None) -> GpuFacts | None:
    if device is None:
        return visible[0] if visible else None
    return next((gpu for gpu in snapshot.gpus if gpu.index == device), None)
