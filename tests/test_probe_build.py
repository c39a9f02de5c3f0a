"""Build probe: compiler, cmake, ninja and headers, in every state."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.probes.build import probe_build
from te_doctor.probes.commands import CommandResult
from te_doctor.snapshot.facts import FactState
from tests.fakes import FakeMachine, ok


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    return FakeMachine(tmp_path)


def test_a_complete_build_host(machine: FakeMachine) -> None:
    for tool in ("c++", "cmake", "ninja"):
        machine.executable(f"/usr/bin/{tool}")
    machine.runner.replies.update(
        {
            "c++": ok("c++ (Ubuntu 13.2.0-23ubuntu4) 13.2.0\nCopyright ...\n"),
            "cmake": ok("cmake version 3.28.3\n"),
            "ninja": ok("1.11.1\n"),
        }
    )
    machine.write("/usr/include/python3.12/Python.h")
    machine.write("/usr/local/cuda/include/cuda_runtime_api.h")
    machine.write("/usr/include/cudnn.h")
    facts = probe_build(machine.context())
    assert facts.cxx.value == "/usr/bin/c++"
    assert facts.cxx_version.value == "13.2.0"
    assert facts.cmake_version.value == "3.28.3" and facts.ninja_version.value == "1.11.1"
    assert facts.python_headers.value is True
    assert facts.cuda_headers.value is True and facts.cudnn_headers.value is True


def test_nothing_installed(machine: FakeMachine) -> None:
    facts = probe_build(machine.context())
    assert facts.cxx.state is FactState.ABSENT
    assert facts.cmake_version.state is FactState.ABSENT
    assert facts.python_headers.value is False
    assert facts.cuda_headers.value is False and facts.cudnn_headers.value is False


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (CommandResult(("cmake",), 124, "", "no answer after 5.0 s"), "did not answer"),
        (CommandResult(("cmake",), 1, "", "cmake: error while loading shared libraries"), "exit 1"),
        (ok("garbage without digits"), "no version"),
    ],
)
def test_a_tool_that_hangs_fails_or_prints_garbage(
    machine: FakeMachine, reply: CommandResult, reason: str
) -> None:
    machine.executable("/usr/bin/cmake")
    machine.runner.replies["cmake"] = reply
    facts = probe_build(machine.context())
    assert facts.cmake_version.state is FactState.UNKNOWN
    assert reason in facts.cmake_version.reason


def test_cxx_from_the_environment(machine: FakeMachine) -> None:
    machine.executable("/opt/gcc-11/bin/g++")
    machine.env["CXX"] = "/opt/gcc-11/bin/g++"
    machine.runner.replies["g++"] = ok("g++ (GCC) 11.4.0\n")
    facts = probe_build(machine.context())
    assert facts.cxx.value == "/opt/gcc-11/bin/g++" and facts.cxx_version.value == "11.4.0"


def test_cudnn_headers_from_the_pip_wheel(machine: FakeMachine) -> None:
    machine.write("/usr/lib/python3/site-packages/nvidia/cudnn/include/cudnn.h")
    assert probe_build(machine.context()).cudnn_headers.value is True
