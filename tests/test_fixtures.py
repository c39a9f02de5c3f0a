"""Recorded machines: every fixture loads, validates, regenerates exactly, and tells the truth.

A failing regeneration test means the probes (or a machine in ``tests/machines.py``) changed
what they report. If the change is intended, rewrite the fixtures and review the diff:

    python -m tests.machines                      # or
    TE_DOCTOR_UPDATE_FIXTURES=1 pytest tests/test_fixtures.py
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from packaging.version import Version

import te_doctor
from te_doctor.snapshot.facts import Fact, FactState
from te_doctor.snapshot.file import dumps, loads
from te_doctor.snapshot.model import GpuFacts, PackageFacts, Snapshot
from tests.machines import (
    CUDNN_LIBRARIES,
    FIXED_CREATED_AT,
    FIXED_TE_DOCTOR_VERSION,
    FIXTURE_DIR,
    MACHINES,
    SAME_MACHINE_WITH_SMOKE,
    fixture_path,
    record,
)

SCHEMA_PATH = Path(te_doctor.__file__).parent / "snapshot.schema.json"
UPDATE = os.environ.get("TE_DOCTOR_UPDATE_FIXTURES", "") not in ("", "0")
SLUGS = list(MACHINES)
CUDNN_9_PARTS = [p.lstrip("_") for p in CUDNN_LIBRARIES[9] if p]


def committed(slug: str) -> str:
    return fixture_path(slug).read_text(encoding="utf-8")


def snapshot_of(slug: str) -> Snapshot:
    return loads(committed(slug), name=f"{slug}.json")


def known(fact: Fact[Any]) -> Any:
    """The value of a fact that must be known (a readable failure otherwise)."""
    assert fact.state is FactState.KNOWN, f"expected a value, got {fact}"
    return fact.value


def package(snapshot: Snapshot, name: str) -> PackageFacts:
    found = [p for p in snapshot.packages.installed if p.name == name]
    assert len(found) == 1, f"{name}: {len(found)} entries"
    return found[0]


@pytest.fixture(scope="module")
def validator() -> Any:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


# --------------------------------------------------------------------------------------------
# Every fixture


def test_fixture_files_and_machines_match_one_to_one() -> None:
    """Every generated fixture has its machine; ``real-*`` ones were recorded on real machines
    (``benchmarks/gpu_session.sh``) and are checked through their expected results instead."""
    files = sorted(p.stem for p in FIXTURE_DIR.glob("*.json") if not p.stem.startswith("real-"))
    assert files == sorted(MACHINES), "run: python -m tests.machines"
    assert len(files) >= 12


@pytest.mark.parametrize("slug", SLUGS)
def test_regenerating_the_machine_reproduces_its_fixture(slug: str, tmp_path: Path) -> None:
    text = record(slug, tmp_path)
    assert str(tmp_path) not in text
    old = committed(slug)
    if UPDATE and text != old:
        fixture_path(slug).write_text(text, encoding="utf-8")
        pytest.skip(f"{slug}.json rewritten, not checked: review the diff (update mode)")
    if text != old:
        diff = difflib.unified_diff(
            old.splitlines(), text.splitlines(), "committed", "regenerated", lineterm="", n=2
        )
        pytest.fail(
            f"{slug}.json is stale (python -m tests.machines {slug}):\n"
            + "\n".join(list(diff)[:80])
        )


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_loads_with_the_current_schema_and_round_trips(slug: str) -> None:
    snapshot = snapshot_of(slug)
    assert dumps(snapshot) == committed(slug)


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_validates_against_the_json_schema(slug: str, validator: Any) -> None:
    errors = sorted(validator.iter_errors(json.loads(committed(slug))), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_is_normalised_and_every_probe_ran(slug: str) -> None:
    snapshot = snapshot_of(slug)
    assert snapshot.meta.created_at == FIXED_CREATED_AT
    assert snapshot.meta.te_doctor_version == FIXED_TE_DOCTOR_VERSION
    assert snapshot.meta.redacted is False
    assert [p.duration_ms for p in snapshot.probes] == [0.0] * len(snapshot.probes)
    assert [(p.name, p.state) for p in snapshot.probes if p.state != "ok"] == []
    assert "/tmp/" not in committed(slug)


def test_gpu_uuids_and_serials_are_distinct_across_all_machines() -> None:
    originals = [slug for slug in SLUGS if slug not in SAME_MACHINE_WITH_SMOKE]
    gpus = [gpu for slug in originals for gpu in snapshot_of(slug).gpus]
    uuids = [known(gpu.uuid) for gpu in gpus]
    serials = [gpu.serial.value for gpu in gpus if gpu.serial.known]
    assert len(set(uuids)) == len(uuids) > 40
    assert len(set(serials)) == len(serials)


# --------------------------------------------------------------------------------------------
# What each machine is


def _all_gpus(snapshot: Snapshot, name: str, cc: str, memory_mib: int) -> tuple[GpuFacts, ...]:
    assert snapshot.gpus, "no GPUs"
    for gpu in snapshot.gpus:
        assert known(gpu.name) == name
        assert known(gpu.compute_capability) == cc
        assert known(gpu.memory_total_mib) == memory_mib
        assert gpu.visible
    assert known(snapshot.driver.gpu_count) == len(snapshot.gpus)
    return snapshot.gpus


def _te_loads(snapshot: Snapshot) -> None:
    """The TE core library and torch extension are there and every needed library resolves."""
    te = snapshot.transformer_engine
    assert known(te.core_library).endswith("libtransformer_engine.so")
    assert known(te.torch_extension).endswith(".so")
    assert te.needed_libraries
    missing = [lib.name for lib in te.needed_libraries if not lib.resolved.known]
    assert missing == []


def h100_cuda12_te_ok(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA H100 80GB HBM3", "9.0", 81559)
    assert len(s.gpus) == 8
    assert known(s.gpus[0].mig_mode) == "disabled"
    assert known(s.driver.version) == "550.54.15"
    assert known(s.driver.cuda_version) == "12.4"
    assert known(s.driver.nvml) == "ok"
    assert known(s.torch.version) == "2.6.0+cu124"
    assert known(s.torch.cuda_version) == "12.4"
    assert "sm_90" in known(s.torch.cuda_arch_list)
    te = s.transformer_engine
    assert known(te.version) == "2.3.0"
    assert known(te.core_package) == "transformer-engine-cu12"
    assert known(te.core_cuda_major) == 12
    assert "sm_90" in known(te.core_cuda_archs)
    _te_loads(s)
    # import torch binds the pip CUDA libraries through libtorch_cuda.so's DT_RPATH; TE 2.3's
    # core reuses them by SONAME, and finds the cuDNN sub-libraries only via LD_LIBRARY_PATH.
    how = {lib.name: lib.resolved.source for lib in te.needed_libraries}
    assert how["libcublasLt.so.12"].startswith("transformer_engine:already loaded (PyTorch")
    assert how["libcudnn_adv.so.9"] == "transformer_engine:LD_LIBRARY_PATH"
    linked = {lib.name: lib.resolved.source for lib in s.torch.linked_libraries}
    assert linked["libcudnn.so.9"] == "torch:DT_RPATH of libtorch_cuda.so"
    assert known(s.cudnn.version) == "9.1.0.70"
    assert known(s.torch.cudnn_version) == "9.1.0.70"
    assert "/usr/local/cuda" in s.cuda.nvrtc_version.source  # TE 2.3 searches CUDA_HOME first
    assert known(package(s, "nvidia-cudnn-cu12").version) == "9.1.0.70"
    assert known(s.cuda.toolkit_version) == "12.4.1"
    assert known(s.cuda.runtime_version) == "12.4.127"
    assert s.packages.conflicts == () and s.packages.duplicates == ()


def a100(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA A100-SXM4-80GB", "8.0", 81920)
    assert len(s.gpus) == 8
    assert known(s.driver.version) == "535.183.06"
    assert known(s.driver.cuda_version) == "12.2"
    assert known(s.host.os_name).startswith("Rocky Linux 9.4")
    assert known(s.host.glibc_version) == "2.34"
    assert known(s.torch.version) == "2.4.0+cu121"
    assert known(s.torch.cuda_version) == "12.1"
    assert known(s.transformer_engine.version) == "1.13.0"
    _te_loads(s)


def l40s_ada(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA L40S", "8.9", 46068)
    assert len(s.gpus) == 4
    assert all(gpu.mig_mode.state is FactState.ABSENT for gpu in s.gpus)
    assert all(known(gpu.persistence_mode) is False for gpu in s.gpus)
    # FP8 on Ada needs cuBLASLt >= 12.1.3 (CUDA 12.1 Update 1): the cu124 wheels have it.
    assert Version(known(s.cuda.cublas_version)) >= Version("12.1.3")
    assert known(s.torch.cuda_version) == "12.4"
    assert known(s.transformer_engine.version) == "2.1.0"
    _te_loads(s)


def rtx_4090(s: Snapshot) -> None:
    (gpu,) = _all_gpus(s, "NVIDIA GeForce RTX 4090", "8.9", 24564)
    assert gpu.serial.state is FactState.ABSENT
    assert gpu.mig_mode.state is FactState.ABSENT
    # Three different CUDA numbers, kept apart: driver, toolkit (nvcc), runtime (torch's wheels).
    assert known(s.driver.cuda_version) == "12.6"
    assert known(s.cuda.toolkit_version) == "12.6.2"
    assert known(s.cuda.runtime_version) == "12.4.127"
    assert known(s.torch.cuda_version) == "12.4"
    _te_loads(s)


def b200(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA B200", "10.0", 183359)
    assert len(s.gpus) == 8
    assert known(s.driver.version) == "570.124.06"
    assert known(s.driver.kernel_module_version) == "570.124.06"
    assert Version(known(s.driver.cuda_version)) >= Version("12.8")
    assert known(s.torch.version) == "2.7.0+cu128"
    assert "sm_100" in known(s.torch.cuda_arch_list)
    assert "sm_100" in known(s.transformer_engine.core_cuda_archs)
    assert known(package(s, "torch").installer) == "uv"
    _te_loads(s)


def v100(s: Snapshot) -> None:
    _all_gpus(s, "Tesla V100-SXM2-32GB", "7.0", 32768)
    assert len(s.gpus) == 8
    assert known(s.cudnn.version) == "8.9.2.26"
    te = s.transformer_engine
    assert known(te.version) == "1.11.0+c27ee60"
    assert package(s, "transformer-engine").install_kind == "built from a VCS checkout"
    assert te.core_package.state is FactState.ABSENT  # a source build has no -cu12 package
    assert te.core_cuda_major.value == 12 and "links libcudart.so.12" in te.core_cuda_major.source
    # TE 1.11's core does not link cuDNN: its import opens the pip libcudnn.so.8 first.
    assert not [lib for lib in te.needed_libraries if lib.name.startswith("libcudnn")]
    loaded = {lib.name: known(lib.resolved) for lib in te.loaded_at_import}
    assert loaded["libcudnn"].endswith("/nvidia/cudnn/lib/libcudnn.so.8")
    _te_loads(s)


def t4(s: Snapshot) -> None:
    (gpu,) = _all_gpus(s, "Tesla T4", "7.5", 15360)
    assert known(gpu.pci_bus_id) == "00000000:00:04.0"
    assert s.host.virtualenv.state is FactState.ABSENT
    assert package(s, "torch").location.endswith("/dist-packages")
    assert known(s.torch.version) == "2.5.1+cu121"


def no_gpu_laptop(s: Snapshot) -> None:
    assert s.driver.version.state is FactState.ABSENT
    assert "libnvidia-ml.so.1 not found" in s.driver.version.reason
    assert s.driver.gpu_count.state is FactState.ABSENT
    assert s.gpus == ()
    assert known(s.torch.version) == "2.5.1+cpu"
    assert s.torch.cuda_version.state is FactState.ABSENT
    assert s.transformer_engine.version.state is FactState.ABSENT
    assert s.cudnn.version.state is FactState.ABSENT
    assert s.cuda.runtime_version.state is FactState.ABSENT


def h100_mig(s: Snapshot) -> None:
    (gpu,) = _all_gpus(s, "NVIDIA H100 80GB HBM3", "9.0", 81559)
    assert known(gpu.mig_mode) == "enabled"
    assert gpu.visible
    assert known(s.driver.visible_devices).startswith("MIG-")
    assert known(s.driver.visible_gpu_count) == 1
    assert known(s.host.kubernetes) is True
    assert s.environment.variables["CUDA_VISIBLE_DEVICES"].startswith("MIG-")


def driver_older_than_torch_cuda(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA H100 PCIe", "9.0", 81559)
    assert known(s.driver.version) == "535.161.08"
    assert known(s.driver.cuda_version) == "12.2"
    assert known(s.torch.cuda_version) == "12.4"
    assert Version(known(s.torch.cuda_version)) > Version(known(s.driver.cuda_version))
    _te_loads(s)


def two_te_variants(s: Snapshot) -> None:
    conflicts = " | ".join(s.packages.conflicts)
    assert "transformer-engine-cu12" in conflicts and "transformer-engine-cu13" in conflicts
    assert "disagree on the version" in conflicts
    assert known(package(s, "transformer-engine-cu12").version) == "2.8.0"
    assert known(package(s, "transformer-engine-cu13").version) == "2.9.0"
    te = s.transformer_engine
    assert known(te.version) == "2.9.0"
    # The library on disk is the cu13 build: what it links decides, not the first package name.
    assert known(te.core_package) == "transformer-engine-cu13"
    assert known(te.core_cuda_major) == 13
    missing = {lib.name for lib in te.needed_libraries if lib.resolved.state is FactState.ABSENT}
    assert missing == {"libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13"}
    assert known(s.torch.cuda_version) == "12.8"


def ngc_container(s: Snapshot) -> None:
    assert known(s.host.ngc_pytorch_version) == "25.01"
    assert known(s.host.container) == "docker"
    assert known(s.torch.version) == "2.6.0a0+ecf3bae40a"
    assert known(s.torch.cuda_version) == "12.8"
    assert "compute_120" in known(s.torch.cuda_arch_list)
    assert package(s, "torch").install_kind == "built from a local source directory"
    assert known(s.cudnn.version) == "9.7.0"
    assert [copy.origin for copy in s.cudnn.copies] == ["system"]
    assert known(s.cudnn.header_version) == "9.7.0"
    assert known(s.cuda.toolkit_version) == "12.8.0"
    assert known(s.transformer_engine.version).startswith("1.14.0+")
    assert s.environment.variables["NVIDIA_PYTORCH_VERSION"] == "25.01"
    _te_loads(s)


def wedged_driver(s: Snapshot) -> None:
    driver = s.driver
    for fact in (driver.cuda_version, driver.gpu_count, driver.visible_gpu_count):
        assert fact.state is FactState.UNKNOWN
        assert "did not answer" in fact.reason
    assert driver.nvml.state is FactState.UNKNOWN
    assert s.gpus == ()
    # The kernel module stays loaded when the GPUs wedge, so /proc still names the driver.
    assert known(driver.version) == "550.54.15"
    assert driver.version.source == "nvidia:/proc/driver/nvidia/version"
    assert any("nvidia-smi: did not answer" in line for line in driver.evidence)


def smoke_statuses(s: Snapshot) -> dict[str, str]:
    return {(c.name): c.status for c in s.smoke.checks}


def h100_smoke_verified(s: Snapshot) -> None:
    h100_cuda12_te_ok(s)
    assert known(s.smoke.outcome) == "ok"
    statuses = smoke_statuses(s)
    assert statuses["te-fp8-current"] == statuses["te-fp8-delayed"] == "ok"
    assert statuses["te-mxfp8"] == "skipped"  # TE refuses MXFP8 below compute capability 10.0
    assert known(s.smoke.torch_device_capability) == "9.0"


def h100_fp8_gemm_fails(s: Snapshot) -> None:
    assert known(s.smoke.outcome) == "failed" and known(s.smoke.stage) == "gemm"
    assert "CUBLAS_STATUS_NOT_SUPPORTED" in known(s.smoke.error_text)
    statuses = smoke_statuses(s)
    assert statuses["te-fp8-current"] == statuses["torch-fp8"] == "failed"
    assert statuses["te-bf16"] == "ok"


def l40s_no_te(s: Snapshot) -> None:
    assert known(s.gpus[0].compute_capability) == "8.9"
    assert s.transformer_engine.version.state is FactState.ABSENT
    assert smoke_statuses(s)["torch-fp8"] == "ok"
    assert smoke_statuses(s)["te-fp8-current"] == "skipped"


def no_gpu_laptop_smoke(s: Snapshot) -> None:
    no_gpu_laptop(s)
    assert known(s.smoke.torch_cuda_available) is False
    cpu = {c.name: c for c in s.smoke.checks if c.device == "cpu"}
    assert cpu["torch-fp8"].status == cpu["cpu"].status == "ok"


def _no_te_yet(s: Snapshot) -> None:
    assert s.transformer_engine.version.state is FactState.ABSENT
    assert not [p for p in s.packages.installed if p.name.startswith("transformer-engine")]


def _builds(s: Snapshot, cxx: str = "13.2.0") -> None:
    """A C++ compiler, ninja (pip), Python.h and cudnn.h: what compiling the extension needs."""
    assert known(s.build.cxx) == "/usr/bin/c++" and known(s.build.cxx_version) == cxx
    assert known(s.build.ninja_version) == "1.11.1"
    assert known(s.build.python_headers) is True and known(s.build.cudnn_headers) is True


def plan_h100_fresh(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA H100 80GB HBM3", "9.0", 81559)
    _no_te_yet(s)
    _builds(s)
    assert known(s.build.cmake_version) == "3.28.3" and known(s.build.cuda_headers) is True
    assert known(s.cuda.toolkit_version) == "12.8.0"
    assert known(s.torch.cuda_version) == "12.8"
    assert known(s.cudnn.version).startswith("9.10.2")  # below the 9.12 TE 2.20 demands
    assert known(package(s, "nvidia-cudnn-frontend").version) == "1.29.0"
    assert known(package(s, "pybind11").version) == "2.13.6"


def plan_cpu_torch_on_gpu_box(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA L40S", "8.9", 46068)
    _no_te_yet(s)
    _builds(s)
    assert known(s.torch.version) == "2.8.0+cpu"
    assert s.torch.cuda_version.state is FactState.ABSENT
    assert known(s.cuda.toolkit_version) == "12.8.0"


def plan_nvcc_11_8(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA A100-SXM4-80GB", "8.0", 81920)
    _no_te_yet(s)
    _builds(s, cxx="11.4.0")
    assert known(s.cuda.toolkit_version) == "11.8.0"
    assert known(s.cuda.toolkit_path) == "/usr/local/cuda-11.8"
    assert known(s.torch.cuda_version) == "12.1"


def plan_no_nvcc(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA A10G", "8.6", 23028)
    _no_te_yet(s)
    _builds(s)
    assert s.cuda.toolkit_version.state is FactState.ABSENT and s.cuda.toolkits == ()
    assert known(s.build.cuda_headers) is False and s.build.cmake_version.state is FactState.ABSENT
    # the build takes CUDA from PyTorch's wheels instead
    assert known(package(s, "nvidia-cuda-runtime-cu12").version) == "12.8.57"
    assert known(s.torch.cuda_version) == "12.8"


def plan_8gb_ram(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA GeForce RTX 3060", "8.6", 12288)
    _no_te_yet(s)
    _builds(s)
    assert known(s.host.memory_total_mib) == 7845 and known(s.host.cpu_count) == 8


def plan_old_driver_cu13(s: Snapshot) -> None:
    _all_gpus(s, "NVIDIA H100 80GB HBM3", "9.0", 81559)
    _no_te_yet(s)
    _builds(s)
    assert known(s.driver.version) == "550.54.15" and known(s.driver.cuda_version) == "12.4"
    assert s.torch.version.state is FactState.ABSENT
    assert not [p for p in s.packages.installed if p.name == "torch"]
    assert known(s.cuda.toolkit_version) == "12.4.1"
    assert known(s.cudnn.version).startswith("9.13.0")


def plan_no_gpu(s: Snapshot) -> None:
    assert s.driver.version.state is FactState.ABSENT and s.gpus == ()
    _no_te_yet(s)
    _builds(s)
    assert known(s.torch.version) == "2.7.0+cu128"
    assert s.cuda.toolkit_version.state is FactState.ABSENT


def _loaded(s: Snapshot) -> dict[str, Fact[str]]:
    return {lib.name: lib.resolved for lib in s.transformer_engine.loaded_at_import}


def _needed(s: Snapshot) -> dict[str, Fact[str]]:
    return {lib.name: lib.resolved for lib in s.transformer_engine.needed_libraries}


def te_2_20_stale_toolkit_cudnn(s: Snapshot) -> None:
    # TE 2.20's import opens the toolkit's cuDNN 9.1; torch links the pip 9.13 by DT_RPATH.
    assert "/usr/local/cuda" in known(_loaded(s)["libcudnn"])
    assert known(s.cudnn.version) == "9.1.0"
    assert known(s.torch.cudnn_version) == "9.13.0.50"
    assert known(package(s, "nvidia-cudnn-cu12").version) == "9.13.0.50"
    # TE found NVRTC and cuRAND in the toolkit: no pip preload; the core reuses torch's libs.
    assert known(s.transformer_engine.preloads_pip_cuda) is False
    assert _needed(s)["libcudnn.so.9"].source.startswith("transformer_engine:already loaded (Py")
    _te_loads(s)


def te_2_20_cudnn_home_on_pip(s: Snapshot) -> None:
    assert known(_loaded(s)["libcudnn"]).endswith("/nvidia/cudnn/lib/libcudnn.so.9")
    assert known(s.cudnn.version) == known(s.torch.cudnn_version) == "9.13.0.50"


def te_2_14_cu13_core_with_toolkit(s: Snapshot) -> None:
    assert known(s.transformer_engine.core_cuda_major) == 13
    assert known(s.transformer_engine.preloads_pip_cuda) is False
    missing = {n for n, f in _needed(s).items() if f.state is FactState.ABSENT}
    assert missing == {"libcublas.so.13", "libcublasLt.so.13", "libcudart.so.13"}
    assert known(package(s, "nvidia-cublas").version) == "13.0.2.14"  # installed, never loaded
    assert known(s.torch.runtime_version) == "12.8.90"


def te_2_3_pip_cudnn_only(s: Snapshot) -> None:
    assert s.environment.variables.get("LD_LIBRARY_PATH") is None
    missing = {n for n, f in _needed(s).items() if f.state is FactState.ABSENT}
    assert missing == {f"libcudnn_{part}.so.9" for part in CUDNN_9_PARTS}
    assert known(_loaded(s)["libcudnn"]).endswith("/nvidia/cudnn/lib/libcudnn.so.9")


def te_1_13_no_system_nvrtc(s: Snapshot) -> None:
    nvrtc = _loaded(s)["libnvrtc"]
    assert nvrtc.state is FactState.ABSENT and "grep 'libnvrtc'" in nvrtc.reason
    assert [c.origin for c in s.cuda.libraries if c.name == "nvrtc"] == ["pip"]
    assert s.cuda.toolkit_version.state is FactState.ABSENT


def ngc_h100_r535_cuda_compat(s: Snapshot) -> None:
    assert known(s.driver.version) == "535.161.08"
    assert known(s.driver.cuda_version) == "12.2"
    assert known(s.driver.libcuda_path) == "/usr/local/cuda/compat/lib/libcuda.so.1"
    assert known(s.driver.libcuda_version) == "580.82.07"
    assert s.driver.libcuda_path.source == "libcuda:LD_LIBRARY_PATH"
    assert known(s.torch.cuda_version) == "13.0"
    assert known(s.transformer_engine.core_cuda_major) == 13
    _te_loads(s)


TRUTHS: dict[str, Callable[[Snapshot], None]] = {
    "h100-cuda12-te-ok": h100_cuda12_te_ok,
    "a100": a100,
    "l40s-ada": l40s_ada,
    "rtx-4090": rtx_4090,
    "b200": b200,
    "v100": v100,
    "t4": t4,
    "no-gpu-laptop": no_gpu_laptop,
    "h100-mig": h100_mig,
    "driver-older-than-torch-cuda": driver_older_than_torch_cuda,
    "two-te-variants": two_te_variants,
    "ngc-container": ngc_container,
    "wedged-driver": wedged_driver,
    "h100-smoke-verified": h100_smoke_verified,
    "h100-fp8-gemm-fails": h100_fp8_gemm_fails,
    "l40s-no-te": l40s_no_te,
    "no-gpu-laptop-smoke": no_gpu_laptop_smoke,
    "plan-h100-fresh": plan_h100_fresh,
    "plan-cpu-torch-on-gpu-box": plan_cpu_torch_on_gpu_box,
    "plan-nvcc-11-8": plan_nvcc_11_8,
    "plan-no-nvcc": plan_no_nvcc,
    "plan-8gb-ram": plan_8gb_ram,
    "plan-old-driver-cu13": plan_old_driver_cu13,
    "plan-no-gpu": plan_no_gpu,
    "te-2-20-stale-toolkit-cudnn": te_2_20_stale_toolkit_cudnn,
    "te-2-20-cudnn-home-on-pip": te_2_20_cudnn_home_on_pip,
    "te-2-14-cu13-core-with-toolkit": te_2_14_cu13_core_with_toolkit,
    "te-2-3-pip-cudnn-only": te_2_3_pip_cudnn_only,
    "te-1-13-no-system-nvrtc": te_1_13_no_system_nvrtc,
    "ngc-h100-r535-cuda-compat": ngc_h100_r535_cuda_compat,
}


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_says_what_is_true_of_its_machine(slug: str) -> None:
    assert slug in TRUTHS, f"add the facts that define {slug} to TRUTHS"
    TRUTHS[slug](snapshot_of(slug))
