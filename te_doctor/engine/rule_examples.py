"""Run a rule's own examples: fact overlays on a healthy baseline machine.

The baseline is a working Hopper node (the machine every rule should stay quiet on). Each
example overrides some facts (``"<absent>"`` / ``"<unknown>"`` remove them) and the rule must
fire, or stay clear, with a definite answer: UNKNOWN fails the example either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from te_doctor.engine.conditions import Truth
from te_doctor.engine.fact_paths import FACT_TYPES
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_model import ABSENT, UNKNOWN, Example, ExampleValue, Rule
from te_doctor.snapshot.facts import Fact

_SITE = "/opt/venvs/train/lib/python3.12/site-packages"
#: A healthy H100 node: torch 2.7 (CUDA 12.8), TE 2.8 with its PyTorch extension, cuDNN 9.7.
BASELINE: Mapping[str, ExampleValue] = {
    "host.os_name": "Ubuntu 24.04.1 LTS",
    "host.arch": "x86_64",
    "host.kernel": "6.8.0-49-generic",
    "host.python_version": "3.12.3",
    "host.python_implementation": "CPython",
    "host.glibc_version": "2.39",
    "host.cpu_count": 224,
    "host.memory_total_mib": 2063856,
    "host.kubernetes": False,
    "host.wsl": False,
    "host.virtualenv": "/opt/venvs/train",
    "driver.version": "570.124.06",
    "driver.cuda_version": "12.8",
    "driver.cuda_major": 12,
    "driver.torch_cuda_build": "cu128",
    "driver.kernel_module_version": "570.124.06",
    "driver.nvml": "ok",
    "driver.gpu_count": 1,
    "driver.visible_gpu_count": 1,
    "driver.libcuda_path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "driver.libcuda_version": "570.124.06",
    "gpus.count": 1,
    "gpus.distinct_names": 1,
    "gpus.min_compute_capability": "9.0",
    "gpu.index": 0,
    "gpu.name": "NVIDIA H100 80GB HBM3",
    "gpu.compute_capability": "9.0",
    "gpu.memory_total_mib": 81559,
    "gpu.mig_mode": "disabled",
    "gpu.persistence_mode": True,
    "gpu.torch_has_kernels": True,
    "gpu.te_has_kernels": True,
    "gpu.te_has_arch_specific_kernels": True,
    "gpu.forward_compatible": True,
    "cuda.toolkit_version": "12.8.93",
    "cuda.toolkit_major": 12,
    "cuda.toolkit_count": 1,
    "cuda.runtime_version": "12.8.90",
    "cuda.runtime_major": 12,
    "cuda.cublas_version": "12.8.4.1",
    "cuda.nvrtc_version": "12.8.93",
    "cuda.cudart_copies": 1,
    "cudnn.version": "9.7.1.26",
    "cudnn.major": 9,
    "cudnn.header_version": "9.7.1",
    "cudnn.copy_count": 1,
    "cudnn.distinct_versions": 1,
    "cudnn.differs_from_torch": False,
    "packages.torch": "2.7.0+cu128",
    "packages.transformer_engine": "2.8.0",
    "packages.transformer_engine_cu12": "2.8.0",
    "packages.transformer_engine_torch": "2.8.0",
    "packages.flash_attn": "2.7.4.post1",
    "packages.nvidia_cudnn_cu12": "9.7.1.26",
    "packages.nvidia_cublas_cu12": "12.8.4.1",
    "packages.nvidia_cuda_runtime_cu12": "12.8.90",
    "packages.duplicate_count": 0,
    "packages.duplicates": "",
    "packages.conflicts": "",
    "torch.version": "2.7.0+cu128",
    "torch.cuda_version": "12.8",
    "torch.cuda_major": 12,
    "torch.debug": False,
    "torch.cuda_arch_list": ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"),
    "torch.cudnn_version": "9.7.1.26",
    "torch.cublas_version": "12.8.4.1",
    "torch.runtime_version": "12.8.90",
    "torch.nvrtc_version": "12.8.93",
    "te.version": "2.8.0",
    "te.core_package": "transformer-engine-cu12",
    "te.core_cuda_major": 12,
    "te.core_library": f"{_SITE}/transformer_engine/wheel_lib/libtransformer_engine.so",
    "te.core_library_count": 1,
    "te.core_cuda_archs": ("sm_70", "sm_80", "sm_89", "sm_90", "sm_100", "sm_120"),
    "te.torch_extension": f"{_SITE}/transformer_engine_torch.cpython-312-x86_64-linux-gnu.so",
    "te.missing_libraries": (),
    "te.preloads_pip_cuda": True,
    "build.cxx": "/usr/bin/c++",
    "build.cxx_version": "13.2.0",
    "build.cmake_version": "3.28.3",
    "build.ninja_version": "1.11.1",
    "build.python_headers": True,
    "build.cuda_headers": True,
    "build.cudnn_headers": True,
    "plan.framework": "pytorch",
    "plan.te_version": "2.8.0",
    "plan.core_cuda_major": 12,
    "plan.torch_cuda_build": "cu128",
    "plan.max_jobs": 16,
}
#: Facts that are absent on the baseline (not an NGC container, no JAX extension, ...).
BASELINE_ABSENT = (
    "host.container",
    "host.ngc_pytorch_version",
    "host.slurm_job_id",
    "host.conda_env",
    "driver.visible_devices",
    "driver.forward_compat_cuda_version",
    "driver.forward_compat_cuda_major",
    "torch.hip_version",
    "te.jax_extension",
    # The smoke test has not run on the baseline: every smoke.* fact is absent.
    *(path for path in FACT_TYPES if path.startswith("smoke.")),
)


def example_facts(example: Example) -> FlatFacts:
    """The baseline with the example's overlay applied."""
    values: dict[str, Fact[Any]] = {
        path: Fact.of(value, "baseline") for path, value in BASELINE.items()
    }
    values.update(
        {path: Fact.absent("absent on the baseline", "baseline") for path in BASELINE_ABSENT}
    )
    values.update({path: _fact(value) for path, value in example.facts.items()})
    gpu_paths = [path for path in values if path.startswith("gpu.")]
    if example.gpus is None:
        gpus: tuple[Mapping[str, Fact[Any]], ...] = ({p: values[p] for p in gpu_paths},)
    else:
        base = {p: values[p] for p in gpu_paths}
        gpus = tuple({**base, **{p: _fact(v) for p, v in gpu.items()}} for gpu in example.gpus)
        if "gpus.count" not in example.facts:
            values["gpus.count"] = Fact.of(len(gpus), "example")
    return FlatFacts(values, gpus)


def _fact(value: ExampleValue) -> Fact[Any]:
    if value == ABSENT:
        return Fact.absent("absent in this example", "example")
    if value == UNKNOWN:
        return Fact.unknown("unknown in this example", "example")
    return Fact.of(value, "example")


@dataclass(frozen=True, slots=True)
class ExampleFailure:
    """An example that did not behave as declared."""

    rule_id: str
    kind: str
    index: int
    got: Truth


def check_examples(rule: Rule) -> list[ExampleFailure]:
    """Every example of ``rule`` that does not fire (or stay clear) as declared."""
    failures = []
    for kind, examples, expected in (
        ("fires", rule.fires, Truth.TRUE),
        ("clear", rule.clear, Truth.FALSE),
    ):
        for index, example in enumerate(examples):
            truth, _ = rule.when.evaluate(example_facts(example))
            if truth is not expected:
                failures.append(ExampleFailure(rule.id, kind, index, truth))
    return failures
