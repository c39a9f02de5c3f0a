"""Host and environment probes."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.probes.context import SystemInfo
from te_doctor.probes.environment import probe_environment
from te_doctor.probes.host import probe_host
from te_doctor.snapshot.facts import FactState
from tests.fakes import FakeMachine


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    return FakeMachine(tmp_path)


def test_plain_host(machine: FakeMachine) -> None:
    facts = probe_host(machine.context())
    assert facts.os_name.value == "Ubuntu 22.04.4 LTS"
    assert facts.glibc_version.value == "2.35"
    assert facts.memory_total_mib.value == 257678
    assert facts.container.state is FactState.ABSENT
    assert facts.wsl.value is False
    assert facts.ngc_pytorch_version.state is FactState.ABSENT
    assert facts.virtualenv.state is FactState.ABSENT


def test_ngc_container_slurm_and_kubernetes(machine: FakeMachine) -> None:
    machine.write("/.dockerenv")
    machine.env.update(
        NVIDIA_PYTORCH_VERSION="25.01", SLURM_JOB_ID="4242", KUBERNETES_SERVICE_HOST="10.0.0.1"
    )
    facts = probe_host(machine.context())
    assert facts.container.value == "docker"
    assert facts.ngc_pytorch_version.value == "25.01"
    assert facts.slurm_job_id.value == "4242"
    assert facts.kubernetes.value is True


def test_container_from_cgroup_and_wsl(machine: FakeMachine) -> None:
    machine.write("/proc/1/cgroup", "0::/kubepods/besteffort/pod1234\n")
    machine.write("/proc/version", "Linux version 5.15.153.1-microsoft-standard-WSL2\n")
    facts = probe_host(machine.context())
    assert facts.container.value == "kubepods"
    assert facts.wsl.value is True


def test_unreadable_files_become_unknown(machine: FakeMachine) -> None:
    for path in ("/etc/os-release", "/proc/meminfo", "/proc/version"):
        (machine.root / path.lstrip("/")).unlink()
    facts = probe_host(machine.context())
    assert facts.os_name.state is FactState.UNKNOWN
    assert facts.memory_total_mib.state is FactState.UNKNOWN
    assert facts.wsl.state is FactState.UNKNOWN


def test_garbage_files_become_unknown(machine: FakeMachine) -> None:
    machine.write("/etc/os-release", "\x00\x01 nonsense")
    machine.write("/proc/meminfo", "garbage")
    facts = probe_host(machine.context())
    assert facts.os_name.state is FactState.UNKNOWN
    assert facts.memory_total_mib.state is FactState.UNKNOWN


def test_musl_and_empty_system_answers(machine: FakeMachine) -> None:
    machine.system = SystemInfo(
        hostname="", user="", kernel="", machine="aarch64", cpu_count=0, libc=("", "")
    )
    facts = probe_host(machine.context())
    assert facts.glibc_version.state is FactState.UNKNOWN
    assert facts.hostname.state is FactState.UNKNOWN
    assert facts.cpu_count.state is FactState.UNKNOWN
    machine.system = SystemInfo(
        hostname="h", user="u", kernel="k", machine="x86_64", cpu_count=4, libc=("musl", "1.2")
    )
    assert probe_host(machine.context()).glibc_version.state is FactState.ABSENT


def test_venv_and_conda(machine: FakeMachine) -> None:
    machine.prefix = "/opt/conda/envs/train"
    machine.write("/opt/conda/envs/train/conda-meta/history")
    machine.env["CONDA_DEFAULT_ENV"] = "train"
    facts = probe_host(machine.context())
    assert facts.virtualenv.value == "/opt/conda/envs/train"
    assert facts.conda_env.value == "train"


def test_environment_keeps_relevant_variables_and_blanks_secrets(machine: FakeMachine) -> None:
    machine.env.update(
        NVTE_FUSED_ATTN="0",
        CUDA_VISIBLE_DEVICES="0,1",
        NCCL_DEBUG="INFO",
        HOME="/home/alice",
        HF_TOKEN="hf_abcdefghijklmnopqrstuvwxyz123456",
        NVTE_SECRET_KEY="hunter2hunter2",
    )
    variables = probe_environment(machine.context()).variables
    assert variables["NVTE_FUSED_ATTN"] == "0"
    assert variables["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert variables["NVTE_SECRET_KEY"] == "<redacted>"
    assert "HOME" not in variables and "HF_TOKEN" not in variables
