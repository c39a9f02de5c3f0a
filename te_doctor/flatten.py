"""Turn a Snapshot into the flat ``path -> Fact`` view that rules are evaluated against.

Pure: the same snapshot always gives the same facts. Derived facts (CUDA majors, whether a
binary carries code the GPU can run) are computed here, once, so rules stay one-line leaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from packaging.utils import canonicalize_name

from te_doctor.codec import field_types
from te_doctor.derived import DERIVED, add_majors, cc_key, runs_on, torch_cuda_build
from te_doctor.fact_paths import FACT_TYPES
from te_doctor.facts import Fact, FactState
from te_doctor.snapshot import GpuFacts, Snapshot

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FlatFacts:
    """The facts of one snapshot by path; ``gpus`` holds the ``gpu.*`` facts of each visible GPU."""

    values: Mapping[str, Fact[Any]]
    gpus: tuple[Mapping[str, Fact[Any]], ...]
    #: False when the environment variables were not all recorded (a pasted bug report).
    environment_complete: bool = True

    def get(self, path: str) -> Fact[Any]:
        """The fact at ``path``; family members that were not found are absent (or unknown).

        A package missing from a complete package list is absent; with no complete list (a
        failed probe, a pasted report without ``pip list``) it is unknown.
        """
        if path in self.values:
            return self.values[path]
        family, _, name = path.partition(".")
        if family == "packages":
            listing = self.values.get("packages.duplicate_count")
            if listing is None or listing.state is FactState.UNKNOWN:
                reason = listing.reason if listing else "no complete package list"
                return Fact.unknown(reason, "packages")
            return Fact.absent(f"{name.replace('_', '-')} is not installed", "packages")
        if family == "env" and self.environment_complete:
            return Fact.absent(f"{name} is not set", "environment")
        return Fact.unknown(f"{path} was not recorded", "snapshot")


def flatten(snapshot: Snapshot, device: int | None = None) -> FlatFacts:
    """The flat facts of ``snapshot``; ``gpu.*`` describe ``device`` (default: first visible)."""
    values: dict[str, Fact[Any]] = {}
    _host(values, snapshot)
    _driver(values, snapshot)
    _cuda(values, snapshot)
    _packages(values, snapshot)
    _torch_and_te(values, snapshot)
    values.update(
        {f"env.{k}": Fact.of(v, "environment") for k, v in snapshot.environment.variables.items()}
    )
    add_majors(values)
    values.update(_smoke(snapshot))
    values.update(
        {p: Fact.absent("no install plan", "plan") for p in FACT_TYPES if p.startswith("plan.")}
    )
    build = snapshot.build
    values.update({f"build.{name}": getattr(build, name) for name in field_types(type(build))})
    visible = [gpu for gpu in snapshot.gpus if gpu.visible]
    per_gpu = tuple(_gpu(gpu, snapshot) for gpu in visible)
    _gpu_aggregates(values, snapshot, visible)
    selected = _select(snapshot, visible, device)
    if selected is not None:
        values.update(_gpu(selected, snapshot))
    else:
        reason = values["gpus.count"].reason or "no visible GPU"
        state = values["gpus.count"].state
        for path in _GPU_PATHS:
            values[path] = Fact(
                state if state is not FactState.KNOWN else FactState.ABSENT,
                None,
                reason,
                "nvidia",
            )
    return FlatFacts(
        values, per_gpu, environment_complete=not _probe_failed(snapshot, "environment")
    )


_GPU_PATHS = (
    "gpu.index",
    "gpu.name",
    "gpu.compute_capability",
    "gpu.memory_total_mib",
    "gpu.mig_mode",
    "gpu.persistence_mode",
    "gpu.torch_has_kernels",
    "gpu.te_has_kernels",
    "gpu.te_has_arch_specific_kernels",
)


def _host(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
    host = snapshot.host
    for name in (
        "os_name",
        "arch",
        "kernel",
        "python_version",
        "python_implementation",
        "glibc_version",
        "cpu_count",
        "memory_total_mib",
        "container",
        "ngc_pytorch_version",
        "kubernetes",
        "slurm_job_id",
        "wsl",
        "virtualenv",
        "conda_env",
    ):
        values[f"host.{name}"] = getattr(host, name)


def _driver(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
    driver = snapshot.driver
    for name in (
        "version",
        "cuda_version",
        "kernel_module_version",
        "nvml",
        "gpu_count",
        "visible_devices",
        "visible_gpu_count",
    ):
        values[f"driver.{name}"] = getattr(driver, name)
    values["driver.torch_cuda_build"] = torch_cuda_build(driver.cuda_version)


def _cuda(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
    cuda, cudnn = snapshot.cuda, snapshot.cudnn
    values.update(
        {
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
                len(
                    {
                        v.split(".")[0] + "." + v.split(".")[1] if "." in v else v
                        for v in cudnn.distinct_versions
                    }
                ),
                DERIVED,
            ),
        }
    )
    if _probe_failed(snapshot, "cuda"):
        for path in ("cuda.toolkit_count", "cuda.cudart_copies"):
            values[path] = Fact.unknown("the cuda probe failed", "cuda")
    if _probe_failed(snapshot, "cudnn"):
        for path in ("cudnn.copy_count", "cudnn.distinct_versions"):
            values[path] = Fact.unknown("the cudnn probe failed", "cudnn")


def _packages(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
    packages = snapshot.packages
    for package in packages.installed:
        values.setdefault(
            f"packages.{canonicalize_name(package.name).replace('-', '_')}", package.version
        )
    if _probe_failed(snapshot, "packages"):
        failed: Fact[Any] = Fact.unknown("the packages probe failed", "packages")
        values.update(
            {
                "packages.duplicate_count": failed,
                "packages.duplicates": failed,
                "packages.conflicts": failed,
            }
        )
        return
    values["packages.duplicate_count"] = Fact.of(len(packages.duplicates), DERIVED)
    values["packages.duplicates"] = Fact.of("\n".join(packages.duplicates), DERIVED)
    values["packages.conflicts"] = Fact.of("\n".join(packages.conflicts), DERIVED)


def _torch_and_te(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
    torch, te = snapshot.torch, snapshot.transformer_engine
    values.update(
        {
            "torch.version": torch.version,
            "torch.cuda_version": torch.cuda_version,
            "torch.hip_version": torch.hip_version,
            "torch.debug": torch.debug,
            "torch.cuda_arch_list": torch.cuda_arch_list,
            "te.version": te.version,
            "te.core_package": te.core_package,
            "te.core_cuda_major": te.core_cuda_major,
            "te.core_library": te.core_library,
            "te.core_library_count": Fact.of(len(te.core_library_copies), DERIVED),
            "te.core_cuda_archs": te.core_cuda_archs,
            "te.torch_extension": te.torch_extension,
            "te.jax_extension": te.jax_extension,
        }
    )
    missing = tuple(
        lib.name
        for lib in (*te.needed_libraries, *te.loaded_at_import)
        if lib.resolved.state is FactState.ABSENT
    )
    if _probe_failed(snapshot, "transformer_engine"):
        failed: Fact[Any] = Fact.unknown(
            "the transformer_engine probe failed", "transformer_engine"
        )
        values.update({"te.missing_libraries": failed, "te.core_library_count": failed})
    else:
        values["te.missing_libraries"] = Fact.of(missing, DERIVED)


def _smoke(snapshot: Snapshot) -> dict[str, Fact[Any]]:
    smoke = snapshot.smoke
    values: dict[str, Fact[Any]] = {
        "smoke.outcome": smoke.outcome,
        "smoke.stage": smoke.stage,
        "smoke.error_text": smoke.error_text,
        "smoke.error_line": _last_line(smoke.error_text),
        "smoke.torch_cuda_available": smoke.torch_cuda_available,
        "smoke.torch_device_capability": smoke.torch_device_capability,
        "smoke.torch_cudnn_version": smoke.torch_cudnn_version,
    }
    if not smoke.outcome.known:  # not run: every derived smoke fact is missing for that reason
        for path in FACT_TYPES:
            if path.startswith("smoke.") and path not in values:
                values[path] = Fact(smoke.outcome.state, None, smoke.outcome.reason, "smoke")
        return values

    def names(*statuses: str) -> Fact[tuple[str, ...]]:
        return Fact.of(tuple(c.name for c in smoke.checks if c.status in statuses), DERIVED)

    cudnn_dirs = {
        lib.path.rsplit("/", 1)[0] for lib in smoke.loaded_libraries if lib.name == "cudnn"
    }
    values.update(
        {
            "smoke.verified": names("ok"),
            "smoke.failed_checks": names("failed"),
            "smoke.numerics_failures": names("numerics"),
            "smoke.failed_check_count": Fact.of(
                sum(c.status == "failed" for c in smoke.checks), DERIVED
            ),
            "smoke.numerics_failure_count": Fact.of(
                sum(c.status == "numerics" for c in smoke.checks), DERIVED
            ),
            "smoke.loaded_cudnn_copies": Fact.of(len(cudnn_dirs), DERIVED),
        }
    )
    return values


def _last_line(text: Fact[str]) -> Fact[str]:
    if text.value is None:
        return text
    lines = [line.strip() for line in text.value.splitlines() if line.strip()]
    return Fact.of(lines[-1][:300] if lines else "", DERIVED)


def _gpu_aggregates(
    values: dict[str, Fact[Any]], snapshot: Snapshot, visible: list[GpuFacts]
) -> None:
    count = snapshot.driver.visible_gpu_count
    values["gpus.count"] = count
    if not count.known:
        for path in ("gpus.distinct_names", "gpus.min_compute_capability"):
            values[path] = Fact(count.state, None, count.reason, count.source)
        return
    values["gpus.distinct_names"] = Fact.of(len({g.name.get() for g in visible}), DERIVED)
    ccs = [cc for g in visible if (cc := g.compute_capability.get()) is not None]
    if not visible:
        values["gpus.min_compute_capability"] = Fact.absent("no visible GPU", DERIVED)
    elif len(ccs) < len(visible):
        values["gpus.min_compute_capability"] = Fact.unknown(
            "a GPU's compute capability is unknown", DERIVED
        )
    else:
        values["gpus.min_compute_capability"] = Fact.of(min(ccs, key=cc_key), DERIVED)


def _gpu(gpu: GpuFacts, snapshot: Snapshot) -> dict[str, Fact[Any]]:
    cc, te_archs = gpu.compute_capability, snapshot.transformer_engine.core_cuda_archs
    return {
        "gpu.index": Fact.of(gpu.index, "nvidia"),
        "gpu.name": gpu.name,
        "gpu.compute_capability": gpu.compute_capability,
        "gpu.memory_total_mib": gpu.memory_total_mib,
        "gpu.mig_mode": gpu.mig_mode,
        "gpu.persistence_mode": gpu.persistence_mode,
        "gpu.torch_has_kernels": runs_on(snapshot.torch.cuda_arch_list, cc),
        "gpu.te_has_kernels": runs_on(te_archs, cc),
        "gpu.te_has_arch_specific_kernels": runs_on(te_archs, cc, specific=True),
    }


def _select(snapshot: Snapshot, visible: list[GpuFacts], device: int | None) -> GpuFacts | None:
    if device is None:
        return visible[0] if visible else None
    return next((gpu for gpu in snapshot.gpus if gpu.index == device), None)


def _probe_failed(snapshot: Snapshot, name: str) -> bool:
    return any(p.name == name and p.state == "error" for p in snapshot.probes)
