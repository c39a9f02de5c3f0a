"""Read the driver and every GPU through NVML (nvidia-ml-py), in a thread with a hard timeout.

A wedged driver can block inside NVML forever; the calling probe gives up after the timeout
and records "driver did not answer" instead of hanging.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from te_doctor.background import join
from te_doctor.snapshot.facts import ComputeCapability, Fact, Version
from te_doctor.snapshot.model import GpuFacts

SOURCE = "nvidia:nvml"

#: NVML error codes whose plain meaning is worth more than NVML's own message.
_EXPLAINED = {
    "NVML_ERROR_LIBRARY_NOT_FOUND": "libnvidia-ml.so.1 not found: no NVIDIA driver installed here "
    "(or the container was started without GPU access)",
    "NVML_ERROR_DRIVER_NOT_LOADED": "the NVIDIA kernel driver is not loaded",
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH": "Driver/library version mismatch: the driver was "
    "updated without reloading the kernel module (reboot)",
    "NVML_ERROR_NO_PERMISSION": "no permission to access the GPU devices",
}


class NvmlLibraryMissing(Exception):
    """The driver's NVML library (libnvidia-ml.so.1) cannot be loaded: no driver here."""


@dataclass(frozen=True, slots=True)
class NvmlReading:
    """What NVML said: ``error`` is set when it could not be used at all."""

    error: str = ""
    timed_out: bool = False
    library_missing: bool = False
    driver_version: str = ""
    cuda_version: str = ""
    gpus: tuple[GpuFacts, ...] = field(default=())


def read_nvml(load_nvml: Callable[[], Any], timeout: float) -> NvmlReading:
    """Query NVML in a daemon thread; a call that blocks past ``timeout`` becomes ``timed_out``."""
    box: list[NvmlReading] = []

    def work() -> None:
        try:
            box.append(_read(load_nvml))
        except Exception as exc:  # noqa: BLE001 - NVML bindings raise many types
            box.append(NvmlReading(error=f"{type(exc).__name__}: {exc}"))

    worker = threading.Thread(target=work, name="te-doctor-nvml", daemon=True)
    worker.start()
    join(worker, timeout)
    if not box:
        return NvmlReading(error=f"NVML did not answer within {timeout:g} s", timed_out=True)
    return box[0]


def _read(load_nvml: Callable[[], Any]) -> NvmlReading:
    try:
        nvml = load_nvml()
    except NvmlLibraryMissing:
        missing = _EXPLAINED["NVML_ERROR_LIBRARY_NOT_FOUND"]
        return NvmlReading(error=f"NVML: {missing}", library_missing=True)
    except ImportError as exc:
        return NvmlReading(error=f"nvidia-ml-py is not importable: {exc}")
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        missing = getattr(exc, "value", None) == nvml.NVML_ERROR_LIBRARY_NOT_FOUND
        return NvmlReading(error=_explain(nvml, exc), library_missing=missing)
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        cuda = _cuda_version(nvml.nvmlSystemGetCudaDriverVersion())
        count = nvml.nvmlDeviceGetCount()
        gpus = tuple(_read_index(nvml, index) for index in range(count))
    except nvml.NVMLError as exc:
        return NvmlReading(error=_explain(nvml, exc))
    finally:
        try:
            nvml.nvmlShutdown()
        except nvml.NVMLError:
            pass  # shutting down a half-working NVML changes nothing we report
    return NvmlReading(driver_version=driver, cuda_version=cuda, gpus=gpus)


def _read_index(nvml: Any, index: int) -> GpuFacts:
    """One GPU; a GPU NVML cannot reach (lost, fallen off the bus) is one whose every fact is
    unknown for that reason, and the other GPUs are still read."""
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
    except nvml.NVMLError as exc:
        gone: Fact[Any] = Fact.unknown(_explain(nvml, exc), SOURCE)
        fields = ("name", "uuid", "compute_capability", "memory_total_mib", "mig_mode")
        more = ("persistence_mode", "pci_bus_id", "serial")
        return GpuFacts(index=index, visible=True, **dict.fromkeys((*fields, *more), gone))
    return _read_gpu(nvml, index, handle)


def _read_gpu(nvml: Any, index: int, handle: Any) -> GpuFacts:
    """One GPU's facts; ``visible`` is decided later from CUDA_VISIBLE_DEVICES."""

    def ask(call: Callable[[], Any], convert: Callable[[Any], Any]) -> Fact[Any]:
        try:
            return Fact.of(convert(call()), SOURCE)
        except nvml.NVMLError as exc:
            if getattr(exc, "value", None) == nvml.NVML_ERROR_NOT_SUPPORTED:
                return Fact.absent("not supported by this GPU", SOURCE)
            return Fact.unknown(_explain(nvml, exc), SOURCE)

    return GpuFacts(
        index=index,
        visible=True,
        name=ask(lambda: nvml.nvmlDeviceGetName(handle), _text),
        uuid=ask(lambda: nvml.nvmlDeviceGetUUID(handle), _text),
        compute_capability=ask(
            lambda: nvml.nvmlDeviceGetCudaComputeCapability(handle),
            lambda cc: ComputeCapability(f"{cc[0]}.{cc[1]}"),
        ),
        memory_total_mib=ask(
            lambda: nvml.nvmlDeviceGetMemoryInfo(handle), lambda mem: int(mem.total) // 2**20
        ),
        mig_mode=ask(
            lambda: nvml.nvmlDeviceGetMigMode(handle),
            lambda modes: "enabled" if modes[0] else "disabled",
        ),
        persistence_mode=ask(lambda: nvml.nvmlDeviceGetPersistenceMode(handle), bool),
        pci_bus_id=ask(lambda: nvml.nvmlDeviceGetPciInfo(handle), lambda pci: _text(pci.busId)),
        serial=ask(lambda: nvml.nvmlDeviceGetSerial(handle), _text),
    )


def _cuda_version(encoded: int) -> str:
    """NVML encodes CUDA 12.4 as 12040."""
    return Version(f"{encoded // 1000}.{(encoded % 1000) // 10}")


def _text(value: Any) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def _explain(nvml: Any, exc: Exception) -> str:
    code = getattr(exc, "value", None)
    for constant, meaning in _EXPLAINED.items():
        if code is not None and code == getattr(nvml, constant, object()):
            return f"NVML: {meaning}"
    return f"NVML: {exc}"
