"""CUDA probe: toolkits (nvcc, for source builds) and the CUDA runtime libraries in use.

Three CUDA numbers are kept apart everywhere: the driver's (nvidia probe), the one torch/TE
were built for (torch and TE probes), and the runtime a process really loads (this probe, from
``te_doctor.probes.process``). nvcc is only ever reported as the toolkit for source builds.
"""

from __future__ import annotations

import json
import re

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.libraries import first_copy_version, library_index, toolkit_roots
from te_doctor.probes.process import in_use
from te_doctor.snapshot.facts import Fact, Version
from te_doctor.snapshot.model import CudaFacts, ToolkitFacts

SOURCE = "cuda"
NVCC_TIMEOUT_S = 5.0
NO_TOOLKIT = "no CUDA toolkit: CUDA_HOME/CUDA_PATH unset, no nvcc on PATH, no /usr/local/cuda*"


def probe_cuda(ctx: ProbeContext) -> CudaFacts:
    """Collect toolkit and runtime-library facts."""
    toolkits = tuple(_toolkit(ctx, root, found_by) for root, found_by in _labelled_roots(ctx))
    primary = toolkits[0] if toolkits else None
    index = library_index(ctx)
    if primary is None:
        toolkit_version: Fact[Version] = Fact.absent(NO_TOOLKIT, SOURCE)
        toolkit_path: Fact[str] = Fact.absent(NO_TOOLKIT, SOURCE)
    else:
        toolkit_version = primary.version
        toolkit_path = Fact.of(primary.path, f"{SOURCE}:{primary.found_by}")
    return CudaFacts(
        toolkit_version=toolkit_version,
        toolkit_path=toolkit_path,
        toolkits=toolkits,
        runtime_version=in_use(ctx, ("te-core", "libcudart.so."), ("torch", "libcudart.so."))
        or first_copy_version(index.of("cudart"), "CUDA runtime (libcudart)"),
        cublas_version=in_use(ctx, ("te-core", "libcublasLt.so."), ("torch", "libcublasLt.so."))
        or first_copy_version(index.of("cublasLt"), "cuBLASLt (libcublasLt)"),
        nvrtc_version=in_use(
            ctx, ("te-loader", "libnvrtc"), ("te-core", "libnvrtc.so."), ("torch", "libnvrtc.so.")
        )
        or first_copy_version(index.of("nvrtc"), "NVRTC (libnvrtc)"),
        libraries=tuple(c for c in index.copies if c.name != "cudnn"),  # cuDNN has its own
        library_search_notes=index.notes,
    )


def _labelled_roots(ctx: ProbeContext) -> list[tuple[str, str]]:
    labels = {
        ctx.env.get("CUDA_HOME", "").rstrip("/"): "CUDA_HOME",
        ctx.env.get("CUDA_PATH", "").rstrip("/"): "CUDA_PATH",
    }
    nvcc = ctx.which("nvcc")
    return [
        (
            root,
            labels.get(root)
            or ("nvcc on PATH" if nvcc and nvcc.startswith(root + "/") else "default location"),
        )
        for root in toolkit_roots(ctx)
    ]


def _toolkit(ctx: ProbeContext, root: str, found_by: str) -> ToolkitFacts:
    nvcc_path = root + "/bin/nvcc"
    nvcc = (
        Fact.of(nvcc_path, SOURCE)
        if ctx.exists(nvcc_path)
        else Fact.absent(f"{nvcc_path} does not exist (runtime-only install)", SOURCE)
    )
    return ToolkitFacts(
        path=root, version=_toolkit_version(ctx, root, nvcc), nvcc=nvcc, found_by=found_by
    )


def _toolkit_version(ctx: ProbeContext, root: str, nvcc: Fact[str]) -> Fact[Version]:
    """version.json, then version.txt, then ``nvcc --version``, then a bundled nvcc dist-info."""
    try:
        data = json.loads(ctx.read_text(root + "/version.json"))
        return Fact.of(Version(str(data["cuda"]["version"])), f"{SOURCE}:{root}/version.json")
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        match = re.search(r"CUDA Version\s+(\d+(?:\.\d+)+)", ctx.read_text(root + "/version.txt"))
        if match:
            return Fact.of(Version(match.group(1)), f"{SOURCE}:{root}/version.txt")
    except OSError:
        pass
    problems = []
    if nvcc.value is not None:
        result = ctx.run([nvcc.value, "--version"], timeout=NVCC_TIMEOUT_S)
        match = re.search(r"release (\d+\.\d+), V(\d+(?:\.\d+)+)", result.stdout)
        if result.ok and match:
            return Fact.of(Version(match.group(2)), f"{SOURCE}:nvcc --version")
        problems.append(result.describe() if not result.ok else "nvcc --version: no release line")
    for dist_info in ctx.glob(root, "dist-info/nvidia_cuda_nvcc-*.dist-info"):
        match = re.search(r"nvidia_cuda_nvcc-(\d+(?:\.\d+)+)\.dist-info$", dist_info)
        if match:
            return Fact.of(Version(match.group(1)), f"{SOURCE}:{dist_info}")
    return Fact.unknown(
        "; ".join(problems) or f"no version.json, version.txt or nvcc in {root}", SOURCE
    )
