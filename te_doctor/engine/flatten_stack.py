"""Flat facts of the software stack: host, driver, CUDA and cuDNN, packages, torch and TE."""

from __future__ import annotations

from typing import Any

from packaging.utils import canonicalize_name

from te_doctor.engine.derived import DERIVED, torch_cuda_build
from te_doctor.snapshot.facts import Fact, FactState
from te_doctor.snapshot.model import Snapshot


def host_facts(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
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


def driver_facts(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
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
    if probe_failed(snapshot, "nvidia"):
        values["driver.evidence"] = Fact.unknown(driver.version.reason, "nvidia")
    elif driver.evidence:
        values["driver.evidence"] = Fact.of("\n".join(driver.evidence), "nvidia")
    else:
        values["driver.evidence"] = Fact.absent("the NVIDIA probe recorded no evidence", "nvidia")


def package_facts(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
    packages = snapshot.packages
    for package in packages.installed:
        values.setdefault(
            f"packages.{canonicalize_name(package.name).replace('-', '_')}", package.version
        )
    if probe_failed(snapshot, "packages"):
        failed: Fact[Any] = Fact.unknown("the packages probe failed", "packages")
        values.update(
            {
                "packages.duplicate_count": failed,
                "packages.duplicates": failed,
                "packages.conflicts": failed,
                "packages.unreadable_count": failed,
                "packages.unreadable": failed,
            }
        )
        return
    values["packages.unreadable_count"] = Fact.of(len(packages.unreadable), DERIVED)
    values["packages.unreadable"] = Fact.of("\n".join(packages.unreadable), DERIVED)
    values["packages.duplicate_count"] = Fact.of(len(packages.duplicates), DERIVED)
    values["packages.duplicates"] = Fact.of("\n".join(packages.duplicates), DERIVED)
    values["packages.conflicts"] = Fact.of("\n".join(packages.conflicts), DERIVED)


def torch_and_te_facts(values: dict[str, Fact[Any]], snapshot: Snapshot) -> None:
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
    if probe_failed(snapshot, "transformer_engine"):
        failed: Fact[Any] = Fact.unknown(
            "the transformer_engine probe failed", "transformer_engine"
        )
        values.update({"te.missing_libraries": failed, "te.core_library_count": failed})
    else:
        values["te.missing_libraries"] = Fact.of(missing, DERIVED)


def probe_failed(snapshot: Snapshot, name: str) -> bool:
    """True when the probe ``name`` crashed: what it would have filled is unknown, not absent."""
    return any(p.name == name and p.state == "error" for p in snapshot.probes)
