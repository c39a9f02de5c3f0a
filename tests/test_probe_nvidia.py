"""NVIDIA probe: NVML, its fallbacks, every failure state, CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

import time
from pathlib import Path

import pynvml
import pytest

from te_doctor.probes import nvidia, nvml
from te_doctor.probes.commands import CommandResult
from te_doctor.probes.nvidia import probe_nvidia, visible_indices
from te_doctor.snapshot.facts import FactState
from tests.fakes import FakeGpu, FakeMachine, FakeNvml, ok

H100 = "NVIDIA H100 80GB HBM3"
SMI_ROW = (
    "0, NVIDIA A100-SXM4-80GB, GPU-11111111-2222-3333-4444-555555555555, 8.0, 81920, "
    "Disabled, Enabled, 00000000:07:00.0, 1322621000001, 535.104.05\n"
)
SMI_HEADER = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    return FakeMachine(tmp_path)


def smi_reply(query_out: str, header_out: str = SMI_HEADER) -> object:
    def reply(argv: list[str]) -> CommandResult:
        return ok(query_out if len(argv) > 1 else header_out, argv)

    return reply


def test_nvml_ok_reads_driver_and_every_gpu(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(driver="550.54.15", cuda=12040, gpus=[FakeGpu(H100, (9, 0))] * 2)
    result = probe_nvidia(machine.context())
    assert result.driver.version.value == "550.54.15"
    assert result.driver.cuda_version.value == "12.4"
    assert result.driver.gpu_count.value == 2
    assert result.gpus[1].compute_capability.value == "9.0"
    assert result.gpus[0].memory_total_mib.value == 81559
    assert result.gpus[0].mig_mode.state is FactState.ABSENT  # NOT_SUPPORTED on this GPU
    assert result.driver.nvml.value == "ok"
    assert not [c for c in machine.runner.calls if "nvidia-smi" in c[0]]  # not needed


def test_unsupported_per_gpu_query_is_absent_not_an_error(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(gpus=[FakeGpu("NVIDIA GeForce RTX 4090", (8, 9), serial=None)])
    gpu = probe_nvidia(machine.context()).gpus[0]
    assert gpu.serial.state is FactState.ABSENT
    assert gpu.name.value == "NVIDIA GeForce RTX 4090"


def test_no_driver_anywhere_is_absent_with_the_evidence(machine: FakeMachine) -> None:
    driver = probe_nvidia(machine.context()).driver
    assert driver.version.state is FactState.ABSENT
    assert "libnvidia-ml.so.1 not found" in driver.version.reason
    assert "nvidia-smi: not found" in driver.version.reason
    assert "/proc/driver/nvidia/version: absent" in driver.version.reason
    assert driver.gpu_count.state is FactState.ABSENT


def test_nvml_failure_falls_back_to_nvidia_smi(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH)
    machine.executable("/usr/bin/nvidia-smi")
    machine.runner.replies["nvidia-smi"] = smi_reply(SMI_ROW)  # type: ignore[assignment]
    result = probe_nvidia(machine.context())
    assert result.driver.version.value == "535.104.05"
    assert result.driver.version.source == "nvidia:nvidia-smi"
    assert result.driver.cuda_version.value == "12.2"
    assert result.gpus[0].name.value == "NVIDIA A100-SXM4-80GB"
    assert result.gpus[0].compute_capability.value == "8.0"
    assert result.gpus[0].mig_mode.value == "disabled"
    assert result.gpus[0].persistence_mode.value is True
    assert "version mismatch" in result.driver.nvml.reason


def test_nvidia_smi_garbage_is_unknown_with_a_preview(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_UNKNOWN)
    machine.runner.replies["nvidia-smi"] = ok("Segmentation fault\n")
    driver = probe_nvidia(machine.context()).driver
    assert driver.version.state is FactState.UNKNOWN
    assert "cannot parse" in driver.version.reason and "Segmentation" in driver.version.reason


def test_nvidia_smi_timeout_is_driver_did_not_answer(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_UNKNOWN)
    machine.runner.replies["nvidia-smi"] = CommandResult(("nvidia-smi",), 124, "", "no answer")
    driver = probe_nvidia(machine.context()).driver
    assert driver.version.state is FactState.UNKNOWN
    assert driver.version.reason.startswith("driver did not answer")
    assert driver.gpu_count.state is FactState.UNKNOWN


def test_nvidia_smi_failing_exit_code_is_unknown(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_UNKNOWN)
    machine.runner.replies["nvidia-smi"] = CommandResult(
        ("nvidia-smi",), 9, "NVIDIA-SMI has failed because it couldn't communicate", ""
    )
    driver = probe_nvidia(machine.context()).driver
    assert driver.version.state is FactState.UNKNOWN
    assert "exit 9" in driver.version.reason


def test_kernel_module_version_from_proc_when_tools_fail(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    machine.write(
        "/proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build\n",
    )
    driver = probe_nvidia(machine.context()).driver
    assert driver.kernel_module_version.value == "560.35.03"
    assert driver.version.value == "560.35.03"
    assert driver.version.source.endswith("/proc/driver/nvidia/version")


def test_nvml_that_hangs_costs_the_timeout_not_forever(
    machine: FakeMachine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nvidia, "NVML_TIMEOUT_S", 0.3)
    machine.nvml = FakeNvml(hang_s=5.0)
    started = time.monotonic()
    driver = probe_nvidia(machine.context()).driver
    assert time.monotonic() - started < 2.0
    assert driver.version.state is FactState.UNKNOWN
    assert "did not answer" in driver.version.reason
    assert driver.nvml.state is FactState.UNKNOWN and "did not answer" in driver.nvml.reason
    assert not [c for c in machine.runner.calls if "nvidia-smi" in c[0]]  # it would hang too


def test_real_hanging_nvidia_smi_costs_a_few_seconds(
    machine: FakeMachine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """End to end with the real runner: a wedged nvidia-smi is killed at the timeout."""
    from te_doctor.probes.commands import run_command

    monkeypatch.setattr(nvidia, "SMI_TIMEOUT_S", 1.0)
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_UNKNOWN)
    bin_dir = tmp_path / "realbin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\nsleep 60\n")
    smi.chmod(0o755)
    context = machine.context()
    context = type(context)(
        run=run_command,
        env={"PATH": str(bin_dir)},
        root=Path("/"),
        system=context.system,
        python=context.python,
        distributions=context.distributions,
        load_nvml=context.load_nvml,
    )
    started = time.monotonic()
    driver = probe_nvidia(context).driver
    assert time.monotonic() - started < 4.0
    assert "driver did not answer" in driver.version.reason


def test_nvidia_ml_py_missing_is_reported(machine: FakeMachine) -> None:
    machine.nvml = ImportError("No module named 'pynvml'")
    driver = probe_nvidia(machine.context()).driver
    assert "nvidia-ml-py is not importable" in driver.nvml.reason


def test_nvml_raising_mid_way_is_unknown(machine: FakeMachine) -> None:
    class Broken(FakeNvml):
        def nvmlDeviceGetCount(self) -> int:  # noqa: N802
            raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)

    machine.nvml = Broken()
    reading = nvml.read_nvml(machine.context().load_nvml, 1.0)
    assert reading.error == "NVML: GPU is lost"
    machine.executable("/usr/bin/nvidia-smi")
    machine.runner.replies["nvidia-smi"] = CommandResult(("nvidia-smi",), 124, "", "no answer")
    driver = probe_nvidia(machine.context()).driver
    assert driver.nvml.state is FactState.UNKNOWN and driver.nvml.reason == "NVML: GPU is lost"
    for fact in (driver.version, driver.cuda_version, driver.gpu_count, driver.visible_gpu_count):
        assert fact.state is FactState.UNKNOWN, fact
        assert fact.reason == "driver did not answer: nvidia-smi: did not answer (no answer)"
    assert "NVML: GPU is lost" in driver.evidence


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (None, [0, 1, 2, 3]),
        ("", []),
        ("-1", []),
        ("2,0", [2, 0]),
        ("1,7,2", [1]),  # stops at the first invalid entry, like the CUDA runtime
        ("1,1", [1]),
        ("GPU-bbbb", [1]),
        ("GPU-", []),  # ambiguous prefix
        ("nonsense", []),
    ],
)
def test_visible_indices_follow_cuda_rules(spec: str | None, expected: list[int]) -> None:
    uuids = [f"GPU-{c * 4}-0000" for c in "abcd"]
    assert visible_indices(spec, uuids) == expected


def test_visible_devices_hide_gpus(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(
        gpus=[
            FakeGpu(H100, (9, 0), uuid=f"GPU-{i}0000000-0000-0000-0000-000000000000")
            for i in range(4)
        ]
    )
    machine.env["CUDA_VISIBLE_DEVICES"] = "3,1"
    result = probe_nvidia(machine.context())
    assert [g.visible for g in result.gpus] == [False, True, False, True]
    assert result.driver.visible_gpu_count.value == 2
    assert result.driver.visible_devices.value == "3,1"


def test_mig_instance_uuid_makes_the_mig_gpu_visible(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(gpus=[FakeGpu(H100, (9, 0), mig=(1, 1)), FakeGpu(H100, (9, 0))])
    machine.env["CUDA_VISIBLE_DEVICES"] = "MIG-4f7c8e2a-1b3d-5e6f-8a9b-0c1d2e3f4a5b"
    result = probe_nvidia(machine.context())
    assert result.gpus[0].mig_mode.value == "enabled"
    assert [g.visible for g in result.gpus] == [True, False]
