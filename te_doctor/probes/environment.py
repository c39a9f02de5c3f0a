"""Environment probe: the variables that change how CUDA, TE, NCCL and PyTorch behave.

Only relevant variables are recorded, and any whose name looks like a credential is recorded
as ``<redacted>``, whatever the flags.
"""

from __future__ import annotations

from te_doctor.probes.context import ProbeContext
from te_doctor.snapshot.model import EnvironmentFacts
from te_doctor.snapshot.redact import REDACTED, is_secret_name

PREFIXES = (
    "CUDA_",
    "CUDNN_",
    "NVTE_",
    "NCCL_",
    "NVIDIA_",
    "PYTORCH_",
    "TORCH_",
    "CUBLAS_",
    "CUBLASLT_",
    "NVRTC_",
    "XLA_",
    "JAX_",
    "SLURM_",
    "OMPI_",
    "PMIX_",
)
NAMES = frozenset(
    {
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "PATH",
        "MAX_JOBS",
        "CC",
        "CXX",
        "NVCC_APPEND_FLAGS",
        "NVCC_PREPEND_FLAGS",
        "OMP_NUM_THREADS",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "PYTHONPATH",
        "WORLD_SIZE",
        "LOCAL_RANK",
        "RANK",
        "MASTER_ADDR",
        "MASTER_PORT",
    }
)


def is_relevant(name: str) -> bool:
    """True for variables worth a line in a bug report."""
    return name in NAMES or name.startswith(PREFIXES)


def probe_environment(ctx: ProbeContext) -> EnvironmentFacts:
    """Collect the relevant variables, secrets blanked."""
    return EnvironmentFacts(
        variables={
            name: REDACTED if is_secret_name(name) else value
            for name, value in sorted(ctx.env.items())
            if is_relevant(name)
        }
    )
