"""The Snapshot: every fact the probes found, as typed, frozen, JSON-serialisable records.

Versions and compute capabilities are stored as strings (``Version``, ``ComputeCapability``)
so that a snapshot round-trips through JSON without loss; they are parsed when compared.
Bump ``SCHEMA_VERSION`` whenever a field is added, removed or changes meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from te_doctor.snapshot.facts import ComputeCapability, Fact, Version

SCHEMA_VERSION = 4

_FROZEN = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**_FROZEN)
class Meta:
    """Who recorded the snapshot, when, and whether personal data was stripped."""

    te_doctor_version: str
    created_at: str
    redacted: bool


@dataclass(**_FROZEN)
class ProbeStatus:
    """How one probe ended (``ok``, ``skipped``, ``error`` with the message) and its duration."""

    name: str
    state: str
    detail: str
    duration_ms: float


@dataclass(**_FROZEN)
class HostFacts:
    """Operating system, Python, C library, resources and the kind of environment it runs in."""

    os_name: Fact[str]
    kernel: Fact[str]
    arch: Fact[str]
    python_version: Fact[Version]
    python_implementation: Fact[str]
    python_executable: Fact[str]
    #: Why that interpreter was diagnosed: the active venv, ``--python``, te-doctor's own.
    python_chosen_by: Fact[str]
    glibc_version: Fact[Version]
    cpu_count: Fact[int]
    memory_total_mib: Fact[int]
    hostname: Fact[str]
    user: Fact[str]
    container: Fact[str]
    ngc_pytorch_version: Fact[str]
    kubernetes: Fact[bool]
    slurm_job_id: Fact[str]
    wsl: Fact[bool]
    virtualenv: Fact[str]
    conda_env: Fact[str]


@dataclass(**_FROZEN)
class DriverFacts:
    """The NVIDIA kernel driver, the CUDA version it supports, and how that was found out."""

    version: Fact[Version]
    cuda_version: Fact[Version]
    kernel_module_version: Fact[Version]
    nvml: Fact[str]
    gpu_count: Fact[int]
    visible_devices: Fact[str]
    visible_gpu_count: Fact[int]
    evidence: tuple[str, ...]


@dataclass(**_FROZEN)
class GpuFacts:
    """One physical GPU as NVML (or nvidia-smi) reports it."""

    index: int
    name: Fact[str]
    uuid: Fact[str]
    compute_capability: Fact[ComputeCapability]
    memory_total_mib: Fact[int]
    mig_mode: Fact[str]
    persistence_mode: Fact[bool]
    pci_bus_id: Fact[str]
    serial: Fact[str]
    visible: bool


@dataclass(**_FROZEN)
class LibraryCopy:
    """One copy of a shared library: cudart, cublas, cublasLt, nvrtc, nccl, curand or cudnn."""

    name: str
    path: str
    version: Fact[Version]
    origin: str


@dataclass(**_FROZEN)
class ToolkitFacts:
    """One CUDA toolkit installation (nvcc and headers), used only for source builds."""

    path: str
    version: Fact[Version]
    nvcc: Fact[str]
    found_by: str


@dataclass(**_FROZEN)
class CudaFacts:
    """CUDA toolkit(s) for source builds, and the CUDA runtime libraries actually installed."""

    toolkit_version: Fact[Version]
    toolkit_path: Fact[str]
    toolkits: tuple[ToolkitFacts, ...]
    runtime_version: Fact[Version]
    cublas_version: Fact[Version]
    nvrtc_version: Fact[Version]
    libraries: tuple[LibraryCopy, ...]
    library_search_notes: tuple[str, ...]


@dataclass(**_FROZEN)
class CudnnFacts:
    """cuDNN: the version that would be used, the header version, and every copy found."""

    version: Fact[Version]
    header_version: Fact[Version]
    copies: tuple[LibraryCopy, ...]
    distinct_versions: tuple[str, ...]


@dataclass(**_FROZEN)
class PackageFacts:
    """One installed distribution of interest, read from its metadata without importing it."""

    name: str
    version: Fact[Version]
    location: str
    install_kind: str
    installer: Fact[str]


@dataclass(**_FROZEN)
class PackagesFacts:
    """Installed torch / transformer-engine / nvidia-* / ... distributions and their conflicts."""

    installed: tuple[PackageFacts, ...]
    duplicates: tuple[str, ...]
    conflicts: tuple[str, ...]
    unreadable: tuple[str, ...]
    search_path: tuple[str, ...]


@dataclass(**_FROZEN)
class TorchFacts:
    """How the installed PyTorch was built, read from its files without importing it."""

    version: Fact[Version]
    cuda_version: Fact[Version]
    hip_version: Fact[Version]
    git_version: Fact[str]
    debug: Fact[bool]
    cuda_arch_list: Fact[tuple[str, ...]]


@dataclass(**_FROZEN)
class NeededLibrary:
    """A shared library that a TE binary links against, and where the loader would find it."""

    name: str
    resolved: Fact[str]


@dataclass(**_FROZEN)
class TransformerEngineFacts:
    """The installed Transformer Engine pieces: core library, framework extensions, their needs."""

    version: Fact[Version]
    core_package: Fact[str]
    core_cuda_major: Fact[int]
    core_library: Fact[str]
    core_library_copies: tuple[str, ...]
    core_cuda_archs: Fact[tuple[str, ...]]
    torch_extension: Fact[str]
    jax_extension: Fact[str]
    needed_libraries: tuple[NeededLibrary, ...]
    loaded_at_import: tuple[NeededLibrary, ...]


@dataclass(**_FROZEN)
class EnvironmentFacts:
    """Environment variables that change how CUDA, TE, NCCL and PyTorch behave."""

    variables: Mapping[str, str]


@dataclass(**_FROZEN)
class BuildFacts:
    """What compiling TE's framework extension from source would find (the sdist route)."""

    cxx: Fact[str]
    cxx_version: Fact[Version]
    cmake_version: Fact[Version]
    ninja_version: Fact[Version]
    python_headers: Fact[bool]
    cuda_headers: Fact[bool]
    cudnn_headers: Fact[bool]


@dataclass(**_FROZEN)
class SupportCheck:
    """One of TE's own support checks (``is_fp8_available`` ...), as the smoke child saw it."""

    recipe: str
    available: bool
    reason: str


@dataclass(**_FROZEN)
class SmokeCheck:
    """One smoke GEMM: which execution path it exercises, where, and how close to FP32 it was."""

    name: str
    device: str
    status: str
    max_abs_error: Fact[float]
    rel_error: Fact[float]
    tolerance: float
    detail: str
    duration_ms: float


@dataclass(**_FROZEN)
class LoadedLibrary:
    """A shared library the smoke child actually had mapped (from /proc/self/maps)."""

    name: str
    path: str
    version: Fact[Version]
    origin: str


@dataclass(**_FROZEN)
class SmokeFacts:
    """What running the real thing in an isolated child process showed.

    ``outcome``: ok, failed, signal, timeout, oom or crashed (absent when not run);
    ``stage``: where it stopped (import-torch, device, import-te, te-support, gemm).
    """

    outcome: Fact[str]
    stage: Fact[str]
    error_text: Fact[str]
    python: str
    duration_ms: float
    torch_cuda_available: Fact[bool]
    torch_device_capability: Fact[ComputeCapability]
    torch_cudnn_version: Fact[Version]
    te_support: tuple[SupportCheck, ...]
    checks: tuple[SmokeCheck, ...]
    loaded_libraries: tuple[LoadedLibrary, ...]


@dataclass(**_FROZEN)
class Snapshot:
    """Everything te-doctor knows about one machine at one moment."""

    schema_version: int
    meta: Meta
    host: HostFacts
    driver: DriverFacts
    gpus: tuple[GpuFacts, ...]
    cuda: CudaFacts
    cudnn: CudnnFacts
    packages: PackagesFacts
    torch: TorchFacts
    transformer_engine: TransformerEngineFacts
    environment: EnvironmentFacts
    build: BuildFacts
    smoke: SmokeFacts
    probes: tuple[ProbeStatus, ...]
