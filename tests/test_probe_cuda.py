"""CUDA and cuDNN probes: toolkits, runtime libraries and their copies, in every state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from te_doctor.probes.commands import CommandResult
from te_doctor.probes.cuda import probe_cuda
from te_doctor.probes.cudnn import probe_cudnn
from te_doctor.snapshot.facts import FactState
from tests.fakes import SITE, FakeMachine, ok

CUDNN_HEADER = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n"


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    return FakeMachine(tmp_path)


def add_toolkit(machine: FakeMachine, root: str, version: str) -> None:
    machine.write(
        f"{root}/version.json",
        json.dumps(
            {"cuda": {"version": version}, "cuda_cudart": {"version": f"{version[:4]}.127"}}
        ),
    )
    machine.executable(f"{root}/bin/nvcc")
    machine.write(f"{root}/include/cuda_runtime_api.h")
    machine.write(f"{root}/lib64/libcudart.so.{version.split('.')[0]}")


def test_no_toolkit_and_no_libraries(machine: FakeMachine) -> None:
    facts = probe_cuda(machine.context())
    assert facts.toolkit_version.state is FactState.ABSENT
    assert facts.runtime_version.state is FactState.ABSENT
    assert facts.toolkits == ()


def test_toolkit_from_version_json_and_its_runtime(machine: FakeMachine) -> None:
    add_toolkit(machine, "/usr/local/cuda-12.4", "12.4.1")
    machine.link("/usr/local/cuda", "cuda-12.4")
    facts = probe_cuda(machine.context())
    assert facts.toolkit_version.value == "12.4.1"
    assert facts.toolkit_path.value == "/usr/local/cuda"
    assert len(facts.toolkits) == 1  # the symlink and its target are one toolkit
    assert facts.runtime_version.value == "12.4.127"
    assert (
        "version.json" in facts.runtime_version.source or "toolkit" in facts.runtime_version.source
    )


def test_cuda_home_wins_and_several_toolkits_are_listed(machine: FakeMachine) -> None:
    add_toolkit(machine, "/usr/local/cuda-12.4", "12.4.1")
    add_toolkit(machine, "/opt/nvidia/cuda-12.8", "12.8.0")
    machine.env["CUDA_HOME"] = "/opt/nvidia/cuda-12.8"
    facts = probe_cuda(machine.context())
    assert facts.toolkit_version.value == "12.8.0"
    assert facts.toolkits[0].found_by == "CUDA_HOME"
    assert {t.version.value for t in facts.toolkits} == {"12.4.1", "12.8.0"}


def test_toolkit_version_from_nvcc_when_no_version_file(machine: FakeMachine) -> None:
    machine.executable("/usr/local/cuda/bin/nvcc")
    machine.runner.replies["nvcc"] = ok("Cuda compilation tools, release 12.1, V12.1.105\n")
    facts = probe_cuda(machine.context())
    assert facts.toolkit_version.value == "12.1.105"
    assert facts.toolkit_version.source == "cuda:nvcc --version"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (CommandResult(("nvcc",), 124, "", "no answer after 5.0 s"), "did not answer"),
        (CommandResult(("nvcc",), 1, "", "nvcc fatal: bad install"), "exit 1"),
        (ok("garbage"), "no release line"),
        (CommandResult(("nvcc",), 127, "", "not found"), "nvcc: not found"),
    ],
)
def test_nvcc_hang_failure_or_garbage_is_unknown(
    machine: FakeMachine, reply: CommandResult, reason: str
) -> None:
    machine.executable("/usr/local/cuda/bin/nvcc")
    machine.runner.replies["nvcc"] = reply
    facts = probe_cuda(machine.context())
    assert facts.toolkit_version.state is FactState.UNKNOWN
    assert reason in facts.toolkit_version.reason


def test_runtime_only_toolkit_has_no_nvcc(machine: FakeMachine) -> None:
    machine.write("/usr/local/cuda/version.json", json.dumps({"cuda": {"version": "12.2.2"}}))
    facts = probe_cuda(machine.context())
    assert facts.toolkits[0].nvcc.state is FactState.ABSENT


def test_pip_runtime_wins_over_system_and_versions_come_from_wheels(machine: FakeMachine) -> None:
    add_toolkit(machine, "/usr/local/cuda", "12.2.2")
    machine.write(f"{SITE}/nvidia/cuda_runtime/lib/libcudart.so.12")
    machine.add_dist("nvidia-cuda-runtime-cu12", "12.4.127")
    machine.write(f"{SITE}/nvidia/cublas/lib/libcublasLt.so.12")
    machine.add_dist("nvidia-cublas-cu12", "12.4.5.8")
    facts = probe_cuda(machine.context())
    assert facts.runtime_version.value == "12.4.127"
    assert "pip" in facts.runtime_version.source
    assert facts.cublas_version.value == "12.4.5.8"
    assert [c.origin for c in facts.libraries if c.name == "cudart"] == [
        "pip",
        "toolkit /usr/local/cuda",
    ]


def test_system_libraries_from_the_loader_cache(machine: FakeMachine) -> None:
    machine.write("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7")
    machine.link("/usr/lib/x86_64-linux-gnu/libcudnn.so.8", "libcudnn.so.8.9.7")
    machine.executable("/sbin/ldconfig")
    machine.runner.replies["ldconfig"] = ok(
        "2 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8\n"
    )
    facts = probe_cudnn(machine.context())
    assert facts.version.value == "8.9.7"
    assert [c.origin for c in facts.copies] == ["system"]


@pytest.mark.parametrize(
    "reply",
    [
        CommandResult(("ldconfig",), 124, "", "no answer"),
        CommandResult(("ldconfig",), 127, "", "not found"),
        ok("\x00\x01 garbage with no arrows\n"),
    ],
    ids=["hangs", "missing", "garbage"],
)
def test_ldconfig_failure_falls_back_to_standard_dirs(
    machine: FakeMachine, reply: CommandResult
) -> None:
    machine.write("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0")
    machine.runner.replies["ldconfig"] = reply
    context = machine.context()
    assert probe_cudnn(context).version.value == "9.1.0"
    notes = probe_cuda(context).library_search_notes
    assert notes == (() if reply.ok else (f"system loader cache not read: {reply.describe()}",))


def test_two_cudnn_copies_with_different_versions(machine: FakeMachine) -> None:
    machine.write(f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9")
    machine.add_dist("nvidia-cudnn-cu12", "9.1.0.70")
    machine.write("/opt/cudnn/lib/libcudnn.so.8.9.2")
    machine.env["LD_LIBRARY_PATH"] = "/opt/cudnn/lib"
    facts = probe_cudnn(machine.context())
    assert facts.version.value == "9.1.0.70"  # the pip wheel comes first
    assert facts.distinct_versions == ("8.9.2", "9.1.0.70")
    assert [c.origin for c in facts.copies] == ["pip", "LD_LIBRARY_PATH"]


def test_cudnn_header_version_and_a_broken_header(machine: FakeMachine) -> None:
    machine.write("/usr/include/cudnn_version.h", CUDNN_HEADER)
    assert probe_cudnn(machine.context()).header_version.value == "9.1.0"
    machine.write("/usr/include/cudnn_version.h", "garbage\n")
    assert probe_cudnn(machine.context()).header_version.state is FactState.UNKNOWN


def test_cudnn_absent(machine: FakeMachine) -> None:
    facts = probe_cudnn(machine.context())
    assert facts.version.state is FactState.ABSENT
    assert facts.header_version.state is FactState.ABSENT
    assert facts.copies == ()


def test_cudnn_under_cudnn_path_is_found_like_te_finds_it(machine: FakeMachine) -> None:
    machine.write("/opt/cudnn-9.5/lib/libcudnn.so.9.5.1")
    machine.env["CUDNN_PATH"] = "/opt/cudnn-9.5"
    facts = probe_cudnn(machine.context())
    assert facts.version.value == "9.5.1"
    assert facts.copies[0].origin == "CUDNN_PATH"


# --------------------------------------------------------------------------- toolkit sources


@pytest.mark.parametrize(
    ("env", "found_by"),
    [
        ({"CUDA_HOME": "/opt/cuda-12.6/"}, "CUDA_HOME"),
        ({"CUDA_PATH": "/opt/cuda-12.6"}, "CUDA_PATH"),
        ({"PATH": "/opt/cuda-12.6/bin:/usr/bin"}, "nvcc on PATH"),
    ],
)
def test_how_a_toolkit_was_found_is_recorded(
    machine: FakeMachine, env: dict[str, str], found_by: str
) -> None:
    add_toolkit(machine, "/opt/cuda-12.6", "12.6.2")
    add_toolkit(machine, "/usr/local/cuda", "12.4.1")
    machine.env.update(env)
    facts = probe_cuda(machine.context())
    assert [(t.path, t.found_by) for t in facts.toolkits] == [
        ("/opt/cuda-12.6", found_by),
        ("/usr/local/cuda", "default location"),
    ]
    assert facts.toolkit_path.value == "/opt/cuda-12.6"
    assert facts.toolkit_path.source == f"cuda:{found_by}"
    assert facts.toolkit_version.value == "12.6.2"
    assert facts.toolkits[0].nvcc.value == "/opt/cuda-12.6/bin/nvcc"


def test_no_toolkit_says_where_it_looked(machine: FakeMachine) -> None:
    facts = probe_cuda(machine.context())
    for fact in (facts.toolkit_version, facts.toolkit_path):
        assert fact.reason == (
            "no CUDA toolkit: CUDA_HOME/CUDA_PATH unset, no nvcc on PATH, no /usr/local/cuda*"
        )
    assert facts.runtime_version.reason.startswith("no CUDA runtime (libcudart) found in pip")


@pytest.mark.parametrize(
    ("files", "version", "source"),
    [
        ({"version.json": '{"cuda": {"version": "12.8.0"}}'}, "12.8.0", "version.json"),
        ({"version.txt": "CUDA Version 11.8.89\n"}, "11.8.89", "version.txt"),
        (
            {"version.json": '{"cuda": {}}', "version.txt": "CUDA Version 11.8.89\n"},
            "11.8.89",
            "version.txt",
        ),
        (
            {"dist-info/nvidia_cuda_nvcc-12.9.86.dist-info/METADATA": ""},
            "12.9.86",
            "dist-info/nvidia_cuda_nvcc-12.9.86.dist-info",
        ),
    ],
)
def test_toolkit_version_sources_in_order(
    machine: FakeMachine, files: dict[str, str], version: str, source: str
) -> None:
    for name, text in files.items():
        machine.write(f"/usr/local/cuda/{name}", text)
    facts = probe_cuda(machine.context())
    assert facts.toolkit_version.value == version
    assert facts.toolkit_version.source == f"cuda:/usr/local/cuda/{source}"
    nvcc = facts.toolkits[0].nvcc
    assert nvcc.state is FactState.ABSENT
    assert nvcc.reason == "/usr/local/cuda/bin/nvcc does not exist (runtime-only install)"


def test_a_toolkit_with_no_version_anywhere_is_unknown(machine: FakeMachine) -> None:
    machine.write("/usr/local/cuda/version.txt", "no version here\n")
    facts = probe_cuda(machine.context())
    assert facts.toolkit_version.state is FactState.UNKNOWN
    assert facts.toolkit_version.reason == (
        "no version.json, version.txt or nvcc in /usr/local/cuda"
    )


def test_cudnn_copies_are_left_to_the_cudnn_probe(machine: FakeMachine) -> None:
    add_toolkit(machine, "/usr/local/cuda", "12.4.1")
    machine.write("/usr/local/cuda/lib64/libcudnn.so.9")
    names = {c.name for c in probe_cuda(machine.context()).libraries}
    assert "cudart" in names and "cudnn" not in names
