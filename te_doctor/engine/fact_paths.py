"""The dotted fact paths rules may use, their types, and ``flatten(snapshot)`` that fills them.

``FACT_TYPES`` is the catalogue: a rule leaf naming a path that is not here (or whose operator
does not fit the type) is rejected when the rule file loads. Families (``packages.*``,
``env.*``) accept any name after the prefix. A test checks that ``flatten`` of a fully
populated snapshot produces exactly the declared paths.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass


class FactType(str, enum.Enum):
    """How a fact's value is parsed and compared."""

    VERSION = "version"  # packaging.version, prereleases allowed
    CC = "cc"  # compute capability, integer tuple
    INT = "int"
    BOOL = "bool"
    STR = "str"  # exact string
    TEXT = "text"  # free text, for regex matching
    LIST = "list"  # tuple of strings


#: The Python type a known value of each fact type has in a flattened snapshot.
PYTHON_TYPES: Mapping[FactType, type] = {
    FactType.VERSION: str,
    FactType.CC: str,
    FactType.INT: int,
    FactType.BOOL: bool,
    FactType.STR: str,
    FactType.TEXT: str,
    FactType.LIST: tuple,
}


@dataclass(frozen=True, slots=True)
class FactSpec:
    """A fact path's type and what it means."""

    type: FactType
    doc: str


VER, CC, INT, BOOL, STR, TEXT, LIST = tuple(FactType)

FACT_TYPES: Mapping[str, FactSpec] = {
    # host
    "host.os_name": FactSpec(STR, "operating system name (PRETTY_NAME)"),
    "host.arch": FactSpec(STR, "machine architecture (x86_64, aarch64)"),
    "host.kernel": FactSpec(STR, "kernel release"),
    "host.python_version": FactSpec(VER, "version of the diagnosed Python"),
    "host.python_implementation": FactSpec(STR, "CPython, PyPy, ..."),
    "host.glibc_version": FactSpec(VER, "glibc version"),
    "host.cpu_count": FactSpec(INT, "logical CPUs"),
    "host.memory_total_mib": FactSpec(INT, "total RAM in MiB"),
    "host.container": FactSpec(STR, "docker, podman, kubepods, ... (absent outside containers)"),
    "host.ngc_pytorch_version": FactSpec(STR, "NGC PyTorch release (NVIDIA_PYTORCH_VERSION)"),
    "host.kubernetes": FactSpec(BOOL, "running in a Kubernetes pod"),
    "host.slurm_job_id": FactSpec(STR, "Slurm job id"),
    "host.wsl": FactSpec(BOOL, "running under WSL"),
    "host.virtualenv": FactSpec(STR, "virtual environment prefix"),
    "host.conda_env": FactSpec(STR, "conda environment"),
    # driver
    "driver.version": FactSpec(VER, "NVIDIA driver version"),
    "driver.cuda_version": FactSpec(VER, "highest CUDA version the driver supports"),
    "driver.cuda_major": FactSpec(INT, "major of driver.cuda_version"),
    "driver.torch_cuda_build": FactSpec(
        STR, "the newest PyTorch CUDA wheel build this driver runs (cu130, cu128, ...)"
    ),
    "driver.kernel_module_version": FactSpec(VER, "version in /proc/driver/nvidia/version"),
    "driver.nvml": FactSpec(STR, "NVML status: ok, or unknown with the error"),
    "driver.gpu_count": FactSpec(INT, "GPUs the driver sees"),
    "driver.visible_devices": FactSpec(STR, "CUDA_VISIBLE_DEVICES as set"),
    "driver.visible_gpu_count": FactSpec(INT, "GPUs left visible by CUDA_VISIBLE_DEVICES"),
    "driver.libcuda_path": FactSpec(
        STR, "the libcuda.so.1 the loader gives a process (LD_LIBRARY_PATH, cache, defaults)"
    ),
    "driver.libcuda_version": FactSpec(
        VER, "driver release of that libcuda.so.1: the driver's own, or a cuda-compat copy"
    ),
    "driver.forward_compat_cuda_version": FactSpec(
        VER,
        "CUDA that a forward-compatibility libcuda.so.1 (newer than the kernel driver) gives the "
        "process, when every visible GPU is in NVIDIA's forward-compatibility scope; absent "
        "otherwise, and when that cannot be told (the driver-too-old errors then stand)",
    ),
    "driver.forward_compat_cuda_major": FactSpec(
        INT, "major of driver.forward_compat_cuda_version"
    ),
    # gpus (aggregates over visible GPUs)
    "gpus.count": FactSpec(INT, "visible GPUs"),
    "gpus.distinct_names": FactSpec(INT, "how many different GPU models are visible"),
    "gpus.min_compute_capability": FactSpec(CC, "lowest compute capability among visible GPUs"),
    # gpu: the selected device (--device, default the first visible GPU); gpus.any./gpus.all.
    "gpu.index": FactSpec(INT, "physical index of the selected GPU"),
    "gpu.name": FactSpec(STR, "GPU name as NVML reports it"),
    "gpu.compute_capability": FactSpec(CC, "compute capability"),
    "gpu.memory_total_mib": FactSpec(INT, "GPU memory in MiB"),
    "gpu.mig_mode": FactSpec(STR, "enabled / disabled (absent: GPU without MIG)"),
    "gpu.persistence_mode": FactSpec(BOOL, "persistence mode on"),
    "gpu.torch_has_kernels": FactSpec(BOOL, "libtorch_cuda carries code this GPU can run"),
    "gpu.te_has_kernels": FactSpec(BOOL, "TE's core library carries code this GPU can run"),
    "gpu.te_has_arch_specific_kernels": FactSpec(
        BOOL, "TE's core library carries arch- or family-specific code (sm_100a, sm_120f) for it"
    ),
    "gpu.forward_compatible": FactSpec(
        BOOL,
        "in NVIDIA's CUDA forward-compatibility scope (data-center or Jetson: yes; GeForce, "
        "TITAN: no; other RTX/Quadro boards: unknown)",
    ),
    # cuda
    "cuda.toolkit_version": FactSpec(VER, "CUDA toolkit used for source builds (nvcc)"),
    "cuda.toolkit_major": FactSpec(INT, "major of cuda.toolkit_version"),
    "cuda.toolkit_count": FactSpec(INT, "CUDA toolkits found"),
    "cuda.runtime_version": FactSpec(
        VER,
        "libcudart TE's core binds after `import torch; import transformer_engine` (without TE: "
        "the one libtorch_cuda.so binds; with neither: the first copy found)",
    ),
    "cuda.runtime_major": FactSpec(INT, "major of cuda.runtime_version"),
    "cuda.cublas_version": FactSpec(
        VER,
        "libcublasLt TE's core binds (its GEMMs run there); without TE, torch's; with neither, "
        "the first copy found",
    ),
    "cuda.nvrtc_version": FactSpec(
        VER, "libnvrtc TE's import opens (else the core's, else torch's, else the first found)"
    ),
    "cuda.cudart_copies": FactSpec(INT, "copies of libcudart found"),
    # cudnn
    "cudnn.version": FactSpec(
        VER,
        "cuDNN whose functions TE calls (TE 2.20's version check included): the copy TE's "
        "import-time loader opens with RTLD_GLOBAL, else the one its core binds; without TE, "
        "the one libtorch_cuda.so binds; with neither, the first copy found",
    ),
    "cudnn.major": FactSpec(INT, "major of cudnn.version"),
    "cudnn.header_version": FactSpec(VER, "cudnn_version.h (source builds)"),
    "cudnn.copy_count": FactSpec(INT, "copies of libcudnn found"),
    "cudnn.distinct_versions": FactSpec(INT, "how many different cuDNN versions are installed"),
    "cudnn.differs_from_torch": FactSpec(
        BOOL,
        "cudnn.version and torch.cudnn_version are different releases: two cuDNNs in one process",
    ),
    # packages
    "packages.*": FactSpec(VER, "version of an installed distribution (name with _ for -)"),
    "packages.duplicate_count": FactSpec(INT, "distributions installed more than once"),
    "packages.duplicates": FactSpec(TEXT, "the duplicated distributions, one per line"),
    "packages.conflicts": FactSpec(TEXT, "known-conflicting combinations, one per line"),
    # torch
    "torch.version": FactSpec(VER, "torch version (from torch/version.py)"),
    "torch.cuda_version": FactSpec(VER, "CUDA torch was built for (absent: CPU build)"),
    "torch.cuda_major": FactSpec(INT, "major of torch.cuda_version"),
    "torch.hip_version": FactSpec(VER, "ROCm/HIP torch was built for"),
    "torch.debug": FactSpec(BOOL, "a debug build"),
    "torch.cuda_arch_list": FactSpec(
        LIST, "GPU architectures in libtorch_cuda (sm_90, compute_90)"
    ),
    "torch.cudnn_version": FactSpec(VER, "cuDNN libtorch_cuda.so binds at `import torch`"),
    "torch.cublas_version": FactSpec(VER, "cuBLASLt libtorch_cuda.so binds"),
    "torch.runtime_version": FactSpec(VER, "CUDA runtime (libcudart) libtorch_cuda.so binds"),
    "torch.nvrtc_version": FactSpec(VER, "NVRTC libtorch_cuda.so binds"),
    # transformer engine
    "te.version": FactSpec(VER, "Transformer Engine version"),
    "te.core_package": FactSpec(STR, "transformer-engine-cu12 or -cu13"),
    "te.core_cuda_major": FactSpec(INT, "CUDA major TE's core library was built for"),
    "te.core_library": FactSpec(STR, "path of libtransformer_engine.so"),
    "te.core_library_count": FactSpec(INT, "copies of libtransformer_engine.so"),
    "te.core_cuda_archs": FactSpec(LIST, "GPU architectures in TE's core library"),
    "te.torch_extension": FactSpec(STR, "path of TE's PyTorch extension"),
    "te.jax_extension": FactSpec(STR, "path of TE's JAX extension"),
    "te.missing_libraries": FactSpec(
        LIST,
        "libraries TE's import opens or its core links that the process would not find "
        "(sonames, or libcudnn/libnvrtc/libcurand/libcublas/libcudart for TE's own loads)",
    ),
    "te.preloads_pip_cuda": FactSpec(
        BOOL,
        "TE's import preloads the pip cuBLAS/cudart (2.4-2.10: always; from 2.11: only when "
        "neither NVRTC nor cuRAND came from the system); absent before 2.4",
    ),
    # build prerequisites (the framework extension is compiled from an sdist)
    "build.cxx": FactSpec(STR, "the C++ compiler (CXX, or c++/g++/clang++ on PATH)"),
    "build.cxx_version": FactSpec(VER, "its version"),
    "build.cmake_version": FactSpec(VER, "cmake on PATH"),
    "build.ninja_version": FactSpec(VER, "ninja on PATH"),
    "build.python_headers": FactSpec(BOOL, "Python.h of the diagnosed interpreter exists"),
    "build.cuda_headers": FactSpec(BOOL, "cuda_runtime_api.h in a CUDA toolkit"),
    "build.cudnn_headers": FactSpec(
        BOOL, "cudnn.h in CUDNN_PATH, a toolkit, /usr/include or a wheel"
    ),
    # the install plan under consideration (te-doctor plan; absent otherwise)
    "plan.framework": FactSpec(STR, "pytorch or jax"),
    "plan.te_version": FactSpec(VER, "the Transformer Engine version the plan would install"),
    "plan.core_cuda_major": FactSpec(INT, "CUDA major of the TE core wheel it would install"),
    "plan.torch_cuda_build": FactSpec(
        STR, "the PyTorch CUDA wheel build it pairs with that core (cu128, cu130)"
    ),
    "plan.max_jobs": FactSpec(INT, "parallel build jobs the plan proposes (MAX_JOBS)"),
    # environment
    "env.*": FactSpec(STR, "an environment variable (secrets redacted)"),
    # smoke test (absent when it did not run)
    "smoke.outcome": FactSpec(STR, "ok, failed, signal, timeout, oom or crashed"),
    "smoke.stage": FactSpec(
        STR, "where it stopped: import-torch, device, import-te, te-support, gemm"
    ),
    "smoke.error_text": FactSpec(TEXT, "exception text, failed GEMM details or stderr tail"),
    "smoke.error_line": FactSpec(STR, "the last line of smoke.error_text (the exception itself)"),
    "smoke.torch_cuda_available": FactSpec(BOOL, "torch.cuda.is_available() in the child"),
    "smoke.torch_device_capability": FactSpec(CC, "compute capability as torch sees device 0"),
    "smoke.torch_cudnn_version": FactSpec(VER, "torch.backends.cudnn.version() in the child"),
    "smoke.verified": FactSpec(LIST, "smoke checks (path ids) that ran and matched FP32"),
    "smoke.failed_checks": FactSpec(LIST, "smoke checks that raised"),
    "smoke.numerics_failures": FactSpec(LIST, "smoke checks whose error exceeded the tolerance"),
    "smoke.failed_check_count": FactSpec(INT, "how many smoke checks raised"),
    "smoke.numerics_failure_count": FactSpec(INT, "how many smoke checks gave wrong numbers"),
    "smoke.loaded_cudnn_copies": FactSpec(INT, "directories libcudnn was loaded from in the child"),
}
