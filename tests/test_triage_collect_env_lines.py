"""collect_env's ``GCC version`` and ``cuDNN version`` lines as machines print them, one value at
a time.

Written from the survivors of mutation testing (group triage-parsers); whole collect_env reports
are tested in ``tests/test_triage_parsers.py``.
"""

from __future__ import annotations

import pytest

from te_doctor.triage import parse_collect_env
from te_doctor.triage.parse_common import prepare
from te_doctor.triage.parsers import parse_report

REPORT = """PyTorch version: 2.6.0+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
GCC version: {gcc}
Python version: 3.12.3 (main, Nov  6 2024, 18:32:19) [GCC 13.2.0] (64-bit runtime)
Is CUDA available: True
"""


@pytest.mark.parametrize(
    ("gcc", "version"),
    [
        ("(Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0", "9.4.0"),
        ("(GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)", "11.4.1"),
        ("(Debian 12.2.0-14) 12.2.0", "12.2.0"),
        ("gcc (GCC) 8.5.0 20210514", "8.5.0"),
        ("Could not collect", None),
    ],
)
def test_the_gcc_line(gcc: str, version: str | None) -> None:
    facts = parse_report(REPORT.format(gcc=gcc)).facts
    assert facts.get("build.cxx_version") == version
    assert facts.get("build.cxx") == ("gcc" if version else None)
    assert facts["torch.version"] == "2.6.0+cu124"  # the rest of the report is still read


CUDNN_REPORT = """PyTorch version: 2.6.0+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
cuDNN version: {cudnn}
HIP runtime version: N/A
"""


@pytest.mark.parametrize(
    ("cudnn", "version", "distinct"),
    [
        ("9.1.0", "9.1.0", None),
        ("8.9.7.29", "8.9.7.29", None),
        ("9", None, None),  # a bare major is not a release
        ("Could not collect", None, None),
        ("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0", "9.1.0", None),
        (
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n"
            "/usr/lib/libcudnn_ops_infer.so.8.9.7\n/usr/lib/libcudnn_adv_train.so.8.9.7",
            "8.9.7",
            None,
        ),
        (  # two patch releases of one minor: which loads is not said
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n/opt/libcudnn.so.8.9.2",
            None,
            None,
        ),
        (  # two releases: two copies
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n/opt/libcudnn.so.9.1.0",
            None,
            2,
        ),
        (  # a bare major of another release counts as one more
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n/opt/libcudnn.so.9",
            None,
            2,
        ),
        (  # a bare major of the same release is that release
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n/usr/lib/libcudnn.so.8",
            "8.9.7",
            None,
        ),
        (
            "Probably one of the following:\nC:\\cuda\\cudnn64_8.dll\nC:\\x\\cudnn_ops64_9.dll",
            None,
            2,
        ),
        ("Probably one of the following:\nC:\\cuda\\bin\\cudnn64_9.dll", None, None),
        (  # the longest spelling of the one release is kept
            "Probably one of the following:\n/lib/libcudnn.so.8.9.7\n/lib/libcudnn.so.8.9.7.29",
            "8.9.7.29",
            None,
        ),
    ],
)
def test_the_cudnn_line(cudnn: str, version: str | None, distinct: int | None) -> None:
    facts = parse_report(CUDNN_REPORT.format(cudnn=cudnn)).facts
    assert facts.get("cudnn.version") == version
    assert facts.get("cudnn.distinct_versions") == distinct
    assert facts["torch.version"] == "2.6.0+cu124"


def test_a_cudnn_file_list_at_the_end_of_the_paste_states_no_version() -> None:
    """The paste may end inside the list, hiding another release; the next key ends it."""
    text = "PyTorch version: 2.6.0\nIs debug build: False\ncuDNN version: Probably one of the "
    text += "following:\n/usr/lib/libcudnn.so.8.9.7\n/usr/lib/libcudnn_ops.so.8.9.7\n"
    assert "cudnn.version" not in parse_report(text).facts
    ended = parse_report(text + "HIP runtime version: N/A\n").facts
    assert ended["cudnn.version"] == "8.9.7"


def facts_of(text: str) -> dict[str, object]:
    return dict(parse_report(text).facts)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            "[pip3] torch==2.6.0\n[pip3] triton==3.2.0\n",
            {"packages.torch": "2.6.0", "packages.triton": "3.2.0"},
        ),
        ("[pip] numpy==1.26.4\n", {"packages.numpy": "1.26.4"}),
        (
            "[conda] pytorch    2.5.1    py3.11_cuda12.4_0    pytorch\n",
            {"packages.pytorch": "2.5.1"},
        ),
        ("[PIP3] torch==2.6.0\n", {}),  # collect_env writes the brackets in lower case
        ("[CONDA] pytorch    2.5.1    py3.11_cuda12.4_0    pytorch\n", {}),
    ],
)
def test_versions_of_relevant_libraries_alone(lines: str, expected: dict[str, object]) -> None:
    """A paste of only collect_env's package lines, without its keys, still gives versions."""
    found = parse_collect_env.parse(prepare(lines))
    assert {o.path: o.value for o in found.observations} == expected
    assert found.formats == (["collect_env"] if expected else [])


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Nvidia driver version: 550.54.15\ncuDNN version: 9.1.0\n", True),  # no PyTorch line
        ("cuDNN version: 9.1.0\nHIP runtime version: N/A\n", True),
        ("Is debug build: False\nCUDA used to build PyTorch: 12.4\n", False),  # no anchor key
        ("PyTorch version: 2.6.0\nOS: Ubuntu 22.04.4 LTS (x86_64)\n", False),  # one strong key
        ("PyTorch version: 2.6.0\nIs debug build: False\n", True),  # two
        ("MyPyTorch version: 2.6.0\nXcuDNN version: 9.1.0\n", False),  # keys inside words
    ],
)
def test_what_makes_a_collect_env_report(text: str, read: bool) -> None:
    assert ("collect_env" in parse_report(text).formats) is read


def test_a_report_starting_at_its_first_key_and_a_reflowed_one() -> None:
    assert facts_of("PyTorch version: 2.6.0\nIs debug build: False\n")["torch.version"] == "2.6.0"
    reflowed = "PyTorch version: 2.6.0 Is debug build: False CUDA used to build PyTorch: 12.4\n"
    facts = facts_of(reflowed)
    assert (facts["torch.version"], facts["torch.cuda_version"]) == ("2.6.0", "12.4")


def test_a_value_the_paste_cuts_is_dropped_with_its_line() -> None:
    text = "PyTorch version: 2.6.0\nIs debug build: False\nNvidia driver version: 550.5"
    assert "driver.version" not in facts_of(text)
    assert facts_of(text + "4.15\n")["driver.version"] == "550.54.15"


@pytest.mark.parametrize(
    ("cmake", "version"),
    [
        ("version 3.28.1", "3.28.1"),
        ("version 3", None),
        ("version", None),
        ("Could not collect", None),
        ("3.28.1", None),  # collect_env always writes "version X"
    ],
)
def test_the_cmake_line(cmake: str, version: str | None) -> None:
    assert (
        facts_of(REPORT.format(gcc="(GCC) 11.4.1") + f"CMake version: {cmake}\n").get(
            "build.cmake_version"
        )
        == version
    )


@pytest.mark.parametrize(
    ("platform", "wsl"),
    [
        ("Linux-5.15.153.1-microsoft-standard-WSL2-x86_64-with-glibc2.35", True),
        ("Linux-6.8.0-45-generic-x86_64-with-glibc2.39", False),
        ("Windows-10-10.0.22631-SP0", False),
        ("macOS-14.5-arm64-arm-64bit", False),
        ("Darwin-23.5.0-arm64", False),
        ("Could not collect", None),
    ],
)
def test_the_python_platform_line(platform: str, wsl: bool | None) -> None:
    text = REPORT.format(gcc="(GCC) 11.4.1") + f"Python platform: {platform}\n"
    assert facts_of(text).get("host.wsl") == wsl


@pytest.mark.parametrize(
    ("gpus", "count"),
    [
        ("\nGPU 0: NVIDIA H100 80GB HBM3\nGPU 1: NVIDIA H100 80GB HBM3\n\n", 2),
        ("GPU 0: NVIDIA A100-SXM4-80GB\n\n", 1),
        ("\nGPU 0: NVIDIA H100\nGPU 2: NVIDIA H100\n\n", None),  # not 0..n-1: mangled
    ],
)
def test_the_gpu_list(gpus: str, count: int | None) -> None:
    text = REPORT.format(gcc="(GCC) 11.4.1") + f"GPU models and configuration: {gpus}"
    text += "Nvidia driver version: 550.54.15\n"
    assert facts_of(text).get("gpus.count") == count


OS_REPORT = """PyTorch version: 2.6.0+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
OS: {os}
"""


@pytest.mark.parametrize(
    ("os_line", "name", "arch"),
    [
        ("Ubuntu 22.04.4 LTS (x86_64)", "Ubuntu 22.04.4 LTS", "x86_64"),
        ("Microsoft Windows 11 Pro", "Microsoft Windows 11 Pro", None),  # no machine on Windows
        ("Some OS (unknown machine)", None, None),
    ],
)
def test_the_os_line(os_line: str, name: str | None, arch: str | None) -> None:
    facts = parse_report(OS_REPORT.format(os=os_line)).facts
    assert facts.get("host.os_name") == name
    assert facts.get("host.arch") == arch
