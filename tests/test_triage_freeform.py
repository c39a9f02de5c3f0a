"""Hand-typed environments (parse_freeform) and the facts derived from them, on real reports.

The texts are the ``environment_text`` of real reports in ``tests/data/reports`` (read by their
``source``, so they cannot drift from the corpus), and the derivations are checked against the
tables they come from.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from te_doctor.engine.derived import driver_cuda_version
from te_doctor.triage.parse_common import prepare
from te_doctor.triage.parse_freeform import local_cuda, local_rocm, parse
from te_doctor.triage.parsers import parse_report

REPORTS = Path(__file__).parent / "data" / "reports"


@cache
def corpus() -> dict[str, dict[str, Any]]:
    reports: dict[str, dict[str, Any]] = {}
    for path in sorted(REPORTS.glob("wave*.json")):
        reports.update({r["source"]: r for r in json.loads(path.read_text(encoding="utf-8"))})
    return reports


def environment(source: str) -> str:
    """The report's environment text, ended as a paste with more below it is."""
    text: str = corpus()[source]["environment_text"]
    return text + "\n"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (  # a list: `Python 3.12.7`, `pytorch:  2.6.0+cu126`, `cudnn   9.3.0.75`, `gcc: 13.3.0`
            "NVIDIA/TransformerEngine#1506",
            {
                "host.python_version": "3.12.7",
                "torch.version": "2.6.0+cu126",
                "torch.cuda_version": "12.6",
                "cudnn.version": "9.3.0.75",
                "build.cxx": "gcc",
                "build.cxx_version": "13.3.0",
            },
        ),
        (  # a bulleted template with `GPU: NVIDIA H100 80GB HBM3 (sm_90)`
            "NVIDIA/TransformerEngine#2892",
            {
                "te.version": "2.12.0",
                "packages.transformer_engine": "2.12.0",
                "cudnn.version": "9.20.0",
                "torch.version": "2.9.1+cu129",
                "torch.cuda_version": "12.9",
                "gpu.name": "NVIDIA H100 80GB HBM3",
                "gpu.compute_capability": "9.0",
                "packages.megatron_core": "0.16.0",
            },
        ),
        (  # a Markdown table: `| Driver | NVIDIA RTX Enterprise Driver 581.80 |`
            "FlashML-org/FreeToken#277",
            {
                "gpu.name": "NVIDIA RTX PRO 4000 Blackwell SFF Edition",
                "gpu.compute_capability": "12.0",
                "driver.version": "581.80",
                "driver.cuda_version": "13.0",
                "host.os_name": "Windows 11 Pro 10.0.26200",
            },
        ),
        (  # `GPUs: 8x B300`
            "NVIDIA/TransformerEngine#2966",
            {"gpu.name": "B300", "gpu.compute_capability": "10.3", "gpus.count": 8},
        ),
        (  # `- PyTorch version: 2.5` and `- transformer-engine version: 1.13`
            "NVIDIA/Megatron-LM#1280",
            {
                "torch.version": "2.5",
                "packages.transformer_engine": "1.13",
                "te.version": "1.13",
            },
        ),
        (  # `Cuda 12.1`, `CuDNN 8.9.2`, `Python 3.10`: a list without colons, read as a list
            "NVIDIA/TransformerEngine#873",
            {"cudnn.version": "8.9.2", "host.python_version": "3.10"},
        ),
        (  # ComfyUI's start-up log: `Device: cuda:0 NVIDIA GeForce RTX 3090 : cudaMallocAsync`
            "kijai/ComfyUI-WanVideoWrapper#1583",
            {
                "torch.version": "2.7.1+cu126",
                "torch.cuda_version": "12.6",
                "packages.xformers": "0.0.31",
                "gpu.name": "NVIDIA GeForce RTX 3090",
                "gpu.compute_capability": "8.6",
            },
        ),
        (  # the Python banner pasted under a pip command
            "pytorch/pytorch#31243",
            {},
        ),
    ],
)
def test_real_hand_typed_environments(source: str, expected: dict[str, object]) -> None:
    parsed = parse_report(environment(source))
    assert dict(parsed.facts) == expected


def test_two_versions_in_one_value_state_nothing() -> None:
    """NVIDIA/Megatron-LM#319: ``Pytorch: '2.1.0.dev20230421+cu118' or '2.0.0+cu118'``."""
    facts = parse_report(environment("NVIDIA/Megatron-LM#319")).facts
    assert "torch.version" not in facts and "torch.cuda_version" not in facts
    assert facts["build.cxx"] == "g++" and facts["build.cxx_version"] == "8.5.0"


@pytest.mark.parametrize(
    "text",
    [
        "I tried torch 2.3 and 2.4, python 3.10 too, on an A100.\n",
        "Python 3.10 is what I use\n",
        "torch 2.1.0\n",  # one line, no colon: a fragment, not a listing
        "When I installed nvcc-11.8, TransformerEngine required a version >= 12.0.\n",
        "CUDA version: 12.4\n",  # the toolkit, the driver's or torch's? not said
        "GPU: the one in my laptop\n",
        "- Hardware: Hopper device\n",
    ],
)
def test_numbers_in_sentences_are_not_facts(text: str) -> None:
    assert parse_report(text).facts == {}


def test_key_version_pairs_in_one_comma_separated_line() -> None:
    """deepspeedai/DeepSpeed#4614 opens with ``nvcc 11.5.119, pytorch 2.1.0+cu121.``."""
    facts = parse_report("nvcc 11.5.119, pytorch 2.1.0+cu121.\n").facts
    assert facts["cuda.toolkit_version"] == "11.5.119"
    assert facts["torch.version"] == "2.1.0+cu121"
    # a sentence with commas is not a list: one part is not a "key version" pair
    assert parse_report("I tried torch 2.3, 2.4 and python 3.10, nothing works.\n").facts == {}
    assert parse_report("nvcc 11.5, which is old\n").facts == {}


def test_detectron2_env_table_versions_with_their_paths() -> None:
    """facebookresearch/detectron2#2777 pastes detectron2's env table, where each package's line
    ends with where it was imported from (``PyTorch  1.8.0 @/home/.../torch``)."""
    facts = parse_report(environment("facebookresearch/detectron2#2777") + "\n").facts
    assert facts["torch.version"] == "1.8.0"
    assert facts["packages.torchvision"] == "0.9.0"
    # a path alone, or a version in a sentence with a path, is not such a line
    assert parse_report("PyTorch @/home/me/torch\n").facts == {}
    assert parse_report("I use torch 1.8.0 from /home/me/torch\n").facts == {}


def test_a_wheel_version_on_its_own_line_is_stated() -> None:
    """bytedance/UNO#56 pastes only ``torch 2.5.0+cu121`` above the error: the build tag makes
    it a version pip printed, not a fragment of a sentence."""
    facts = parse_report(environment("bytedance/UNO#56") + "\n").facts
    assert facts == {"torch.version": "2.5.0+cu121", "torch.cuda_version": "12.1"}
    assert parse_report("I run torch 2.5.0+cu121 here\n").facts == {}


@pytest.mark.parametrize(
    "text",
    [
        "PyTorch version: \x00\x01 2.1",
        "- GPU: " + "8x " * 50,
        "| GPU | | | |",
        "torch:::: 2.1",
        "Driver: v.v.v",
        "GPU 0,1,2,: x",
        "gcc: (Ubuntu",
        "Compute capability: twelve",
    ],
)
def test_garbage_states_nothing_and_never_raises(text: str) -> None:
    assert parse(prepare(text + "\n")).observations == []


def test_a_line_cut_short_is_not_read() -> None:
    """The last line of a paste without a newline may be cut (``2.6.0+cu12`` of ``+cu126``)."""
    assert parse_report("PyTorch: 2.6.0+cu12").facts == {}
    assert parse_report("PyTorch: 2.6.0+cu126\n").facts["torch.cuda_version"] == "12.6"


def test_lines_a_tool_parser_read_are_not_read_again() -> None:
    text = "PyTorch version: 2.1.0\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"
    parsed = parse_report(text)
    assert parsed.formats == ("collect_env",)
    assert parsed.sources["torch.version"].startswith("collect_env")


@pytest.mark.parametrize(
    ("local", "cuda", "rocm"),
    [
        ("2.6.0+cu126", "12.6", None),
        ("1.7.0+cu101", "10.1", None),
        ("2.0.1+cu118", "11.8", None),
        ("2.11.0+cu130", "13.0", None),
        ("2.8.0+cpu", None, None),
        ("2.5.1+rocm6.2", None, "6.2"),
        ("2.4.0", None, None),
    ],
)
def test_torch_local_versions(local: str, cuda: str | None, rocm: str | None) -> None:
    assert local_cuda(local) == cuda
    assert local_rocm(local) == rocm


@pytest.mark.parametrize(
    ("driver", "cuda"),
    [
        ("410.104", "10.0"),  # pytorch/pytorch#37320: too old for torch 1.5's CUDA 10.2
        ("418.67", "10.1"),
        ("470.82.01", "11.4"),
        ("525.60.13", "12.0"),
        ("535.247.01", "12.2"),
        ("565.57.01", "12.6"),  # 565 prints 12.7, a CUDA that shipped no toolkit: 12.6 is safe
        ("570.26", "12.8"),
        ("570.25", "12.6"),
        ("580.65.06", "13.0"),
        ("384.80", None),
        ("not-a-version", None),
    ],
)
def test_driver_cuda_from_the_release_notes_table(driver: str, cuda: str | None) -> None:
    assert driver_cuda_version(driver) == cuda


def test_a_driver_cuda_stated_by_nvidia_smi_is_never_overridden() -> None:
    """``CUDA Version: N/A`` (a container without libcuda) stays unknown, not derived."""
    text = (
        "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: N/A      |\n"
        "+-----------------------------------------------------------------------------+\n"
    )
    assert "driver.cuda_version" not in parse_report(text).facts
