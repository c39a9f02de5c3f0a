"""NVIDIA probe: driver version, the CUDA version the driver supports, and every GPU.

NVML first; if it cannot be used, ``/proc/driver/nvidia/version`` and ``nvidia-smi``. Every
source has a hard timeout, and ``evidence`` says how the conclusion was reached.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from te_doctor.probes.commands import TIMED_OUT
from te_doctor.probes.context import ProbeContext
from te_doctor.probes.libcuda import probe_libcuda
from te_doctor.probes.nvidia_smi import (
    PROC_SOURCE,
    SMI_SOURCE,
    SmiError,
    query_cuda_version,
    query_gpus,
    read_proc_version,
)
from te_doctor.probes.nvml import SOURCE as NVML_SOURCE
from te_doctor.probes.nvml import read_nvml
from te_doctor.snapshot.facts import Fact, FactState, Version
from te_doctor.snapshot.model import DriverFacts, GpuFacts

NVML_TIMEOUT_S = 3.0
SMI_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class NvidiaResult:
    """The two snapshot sections this probe fills."""

    driver: DriverFacts
    gpus: tuple[GpuFacts, ...]


@dataclass(frozen=True, slots=True)
class _Reading:
    """Driver version, driver CUDA version and GPUs from one source; ``gpus`` None if unread."""

    version: Fact[Version]
    cuda_version: Fact[Version]
    gpus: tuple[GpuFacts, ...] | None
    source: str


def probe_nvidia(ctx: ProbeContext) -> NvidiaResult:
    """Find the driver and GPUs, falling back from NVML to /proc and nvidia-smi."""
    evidence: list[str] = []
    reading = _read_driver(ctx, evidence)
    module_version, proc_line, module_loaded = read_proc_version(ctx)
    evidence.append(proc_line)
    if not ctx.exists("/dev/nvidiactl"):
        evidence.append("/dev/nvidiactl: absent (no GPU device nodes)")
    version = reading.version
    if not version.known and module_version:
        version = Fact.of(Version(module_version), PROC_SOURCE)
    elif version.state is FactState.ABSENT and module_loaded:
        # The kernel module is there (its /proc file unreadable): a driver, not "no driver".
        version = Fact.unknown("; ".join(evidence), PROC_SOURCE)
    elif version.state is FactState.ABSENT:
        version = Fact.absent("no NVIDIA driver: " + "; ".join(evidence), version.source)
    spec = ctx.env.get("CUDA_VISIBLE_DEVICES")
    gpus = _gpu_facts(reading.gpus or (), spec)
    libcuda_path, libcuda_version = probe_libcuda(ctx)
    return NvidiaResult(
        driver=DriverFacts(
            version=version,
            cuda_version=reading.cuda_version,
            kernel_module_version=(
                Fact.of(Version(module_version), PROC_SOURCE)
                if module_version
                else Fact.unknown(proc_line, PROC_SOURCE)
                if module_loaded
                else Fact.absent(proc_line, PROC_SOURCE)
            ),
            nvml=_nvml_status(reading, version, evidence[0]),
            gpu_count=_count(reading, version, len(gpus)),
            visible_devices=(
                Fact.of(spec, "nvidia:env CUDA_VISIBLE_DEVICES")
                if spec is not None
                else Fact.absent("CUDA_VISIBLE_DEVICES unset: every GPU is visible", "nvidia:env")
            ),
            visible_gpu_count=_count(reading, version, sum(gpu.visible for gpu in gpus)),
            evidence=tuple(evidence),
            libcuda_path=libcuda_path,
            libcuda_version=libcuda_version,
        ),
        gpus=gpus,
    )


def _nvml_status(reading: _Reading, version: Fact[Version], said: str) -> Fact[str]:
    """ "ok"; absent with no driver at all; else unknown with what NVML said."""
    if reading.source == NVML_SOURCE and reading.gpus is not None:
        return Fact.of("ok", NVML_SOURCE)
    if version.state is FactState.ABSENT:
        return Fact.absent(said, NVML_SOURCE)
    return Fact.unknown(said, NVML_SOURCE)


def _count(reading: _Reading, version: Fact[Version], count: int) -> Fact[int]:
    if reading.gpus is not None:
        return Fact.of(count, reading.source)
    if version.state is FactState.ABSENT:
        return Fact.absent("no NVIDIA driver, so no usable GPU", reading.source)
    return Fact.unknown(reading.version.reason or "GPUs could not be listed", reading.source)


def _read_driver(ctx: ProbeContext, evidence: list[str]) -> _Reading:
    nvml = read_nvml(ctx.load_nvml, NVML_TIMEOUT_S)
    if not nvml.error:
        evidence.append(f"NVML: driver {nvml.driver_version}, {len(nvml.gpus)} GPU(s)")
        evidence.extend(f"GPU {g.index}: {g.name.reason}" for g in nvml.gpus if not g.name.known)
        return _Reading(
            Fact.of(Version(nvml.driver_version), NVML_SOURCE),
            Fact.of(Version(nvml.cuda_version), NVML_SOURCE),
            nvml.gpus,
            NVML_SOURCE,
        )
    evidence.append(nvml.error)
    if nvml.timed_out:
        # nvidia-smi talks to the same wedged driver: asking it too would only double the wait.
        evidence.append("nvidia-smi: not tried, NVML already hung on this driver")
        return _unknown(f"driver did not answer: {nvml.error}", NVML_SOURCE)
    try:
        driver_version, gpus = query_gpus(ctx, SMI_TIMEOUT_S)
    except SmiError as exc:
        evidence.append(str(exc))
        if exc.returncode == TIMED_OUT:
            return _unknown(f"driver did not answer: {exc}", SMI_SOURCE)
        if exc.not_found and nvml.library_missing:
            gone: Fact[Version] = Fact.absent("no NVIDIA driver", SMI_SOURCE)
            return _Reading(gone, gone, None, SMI_SOURCE)
        return _unknown(str(exc), SMI_SOURCE)
    evidence.append(f"nvidia-smi: driver {driver_version}, {len(gpus)} GPU(s)")
    cuda = query_cuda_version(ctx, SMI_TIMEOUT_S)
    return _Reading(Fact.of(Version(driver_version), SMI_SOURCE), cuda, gpus, SMI_SOURCE)


def _unknown(reason: str, source: str) -> _Reading:
    fact: Fact[Version] = Fact.unknown(reason, source)
    return _Reading(fact, fact, None, source)


def _gpu_facts(gpus: tuple[GpuFacts, ...], spec: str | None) -> tuple[GpuFacts, ...]:
    visible = visible_indices(spec, [gpu.uuid.get() or "" for gpu in gpus])
    if spec and any(token.strip().startswith("MIG-") for token in spec.split(",")):
        visible = [i for i, gpu in enumerate(gpus) if gpu.mig_mode.get() == "enabled"]
    return tuple(dataclasses.replace(gpu, visible=gpu.index in visible) for gpu in gpus)


def visible_indices(spec: str | None, uuids: list[str]) -> list[int]:
    """Physical GPU indices CUDA exposes, in CUDA order, under ``CUDA_VISIBLE_DEVICES``.

    Unset means every GPU. Entries are indices or unique prefixes of ``GPU-`` UUIDs; like the
    CUDA runtime, parsing stops at the first invalid entry, so ``"-1"`` or ``""`` hides all GPUs.
    """
    if spec is None:
        return list(range(len(uuids)))
    chosen: list[int] = []
    for raw in spec.split(","):
        token = raw.strip()
        if token.isdigit() and int(token) < len(uuids):
            index: int | None = int(token)
        elif token.startswith("GPU-"):
            matches = [i for i, uuid in enumerate(uuids) if uuid.startswith(token)]
            index = matches[0] if len(matches) == 1 else None
        else:
            index = None
        if index is None or index in chosen:
            break
        chosen.append(index)
    return chosen
