"""The Snapshot: every fact the probes found, as typed, frozen, JSON-serialisable records.

Versions and compute capabilities are stored as strings (``Version``, ``ComputeCapability``)
so that a snapshot round-trips through JSON without loss; they are parsed when compared.
Bump ``SCHEMA_VERSION`` whenever a field is added, removed or changes meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from te_doctor.snapshot.facts import ComputeCapability, Fact, Version
from te_doctor.snapshot.smoke_model import SmokeFacts

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
    """The NVIDIA kernel driver, the CUDA version it supports, and how that was found out.

    ``libcuda_path``/``libcuda_version``: the ``libcuda.so.1`` the dynamic loader would give a
    process (LD_LIBRARY_PATH, then the loader cache, then the default directories): the
    driver's own, or a CUDA forward-compatibility copy (``cuda-compat``) put before it.
    """

    version: Fact[Version]
    cuda_version: Fact[Version]
    kernel_module_version: Fact[Version]
    nvml: Fact[str]
    gpu_count: Fact[int]
    visible_devices: Fact[str]
    visible_gpu_count: Fact[int]
    evidence: tuple[str, ...]
    libcuda_path: Fact[str]
    libcuda_version: Fact[Version]


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
    """CUDA toolkit(s) for source builds, and the CUDA runtime libraries installed and in use.

    ``runtime_version`` and ``cublas_version`` are the libcudart and libcublasLt that TE's core
    library binds in ``import torch; import transformer_engine`` (without TE: the ones
    libtorch_cuda.so binds; with neither: the first copy found); ``nvrtc_version`` the libnvrtc
    TE's import opens (else the core's, else torch's). ``libraries`` lists every copy.
    """

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
    """cuDNN: the version TE calls, the header version, and every copy found.

    ``version`` is the copy Transformer Engine's cuDNN calls resolve to (the one its
    import-time loader opens, else the one its core binds); without TE, the one
    libtorch_cuda.so binds; with neither, the first copy found.
    """

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
class NeededLibrary:
    """A library a binary links (DT_NEEDED) or loads itself, and the file the process gets.

    ``resolved``'s source says how the file was found (``DT_RPATH of libtorch_cuda.so``,
    ``already loaded (PyTorch ...)``, ``a search of /usr/local/cuda``, ...).
    """

    name: str
    resolved: Fact[str]


@dataclass(**_FROZEN)
class TorchFacts:
    """How the installed PyTorch was built, read from its files without importing it.

    ``linked_libraries`` are libtorch_cuda.so's DT_NEEDED CUDA libraries as the loader would
    bind them at ``import torch``; ``cudnn_version`` ... ``nvrtc_version`` are their versions.
    """

    version: Fact[Version]
    cuda_version: Fact[Version]
    hip_version: Fact[Version]
    git_version: Fact[str]
    debug: Fact[bool]
    cuda_arch_list: Fact[tuple[str, ...]]
    linked_libraries: tuple[NeededLibrary, ...]
    cudnn_version: Fact[Version]
    cublas_version: Fact[Version]
    runtime_version: Fact[Version]
    nvrtc_version: Fact[Version]


@dataclass(**_FROZEN)
class TransformerEngineFacts:
    """The installed Transformer Engine pieces: core library, framework extensions, their needs.

    ``loaded_at_import`` lists what TE's import opens itself, in its order for this release;
    ``needed_libraries`` the core's DT_NEEDED entries as bound after ``import torch`` and TE's
    own loads; ``preloads_pip_cuda`` whether the import preloads the pip cuBLAS/cudart (absent
    for releases without that step, before 2.4).
    """

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
    preloads_pip_cuda: Fact[bool]


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
