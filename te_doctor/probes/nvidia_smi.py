"""Fallbacks when NVML cannot be used: ``/proc/driver/nvidia/version`` and ``nvidia-smi``."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from typing import TypeVar

from te_doctor.probes.commands import NOT_FOUND
from te_doctor.probes.context import ProbeContext
from te_doctor.snapshot.facts import ComputeCapability, Fact, Version
from te_doctor.snapshot.model import GpuFacts

T = TypeVar("T")

SMI_SOURCE = "nvidia:nvidia-smi"
PROC_SOURCE = "nvidia:/proc/driver/nvidia/version"
QUERY_FIELDS = (
    "index,name,uuid,compute_cap,memory.total,mig.mode.current,"
    "persistence_mode,pci.bus_id,serial,driver_version"
)
_NOT_AVAILABLE = {"[N/A]", "N/A", "[Not Supported]", "Not Supported", ""}


def read_proc_version(ctx: ProbeContext) -> tuple[str, str, bool]:
    """(kernel module version, evidence line, whether the module is loaded). The version is ""
    when the file is absent, unreadable or holds none; a module whose file cannot be read is
    still loaded."""
    try:
        text = ctx.read_text("/proc/driver/nvidia/version")
    except FileNotFoundError:
        return "", "/proc/driver/nvidia/version: absent (no NVIDIA kernel module loaded)", False
    except OSError as exc:
        return "", f"/proc/driver/nvidia/version: unreadable ({exc.strerror or exc})", True
    match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    if not match:
        return "", "/proc/driver/nvidia/version: present but no version in it", True
    version = match.group(1)
    return version, f"/proc/driver/nvidia/version: kernel module {version}", True


class SmiError(Exception):
    """nvidia-smi failed, hung or printed something unparseable; the message says which."""

    def __init__(self, message: str, *, returncode: int) -> None:
        super().__init__(message)
        self.returncode = returncode

    @property
    def not_found(self) -> bool:
        """True when nvidia-smi is not installed (not on PATH)."""
        return self.returncode == NOT_FOUND


def query_gpus(ctx: ProbeContext, timeout: float) -> tuple[str, tuple[GpuFacts, ...]]:
    """(driver version, GPUs) from ``nvidia-smi --query-gpu``; raises ``SmiError``."""
    result = ctx.run(
        [_smi(ctx), f"--query-gpu={QUERY_FIELDS}", "--format=csv,noheader,nounits"],
        timeout=timeout,
    )
    if not result.ok:
        raise SmiError(result.describe(), returncode=result.returncode)
    rows = [row for row in csv.reader(result.stdout.splitlines()) if row]
    width = QUERY_FIELDS.count(",") + 1
    if not rows or any(len(row) != width for row in rows):
        preview = result.stdout.strip()[:80] or "(nothing)"
        raise SmiError(f"nvidia-smi: output te-doctor cannot parse: {preview!r}", returncode=0)
    gpus = tuple(_gpu_from_row(i, [cell.strip() for cell in row]) for i, row in enumerate(rows))
    return rows[0][-1].strip(), gpus


def query_cuda_version(ctx: ProbeContext, timeout: float) -> Fact[Version]:
    """The "CUDA Version" in plain ``nvidia-smi`` output's header."""
    result = ctx.run([_smi(ctx)], timeout=timeout)
    if not result.ok:
        return Fact.unknown(result.describe(), SMI_SOURCE)
    match = re.search(r"CUDA Version:\s*(\d+\.\d+)", result.stdout)
    if not match:
        return Fact.unknown("nvidia-smi header shows no CUDA Version", SMI_SOURCE)
    return Fact.of(Version(match.group(1)), SMI_SOURCE)


def _smi(ctx: ProbeContext) -> str:
    """nvidia-smi as found on the machine's PATH (a bare name when absent: the run says 127)."""
    return ctx.which("nvidia-smi") or "nvidia-smi"


def _gpu_from_row(index: int, row: list[str]) -> GpuFacts:
    _index, name, uuid, cc, memory, mig, persistence, bus_id, serial, _driver = row

    def cell(value: str) -> Fact[str]:
        if value in _NOT_AVAILABLE:
            return Fact.absent("nvidia-smi reports it as not available", SMI_SOURCE)
        return Fact.of(value, SMI_SOURCE)

    mig_fact = cell(mig.lower())
    return GpuFacts(
        index=index,
        visible=True,
        name=cell(name),
        uuid=cell(uuid),
        compute_capability=_typed(cell(cc), ComputeCapability),
        memory_total_mib=_typed(cell(memory), int),
        mig_mode=mig_fact,
        persistence_mode=_typed(cell(persistence), lambda text: text.lower() == "enabled"),
        pci_bus_id=cell(bus_id),
        serial=cell(serial),
    )


def _typed(fact: Fact[str], convert: Callable[[str], T]) -> Fact[T]:
    if fact.value is None:
        return Fact(fact.state, None, fact.reason, fact.source)
    try:
        return Fact.of(convert(fact.value), fact.source)
    except ValueError:
        return Fact.unknown(f"nvidia-smi printed {fact.value!r}, not a valid value", fact.source)
