"""The NVIDIA probe's sources one by one: what NVML, nvidia-smi and /proc give, each failure as
a fact, and how the probe combines them (evidence, fallbacks, counts, visibility)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pynvml
import pytest

from te_doctor.probes import nvidia, nvml
from te_doctor.probes.commands import CommandResult
from te_doctor.probes.nvidia import probe_nvidia
from te_doctor.probes.nvidia_smi import SmiError, query_cuda_version, query_gpus, read_proc_version
from te_doctor.snapshot.facts import FactState
from tests.fakes import FakeGpu, FakeMachine, FakeNvml

H100 = "NVIDIA H100 80GB HBM3"
NO_DRIVER = "libnvidia-ml.so.1 not found: no NVIDIA driver installed here"
SMI_HEADER = "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4     |\n"


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    return FakeMachine(tmp_path)


def smi_row(index: int = 0, **cells: str) -> str:
    row = {
        "index": str(index),
        "name": "NVIDIA A100-SXM4-80GB",
        "uuid": f"GPU-{index}1111111-2222-3333-4444-555555555555",
        "cc": "8.0",
        "memory": "81920",
        "mig": "Disabled",
        "persistence": "Enabled",
        "bus": "00000000:07:00.0",
        "serial": "1322621000001",
        "driver": "535.104.05",
    }
    row.update(cells)
    return ", ".join(row.values()) + "\n"


def smi(machine: FakeMachine, rows: str, header: str = SMI_HEADER, returncode: int = 0) -> None:
    """nvidia-smi on PATH: ``--query-gpu`` prints ``rows``, plain ``nvidia-smi`` the header."""
    machine.executable("/usr/bin/nvidia-smi")

    def reply(argv: list[str]) -> CommandResult:
        out = rows if len(argv) > 1 else header
        return CommandResult(tuple(argv), returncode, out, "" if returncode == 0 else "failed")

    machine.runner.replies["nvidia-smi"] = reply  # type: ignore[assignment]


# --------------------------------------------------------------------------- NVML


@pytest.mark.parametrize(
    ("encoded", "version"), [(12040, "12.4"), (11080, "11.8"), (12090, "12.9"), (13000, "13.0")]
)
def test_nvml_cuda_version_is_decoded(machine: FakeMachine, encoded: int, version: str) -> None:
    machine.nvml = FakeNvml(cuda=encoded, gpus=[FakeGpu(H100, (9, 0))])
    assert probe_nvidia(machine.context()).driver.cuda_version.value == version


def test_nvml_reads_each_gpu_field(machine: FakeMachine) -> None:
    gpus = [
        FakeGpu(H100, (9, 0), memory_mib=81559, mig=(1, 1), persistence=0, bus_id="00:18"),
        FakeGpu("NVIDIA L4", (8, 9), memory_mib=23034, mig=(0, 0), serial="999"),
    ]
    machine.nvml = FakeNvml(driver="550.54.15", gpus=gpus)
    first, second = probe_nvidia(machine.context()).gpus
    assert (first.index, second.index) == (0, 1)
    assert (first.name.value, second.name.value) == (H100, "NVIDIA L4")
    assert (first.compute_capability.value, second.compute_capability.value) == ("9.0", "8.9")
    assert (first.memory_total_mib.value, second.memory_total_mib.value) == (81559, 23034)
    assert (first.mig_mode.value, second.mig_mode.value) == ("enabled", "disabled")
    assert (first.persistence_mode.value, second.persistence_mode.value) == (False, True)
    assert (first.pci_bus_id.value, second.serial.value) == ("00:18", "999")
    assert first.uuid.value == gpus[0].uuid
    assert first.name.source == "nvidia:nvml"


def test_nvml_bytes_are_text(machine: FakeMachine) -> None:
    class OldBindings(FakeNvml):
        def nvmlSystemGetDriverVersion(self) -> Any:  # noqa: N802
            return b"470.57.02"

        def nvmlDeviceGetName(self, gpu: FakeGpu) -> Any:  # noqa: N802
            return gpu.name.encode() + b"\xff"

    machine.nvml = OldBindings(gpus=[FakeGpu("Tesla T4", (7, 5))])
    result = probe_nvidia(machine.context())
    assert result.driver.version.value == "470.57.02"
    assert result.gpus[0].name.value == "Tesla T4\ufffd"


def test_a_per_gpu_query_that_fails_is_unknown_and_explained(machine: FakeMachine) -> None:
    class NoPermission(FakeNvml):
        def nvmlDeviceGetSerial(self, gpu: FakeGpu) -> str:  # noqa: N802
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NO_PERMISSION)

        def nvmlDeviceGetPciInfo(self, gpu: FakeGpu) -> Any:  # noqa: N802
            raise pynvml.NVMLError(pynvml.NVML_ERROR_UNKNOWN)

    machine.nvml = NoPermission(gpus=[FakeGpu(H100, (9, 0))])
    gpu = probe_nvidia(machine.context()).gpus[0]
    assert gpu.serial.state is FactState.UNKNOWN
    assert gpu.serial.reason == "NVML: no permission to access the GPU devices"
    assert gpu.pci_bus_id.state is FactState.UNKNOWN
    assert gpu.pci_bus_id.reason == "NVML: Unknown Error"
    assert gpu.mig_mode.state is FactState.ABSENT  # NOT_SUPPORTED: the GPU has no such thing
    assert gpu.mig_mode.reason == "not supported by this GPU"


@pytest.mark.parametrize(
    ("error", "reason", "library_missing"),
    [
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "NVML: " + NO_DRIVER, True),
        (
            pynvml.NVML_ERROR_DRIVER_NOT_LOADED,
            "NVML: the NVIDIA kernel driver is not loaded",
            False,
        ),
        (pynvml.NVML_ERROR_NO_PERMISSION, "NVML: no permission to access the GPU devices", False),
        (pynvml.NVML_ERROR_UNKNOWN, "NVML: Unknown Error", False),
    ],
)
def test_nvml_init_errors_are_explained(
    machine: FakeMachine, error: int, reason: str, library_missing: bool
) -> None:
    machine.nvml = FakeNvml(init_error=error)
    reading = nvml.read_nvml(machine.context().load_nvml, 5.0)
    assert reading.error.startswith(reason)
    assert reading.library_missing is library_missing
    assert (reading.timed_out, reading.gpus) == (False, ())


def test_a_driver_library_that_does_not_load_reads_as_no_driver() -> None:
    """te-doctor's loader raises this before importing the bindings when dlopen fails."""

    def load() -> object:
        raise nvml.NvmlLibraryMissing("libnvidia-ml.so.1: cannot open shared object file")

    reading = nvml.read_nvml(load, 5.0)
    assert reading.error.startswith("NVML: " + NO_DRIVER)
    assert reading.library_missing


def test_without_the_driver_library_the_bindings_are_not_imported(tmp_path: Path) -> None:
    """The real loader, on a machine whose loader path has no libnvidia-ml.so.1 (this one)."""
    code = (
        "import sys\n"
        "from te_doctor.probes import nvml, real\n"
        "try:\n"
        "    real._load_nvml()\n"
        "except nvml.NvmlLibraryMissing as exc:\n"
        "    print('missing', 'pynvml' in sys.modules, exc)\n"
    )
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        pytest.skip("this machine has an NVIDIA driver library")
    except OSError:
        pass
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.stdout.split()[:3] == ["missing", "False", "libnvidia-ml.so.1:"]


def test_nvml_version_mismatch_says_reboot(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH)
    reading = nvml.read_nvml(machine.context().load_nvml, 5.0)
    assert reading.error == (
        "NVML: Driver/library version mismatch: the driver was updated without reloading the "
        "kernel module (reboot)"
    )


def test_a_failing_nvml_shutdown_changes_nothing(machine: FakeMachine) -> None:
    class StickyShutdown(FakeNvml):
        def nvmlShutdown(self) -> None:  # noqa: N802
            raise pynvml.NVMLError(pynvml.NVML_ERROR_UNKNOWN)

    machine.nvml = StickyShutdown(gpus=[FakeGpu(H100, (9, 0))])
    reading = nvml.read_nvml(machine.context().load_nvml, 5.0)
    assert (reading.error, reading.driver_version, len(reading.gpus)) == ("", "550.54.15", 1)


def test_nvml_bindings_raising_anything_else_are_an_error_not_a_crash(
    machine: FakeMachine,
) -> None:
    class Buggy(FakeNvml):
        def nvmlSystemGetDriverVersion(self) -> str:  # noqa: N802
            raise AttributeError("no such symbol")

    machine.nvml = Buggy()
    assert nvml.read_nvml(machine.context().load_nvml, 5.0).error == (
        "AttributeError: no such symbol"
    )


def test_nvml_that_does_not_answer_says_how_long_it_waited(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(hang_s=2.0)
    reading = nvml.read_nvml(machine.context().load_nvml, 0.2)
    assert (reading.error, reading.timed_out) == ("NVML did not answer within 0.2 s", True)


# --------------------------------------------------------------------------- nvidia-smi, /proc


@pytest.mark.parametrize(
    ("text", "version", "line"),
    [
        (
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build\n",
            "560.35.03",
            "/proc/driver/nvidia/version: kernel module 560.35.03",
        ),
        (
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 UTC 2023\n",
            "535.104.05",
            "/proc/driver/nvidia/version: kernel module 535.104.05",
        ),
        ("garbage\n", "", "/proc/driver/nvidia/version: present but no version in it"),
    ],
)
def test_proc_version(machine: FakeMachine, text: str, version: str, line: str) -> None:
    machine.write("/proc/driver/nvidia/version", text)
    assert read_proc_version(machine.context()) == (version, line, True)  # the module is loaded


def test_proc_version_absent_or_unreadable(machine: FakeMachine) -> None:
    assert read_proc_version(machine.context()) == (
        "",
        "/proc/driver/nvidia/version: absent (no NVIDIA kernel module loaded)",
        False,
    )
    machine.write("/proc/driver/nvidia/version/inside", "a directory where a file should be")
    version, line, loaded = read_proc_version(machine.context())
    assert (version, loaded) == ("", True)  # unreadable, yet the module is there
    assert line.startswith("/proc/driver/nvidia/version: unreadable (")


def test_smi_rows_become_gpus(machine: FakeMachine) -> None:
    smi(machine, smi_row(0) + "\n" + smi_row(1, mig="Enabled", persistence="Disabled"))
    driver, gpus = query_gpus(machine.context(), 3.0)
    assert driver == "535.104.05"
    assert [g.index for g in gpus] == [0, 1]
    assert (gpus[0].compute_capability.value, gpus[0].memory_total_mib.value) == ("8.0", 81920)
    assert (gpus[0].mig_mode.value, gpus[1].mig_mode.value) == ("disabled", "enabled")
    assert (gpus[0].persistence_mode.value, gpus[1].persistence_mode.value) == (True, False)
    assert gpus[1].uuid.value == "GPU-11111111-2222-3333-4444-555555555555"
    assert (gpus[0].pci_bus_id.value, gpus[0].serial.value) == ("00000000:07:00.0", "1322621000001")
    assert gpus[0].name.source == "nvidia:nvidia-smi"
    argv = machine.runner.calls[0]
    assert argv[0] == "/usr/bin/nvidia-smi"
    assert argv[2] == "--format=csv,noheader,nounits"


@pytest.mark.parametrize("cell", ["[N/A]", "N/A", "[Not Supported]", "Not Supported", ""])
def test_smi_cells_not_available_are_absent(machine: FakeMachine, cell: str) -> None:
    smi(machine, smi_row(serial=cell, memory=cell))
    gpu = query_gpus(machine.context(), 3.0)[1][0]
    for fact in (gpu.serial, gpu.memory_total_mib):
        assert fact.state is FactState.ABSENT
        assert fact.reason == "nvidia-smi reports it as not available"


def test_smi_cells_that_do_not_convert_are_unknown(machine: FakeMachine) -> None:
    smi(machine, smi_row(memory="lots"))
    memory = query_gpus(machine.context(), 3.0)[1][0].memory_total_mib
    assert memory.state is FactState.UNKNOWN
    assert memory.reason == "nvidia-smi printed 'lots', not a valid value"


@pytest.mark.parametrize(
    ("rows", "preview"),
    [
        ("", "'(nothing)'"),
        ("0, NVIDIA A100, GPU-1\n", "'0, NVIDIA A100, GPU-1'"),
        (smi_row() + "oops\n", "'0, NVIDIA A100-SXM4-80GB"),
    ],
)
def test_smi_output_it_cannot_parse_is_an_error(
    machine: FakeMachine, rows: str, preview: str
) -> None:
    smi(machine, rows)
    with pytest.raises(SmiError) as raised:
        query_gpus(machine.context(), 3.0)
    assert str(raised.value).startswith("nvidia-smi: output te-doctor cannot parse: " + preview)
    assert (raised.value.returncode, raised.value.not_found) == (0, False)


def test_smi_failing_or_missing_is_an_error_with_its_code(machine: FakeMachine) -> None:
    with pytest.raises(SmiError) as missing:
        query_gpus(machine.context(), 3.0)
    assert missing.value.not_found
    assert machine.runner.calls[0][0] == "nvidia-smi"  # not on PATH: the bare name
    smi(machine, "", returncode=9)
    with pytest.raises(SmiError) as failing:
        query_gpus(machine.context(), 3.0)
    assert (failing.value.returncode, failing.value.not_found) == (9, False)


@pytest.mark.parametrize(
    ("header", "returncode", "state", "value"),
    [
        (SMI_HEADER, 0, FactState.KNOWN, "12.4"),
        ("| CUDA Version: N/A |\n", 0, FactState.UNKNOWN, None),
        (SMI_HEADER, 9, FactState.UNKNOWN, None),
    ],
)
def test_smi_header_cuda_version(
    machine: FakeMachine, header: str, returncode: int, state: FactState, value: str | None
) -> None:
    smi(machine, "", header=header, returncode=returncode)
    fact = query_cuda_version(machine.context(), 3.0)
    assert (fact.state, fact.value) == (state, value)
    if header != SMI_HEADER:
        assert fact.reason == "nvidia-smi header shows no CUDA Version"


# --------------------------------------------------------------------------- the probe


def test_nvml_evidence_and_facts(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(driver="550.54.15", gpus=[FakeGpu(H100, (9, 0))] * 2)
    machine.write("/dev/nvidiactl")
    machine.write(
        "/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX Kernel Module  550.54.15  x\n"
    )
    driver = probe_nvidia(machine.context()).driver
    assert driver.evidence == (
        "NVML: driver 550.54.15, 2 GPU(s)",
        "/proc/driver/nvidia/version: kernel module 550.54.15",
    )
    assert driver.kernel_module_version.value == "550.54.15"
    assert (driver.nvml.value, driver.nvml.source) == ("ok", "nvidia:nvml")
    assert (driver.gpu_count.value, driver.gpu_count.source) == (2, "nvidia:nvml")
    assert driver.visible_gpu_count.value == 2
    assert driver.version.source == "nvidia:nvml"
    unset = driver.visible_devices
    assert (unset.state, unset.reason) == (
        FactState.ABSENT,
        "CUDA_VISIBLE_DEVICES unset: every GPU is visible",
    )


def test_no_driver_is_absent_everywhere_with_the_evidence(machine: FakeMachine) -> None:
    driver = probe_nvidia(machine.context()).driver
    assert driver.evidence[1:] == (
        "nvidia-smi: not found",
        "/proc/driver/nvidia/version: absent (no NVIDIA kernel module loaded)",
        "/dev/nvidiactl: absent (no GPU device nodes)",
    )
    assert driver.version.reason == "no NVIDIA driver: " + "; ".join(driver.evidence)
    assert driver.cuda_version.state is FactState.ABSENT
    for count in (driver.gpu_count, driver.visible_gpu_count):
        assert (count.state, count.reason) == (
            FactState.ABSENT,
            "no NVIDIA driver, so no usable GPU",
        )
    # no driver at all: NVML is absent (TED204, "the driver does not answer", stays quiet)
    assert driver.nvml.state is FactState.ABSENT and NO_DRIVER in driver.nvml.reason
    assert driver.kernel_module_version.state is FactState.ABSENT


def test_nvidia_smi_fills_in_when_nvml_fails(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    smi(machine, smi_row(0) + smi_row(1))
    driver = probe_nvidia(machine.context()).driver
    assert driver.evidence[:2] == (
        "NVML: the NVIDIA kernel driver is not loaded",
        "nvidia-smi: driver 535.104.05, 2 GPU(s)",
    )
    assert (driver.version.value, driver.cuda_version.value) == ("535.104.05", "12.4")
    assert (driver.gpu_count.value, driver.gpu_count.source) == (2, "nvidia:nvidia-smi")
    nvml_fact = driver.nvml
    assert (nvml_fact.state, nvml_fact.reason) == (
        FactState.UNKNOWN,
        "NVML: the NVIDIA kernel driver is not loaded",
    )


def test_a_missing_nvidia_smi_after_another_nvml_error_is_unknown(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(init_error=pynvml.NVML_ERROR_NO_PERMISSION)
    driver = probe_nvidia(machine.context()).driver
    assert driver.version.state is FactState.UNKNOWN
    assert driver.version.reason == "nvidia-smi: not found"
    assert driver.gpu_count.state is FactState.UNKNOWN
    assert driver.gpu_count.reason == "nvidia-smi: not found"


def test_a_hung_nvml_is_not_followed_by_nvidia_smi(
    machine: FakeMachine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nvidia, "NVML_TIMEOUT_S", 0.2)
    machine.nvml = FakeNvml(hang_s=2.0)
    smi(machine, smi_row())
    driver = probe_nvidia(machine.context()).driver
    assert driver.evidence[:2] == (
        "NVML did not answer within 0.2 s",
        "nvidia-smi: not tried, NVML already hung on this driver",
    )
    assert driver.version.reason == "driver did not answer: NVML did not answer within 0.2 s"
    assert driver.version.source == "nvidia:nvml"
    assert not [call for call in machine.runner.calls if "nvidia-smi" in call[0]]


def test_visible_devices_are_recorded_with_their_source(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(gpus=[FakeGpu(H100, (9, 0))] * 2)
    machine.env["CUDA_VISIBLE_DEVICES"] = "1"
    result = probe_nvidia(machine.context())
    visible = result.driver.visible_devices
    assert (visible.value, visible.source) == ("1", "nvidia:env CUDA_VISIBLE_DEVICES")
    assert (result.driver.gpu_count.value, result.driver.visible_gpu_count.value) == (2, 1)
    assert [g.visible for g in result.gpus] == [False, True]


def test_a_mig_uuid_among_others_shows_only_mig_gpus(machine: FakeMachine) -> None:
    machine.nvml = FakeNvml(
        gpus=[FakeGpu(H100, (9, 0)), FakeGpu(H100, (9, 0), mig=(1, 1)), FakeGpu(H100, (9, 0))]
    )
    machine.env["CUDA_VISIBLE_DEVICES"] = "0, MIG-4f7c8e2a-1b3d-5e6f-8a9b-0c1d2e3f4a5b"
    assert [g.visible for g in probe_nvidia(machine.context()).gpus] == [False, True, False]


def test_a_lost_gpu_is_a_gpu_whose_every_fact_is_unknown_and_the_others_still_read() -> None:
    class OneLost(FakeNvml):
        def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:  # noqa: N802
            if index == 1:
                raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)
            return super().nvmlDeviceGetHandleByIndex(index)

    one_lost = OneLost(gpus=[FakeGpu(H100, (9, 0)), FakeGpu(H100, (9, 0))])
    reading = nvml.read_nvml(lambda: one_lost, 5.0)
    assert reading.error == ""
    first, lost = reading.gpus
    assert (first.index, first.name.value) == (0, H100)
    assert (lost.index, lost.visible) == (1, True)
    per_gpu = (
        "name",
        "uuid",
        "compute_capability",
        "memory_total_mib",
        "mig_mode",
        "persistence_mode",
        "pci_bus_id",
        "serial",
    )
    for name in per_gpu:
        fact = getattr(lost, name)
        assert (fact.state, fact.reason, fact.source) == (
            FactState.UNKNOWN,
            "NVML: GPU is lost",
            "nvidia:nvml",
        ), name


def test_an_unreadable_proc_file_is_a_driver_whose_version_is_unknown(
    machine: FakeMachine,
) -> None:
    machine.write("/proc/driver/nvidia/version/inside", "a directory where a file should be")
    driver = probe_nvidia(machine.context()).driver
    proc_line = driver.evidence[2]
    assert proc_line.startswith("/proc/driver/nvidia/version: unreadable (")
    source = "nvidia:/proc/driver/nvidia/version"
    assert (driver.version.state, driver.version.source) == (FactState.UNKNOWN, source)
    assert driver.version.reason == "; ".join(driver.evidence)
    module = driver.kernel_module_version
    assert (module.state, module.reason, module.source) == (FactState.UNKNOWN, proc_line, source)


@pytest.mark.parametrize(("modes", "shown"), [((1, 0), "enabled"), ((0, 1), "disabled")])
def test_mig_mode_is_the_current_one_not_the_pending_one(
    modes: tuple[int, int], shown: str
) -> None:
    reading = nvml.read_nvml(lambda: FakeNvml(gpus=[FakeGpu(H100, (9, 0), mig=modes)]), 5.0)
    assert reading.gpus[0].mig_mode.value == shown


def test_a_hung_nvml_is_left_in_a_daemon_thread_that_says_what_it_is() -> None:
    before = set(threading.enumerate())
    reading = nvml.read_nvml(lambda: FakeNvml(hang_s=1.0), 0.05)
    assert reading.timed_out
    (hung,) = [t for t in set(threading.enumerate()) - before if t.name == "te-doctor-nvml"]
    assert hung.daemon, "a wedged driver must not keep te-doctor from exiting"
    hung.join()


def test_an_nvml_error_on_one_field_is_that_field_unknown_in_nvml_s_words() -> None:
    class NoSerial(FakeNvml):
        def nvmlDeviceGetSerial(self, gpu: FakeGpu) -> str:  # noqa: N802
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NO_PERMISSION)

    serial = nvml.read_nvml(lambda: NoSerial(gpus=[FakeGpu(H100, (9, 0))]), 5.0).gpus[0].serial
    assert (serial.state, serial.source) == (FactState.UNKNOWN, "nvidia:nvml")
    assert serial.reason == "NVML: no permission to access the GPU devices"
