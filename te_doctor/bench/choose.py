"""Which paths to benchmark, on which device, and which of them cannot run these shapes.

Pure: a function of the recommender's ranking, the machine's facts and the workload. By
default every path the recommender finds viable on the GPU; on a machine without one, the
CPU paths (torch FP8, autocast BF16 on the CPU, FP32), so the bench runs everywhere. A BF16
baseline is added when FP8 paths are asked for without one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from te_doctor.bench.analysis import LOW_PRECISION, PRECISION, baseline_order
from te_doctor.bench.workload import Workload, estimate_memory_bytes, misalignment
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.recommend import PathVerdict
from te_doctor.errors import TeDoctorError

#: The paths a machine without a usable GPU benchmarks, on its CPU.
CPU_PATHS = ("torch-fp8", "cpu-bf16", "cpu")
#: Paths that run on the CPU only.
CPU_ONLY = frozenset({"cpu", "cpu-bf16"})
#: Paths whose torch code also runs on the CPU (TE's modules do not).
CPU_CAPABLE = CPU_ONLY | {"torch-amp-bf16", "torch-amp-fp16", "torch-fp8"}
MIB = 1024 * 1024


class PathChoiceError(TeDoctorError):
    """``--paths`` names a path te-doctor does not know."""


@dataclass(frozen=True, slots=True)
class PlannedPath:
    """A path to benchmark: where it runs, why it was added, or why it is skipped."""

    id: str
    device: str
    note: str
    skip_reason: str


def choose_paths(
    ranking: Sequence[PathVerdict],
    facts: FlatFacts,
    workload: Workload,
    requested: Sequence[str] = (),
) -> tuple[PlannedPath, ...]:
    """The paths to run, best first, each with its device and any reason to skip it."""
    verdicts = {v.id: v for v in ranking}
    unknown = [p for p in requested if p not in verdicts]
    if unknown:
        raise PathChoiceError(f"--paths: unknown path {unknown[0]!r}; known: {', '.join(verdicts)}")
    gpu = _has_cuda_gpu(facts)
    if requested:
        ids = list(dict.fromkeys(requested))
    elif gpu:
        ids = [v.id for v in ranking if v.viable and v.id not in CPU_ONLY]
    else:
        ids = list(CPU_PATHS)
    planned = [_plan(path_id, verdicts[path_id], facts, workload, gpu) for path_id in ids]
    return tuple(planned + _baselines(planned, verdicts, facts, workload, gpu))


def _has_cuda_gpu(facts: FlatFacts) -> bool:
    count = facts.get("gpus.count").get() or 0
    return count > 0 and facts.get("torch.cuda_version").known


def _device(path_id: str, gpu: bool) -> str:
    if path_id in CPU_ONLY or (not gpu and path_id in CPU_CAPABLE):
        return "cpu"
    return "cuda"


def _plan(
    path_id: str,
    verdict: PathVerdict,
    facts: FlatFacts,
    workload: Workload,
    gpu: bool,
    note: str = "",
) -> PlannedPath:
    device = _device(path_id, gpu)
    if device == "cuda" and not gpu:
        return PlannedPath(path_id, device, note, "needs a CUDA GPU and a CUDA build of torch")
    if device == "cuda" and not verdict.viable:
        return PlannedPath(path_id, device, note, "not viable here: " + "; ".join(verdict.reasons))
    if device == "cpu" and not facts.get("packages.torch").known:
        return PlannedPath(path_id, device, note, "torch is not installed")
    if device == "cpu" and path_id not in CPU_ONLY:
        note = note or "no CUDA GPU here: runs on the CPU"
    skip = misalignment(workload, path_id) or _too_big(workload, facts, device)
    return PlannedPath(path_id, device, note, skip)


def _too_big(workload: Workload, facts: FlatFacts, device: str) -> str:
    """A skip reason when the estimate exceeds the device's memory, else ""."""
    where, fact = (
        ("cuda:0", "gpu.memory_total_mib") if device == "cuda" else ("RAM", "host.memory_total_mib")
    )
    available_mib = facts.get(fact).get()
    needed = estimate_memory_bytes(workload)
    if available_mib is None or needed <= available_mib * MIB:
        return ""
    return (
        f"these shapes need about {needed / 1024**3:,.1f} GiB by te-doctor's estimate; "
        f"{where} has {available_mib / 1024:,.1f} GiB"
    )


def _baselines(
    planned: Sequence[PlannedPath],
    verdicts: dict[str, PathVerdict],
    facts: FlatFacts,
    workload: Workload,
    gpu: bool,
) -> list[PlannedPath]:
    """A BF16 path on each device where low-precision paths run without one."""
    added: list[PlannedPath] = []
    for device in ("cuda", "cpu"):
        here = [p for p in planned if p.device == device and not p.skip_reason]
        low = [p for p in here if PRECISION[p.id] in LOW_PRECISION]
        if not low or any(PRECISION[p.id] == "bf16" for p in here):
            continue
        for candidate in baseline_order(low[0].id):
            plan = _plan(candidate, verdicts[candidate], facts, workload, gpu, "the BF16 baseline")
            if plan.device == device and not plan.skip_reason:
                added.append(plan)
                break
    return added
