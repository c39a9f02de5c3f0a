"""The flat facts about libraries: the CUDA and cuDNN copies in use, torch's, and libcuda.

Part of ``flatten``: the versions each binary really binds (``te_doctor.probes.process``), the
two-copies-of-cuDNN fact, and CUDA forward compatibility, which depends on the visible GPUs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from packaging.version import InvalidVersion, Version

from te_doctor.engine.derived import DERIVED
from te_doctor.engine.flatten_stack import probe_failed
from te_doctor.engine.forward_compat import forward_compat_cuda, gpu_supports_forward_compat
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.model import UNUSABLE_ENTRY, GpuFacts, Snapshot


def library_facts(snapshot: Snapshot, failed: Sequence[str]) -> dict[str, Fact[Any]]:
    """``cuda.*``, ``cudnn.*``, ``torch.*_version`` and ``te.preloads_pip_cuda``."""
    cuda, cudnn, torch = snapshot.cuda, snapshot.cudnn, snapshot.torch
    values: dict[str, Fact[Any]] = {
        "cuda.toolkit_version": cuda.toolkit_version,
        "cuda.toolkit_count": Fact.of(len(cuda.toolkits), DERIVED),
        "cuda.runtime_version": cuda.runtime_version,
        "cuda.cublas_version": cuda.cublas_version,
        "cuda.nvrtc_version": cuda.nvrtc_version,
        "cuda.cudart_copies": Fact.of(sum(c.name == "cudart" for c in cuda.libraries), DERIVED),
        "cudnn.version": cudnn.version,
        "cudnn.header_version": cudnn.header_version,
        "cudnn.copy_count": Fact.of(len(cudnn.copies), DERIVED),
        "cudnn.distinct_versions": Fact.of(
            len({".".join(v.split(".")[:2]) for v in cudnn.distinct_versions}), DERIVED
        ),
        "cudnn.differs_from_torch": _differs(cudnn.version, torch.cudnn_version),
        "torch.cudnn_version": torch.cudnn_version,
        "torch.cublas_version": torch.cublas_version,
        "torch.runtime_version": torch.runtime_version,
        "torch.nvrtc_version": torch.nvrtc_version,
        "te.preloads_pip_cuda": snapshot.transformer_engine.preloads_pip_cuda,
    }
    unusable = [
        note[len(UNUSABLE_ENTRY) :]
        for note in cuda.library_search_notes
        if note.startswith(UNUSABLE_ENTRY)
    ]
    values["cuda.ld_library_path_unusable"] = (
        Fact.of("; ".join(unusable), DERIVED)
        if unusable
        else Fact.absent(
            "every LD_LIBRARY_PATH entry is a directory the loader can search", DERIVED
        )
    )
    if "cuda" in failed:
        for path in ("cuda.toolkit_count", "cuda.cudart_copies", "cuda.ld_library_path_unusable"):
            values[path] = Fact.unknown("the cuda probe failed", "cuda")
    if "cudnn" in failed:
        for path in ("cudnn.copy_count", "cudnn.distinct_versions"):
            values[path] = Fact.unknown("the cudnn probe failed", "cudnn")
    return values


def _differs(te: Fact[Any], torch: Fact[Any]) -> Fact[bool]:
    """True when TE's cuDNN and torch's are different releases (build numbers ignored)."""
    for fact in (te, torch):
        if fact.value is None:
            return Fact(fact.state, None, fact.reason, fact.source)
    try:
        releases = [Version(str(f.value)).release[:3] for f in (te, torch)]
    except InvalidVersion:
        return Fact.unknown(f"cannot compare cuDNN {te.value} with {torch.value}", DERIVED)
    padded = [r + (0,) * (3 - len(r)) for r in releases]
    return Fact.of(padded[0] != padded[1], DERIVED)


def driver_library_facts(snapshot: Snapshot, visible: Sequence[GpuFacts]) -> dict[str, Fact[Any]]:
    """The libcuda.so.1 a process gets, and the CUDA forward compatibility it provides."""
    driver = snapshot.driver
    supported = [gpu_supports_forward_compat(gpu.name) for gpu in visible]
    compat = forward_compat_cuda(driver.libcuda_version, driver.version, supported)
    if probe_failed(snapshot, "nvidia"):
        compat = Fact.unknown(driver.version.reason, "nvidia")  # a crashed probe tells nothing
    return {
        "driver.libcuda_path": driver.libcuda_path,
        "driver.libcuda_version": driver.libcuda_version,
        "driver.forward_compat_cuda_version": compat,
    }
