"""Triage parsers: real pasted reports, Markdown-wrapped and mangled copies, and hostile input.

The samples under ``tests/data/triage/`` are real public pastes (see ``SOURCES.md`` there); the
expected facts below were checked by hand against each paste.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest

from te_doctor.engine.condition_parser import spec_of
from te_doctor.engine.fact_paths import PYTHON_TYPES, FactType
from te_doctor.engine.flatten import flatten
from te_doctor.render.text import render_snapshot_text
from te_doctor.snapshot.file import load
from te_doctor.triage import parse_collect_env, parsers
from te_doctor.triage.gpus import compute_capability
from te_doctor.triage.parse_common import Findings, Report
from te_doctor.triage.parsers import Parsed, parse_report
from tests.conftest import skip_unless_shared

DATA = Path(__file__).parent / "data" / "triage"
FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOT = FIXTURES / "h100-cuda12-te-ok.json"
DEV_CASES = Path(__file__).resolve().parents[2] / "shared" / "cases" / "dev-cases.json"

#: sample -> (formats, every fact that is not a package, how many package facts)
EXPECTED: dict[str, tuple[tuple[str, ...], dict[str, object], int]] = {
    "collect_env_torch_1_7_pytorch_issue_46973.txt": (
        ("collect_env",),
        {
            "build.cmake_version": "3.12.0",
            "build.cxx": "gcc",
            "build.cxx_version": "7.5.0",
            "cuda.toolkit_version": "10.1.243",
            "driver.cuda_version": "10.1",
            "driver.version": "418.67",
            "gpu.compute_capability": "7.5",
            "gpu.name": "Tesla T4",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.os_name": "Ubuntu 18.04.5 LTS",
            "host.python_version": "3.6",
            "torch.cuda_version": "10.1",
            "torch.debug": True,
            "torch.version": "1.7.0+cu101",
        },
        0,
    ),
    "collect_env_torch_1_12_k2_sherpa_install_notes.txt": (
        ("collect_env", "nvidia-smi", "nvcc"),
        {
            "build.cmake_version": "3.18.0",
            "build.cxx": "gcc",
            "build.cxx_version": "9.4.0",
            "cuda.toolkit_version": "11.3.109",
            "cudnn.version": "8.7.0",
            "driver.cuda_version": "12.0",
            "driver.version": "525.60.13",
            "gpu.compute_capability": "8.6",
            "gpu.name": "NVIDIA GeForce RTX 3080 Ti",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.glibc_version": "2.31",
            "host.os_name": "Ubuntu 20.04.5 LTS",
            "host.python_version": "3.8.15",
            "host.wsl": False,
            "torch.cuda_version": "11.3",
            "torch.debug": False,
            "torch.version": "1.12.0",
        },
        9,
    ),
    "collect_env_torch_1_13_wsl2_fite_readme.txt": (
        ("collect_env",),
        {
            "build.cmake_version": "3.22.1",
            "build.cxx": "gcc",
            "build.cxx_version": "11.2.0",
            "cuda.toolkit_version": "11.5.119",
            "cudnn.version": "8.2.4",
            "driver.cuda_version": "11.7",
            "driver.version": "516.59",
            "gpu.compute_capability": "7.5",
            "gpu.name": "NVIDIA GeForce RTX 2080 SUPER",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.glibc_version": "2.35",
            "host.os_name": "Ubuntu 22.04.1 LTS",
            "host.python_version": "3.10.6",
            "host.wsl": True,
            "torch.cuda_version": "11.7",
            "torch.debug": False,
            "torch.version": "1.13.0+cu117",
        },
        3,
    ),
    "collect_env_torch_1_13_pytorch_issue_90204.txt": (
        ("collect_env",),
        {
            "build.cmake_version": "3.13.3",
            "build.cxx": "gcc",
            "build.cxx_version": "7.5.0",
            "cudnn.distinct_versions": 2,
            "driver.cuda_version": "11.8",
            "driver.version": "520.61.05",
            "gpu.compute_capability": "7.5",
            "gpu.name": "Tesla T4",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.glibc_version": "2.27",
            "host.os_name": "Ubuntu 18.04.4 LTS",
            "host.python_version": "3.9.12",
            "host.wsl": False,
            "torch.cuda_version": "11.7",
            "torch.debug": False,
            "torch.version": "1.13.0+cu117",
        },
        0,
    ),
    "collect_env_torch_2_1_reflowed_vllm_issue_3994.txt": (
        ("collect_env",),
        {
            "build.cmake_version": "3.29.1",
            "build.cxx": "gcc",
            "build.cxx_version": "8.3.0",
            "driver.cuda_version": "12.0",
            "driver.version": "525.78.01",
            "gpu.compute_capability": "7.0",
            "gpu.name": "Tesla V100-SXM2-32GB",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.glibc_version": "2.28",
            "host.os_name": "Debian GNU/Linux 10 (buster)",
            "host.python_version": "3.9.19",
            "host.wsl": False,
            "torch.cuda_version": "12.1",
            "torch.debug": False,
            "torch.version": "2.1.2+cu121",
        },
        3,
    ),
    "collect_env_torch_2_3_onediff_sdxl_readme_two_machines.txt": (
        ("collect_env",),
        {  # only what both machines share, or what only one of them states
            "build.cmake_version": "3.28.1",
            "build.cxx": "gcc",
            "cuda.toolkit_version": "12.2.140",
            "gpus.count": 8,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.wsl": False,
            "torch.cuda_version": "12.1",
            "torch.debug": False,
        },
        13,
    ),
    "collect_env_torch_2_5_sections_fastdeploy_collect_env_doc.txt": (
        ("collect_env",),
        {
            "build.cmake_version": "3.18.0",
            "build.cxx": "gcc",
            "build.cxx_version": "12.2.0",
            "cuda.toolkit_version": "12.3.103",
            "driver.cuda_version": "12.0",
            "driver.version": "525.125.06",
            "gpu.compute_capability": "8.0",
            "gpu.name": "NVIDIA A100-SXM4-40GB",
            "gpus.count": 8,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.glibc_version": "2.31",
            "host.os_name": "Ubuntu 20.04.6 LTS",
            "host.python_version": "3.10.16",
            "host.wsl": False,
            "torch.cuda_version": "11.8",
            "torch.debug": False,
            "torch.version": "2.5.1+cu118",
        },
        42,
    ),
    "collect_env_torch_2_8_vllm_sections_vllm_issue_29070.txt": (
        ("collect_env", "environment-list", "traceback"),
        {
            "build.cmake_version": "4.1.0",
            "build.cxx": "gcc",
            "build.cxx_version": "11.4.0",
            "cuda.toolkit_version": "12.8.93",
            "driver.cuda_version": "12.2",
            "driver.version": "535.274.02",
            "gpu.compute_capability": "8.0",
            "gpu.name": "NVIDIA A30",
            "gpus.count": 4,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.glibc_version": "2.35",
            "host.os_name": "Ubuntu 22.04.5 LTS",
            "host.python_version": "3.12.11",
            "host.wsl": False,
            "torch.cuda_version": "12.8",
            "torch.debug": False,
            "torch.version": "2.8.0+cu128",
        },
        27,
    ),
    "collect_env_torch_2_10_nightly_pytorch_issue_digest.txt": (
        ("collect_env",),
        {
            "build.cxx": "gcc",
            "build.cxx_version": "11.4.0",
            "cudnn.version": "9.3.0",
            "driver.cuda_version": "13.0",
            "driver.version": "580.105.08",
            "gpu.compute_capability": "8.6",
            "gpu.name": "NVIDIA A10G",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.glibc_version": "2.35",
            "host.os_name": "Ubuntu 22.04.4 LTS",
            "host.python_version": "3.10.12",
            "host.wsl": False,
            "torch.cuda_version": "12.6",
            "torch.debug": False,
            "torch.version": "2.10.0.dev20251208+cu126",
        },
        21,
    ),
    "collect_env_torch_2_14_cudnn_from_torch_issue_draft.txt": (
        ("collect_env",),
        {
            "build.cmake_version": "3.28.3",
            "build.cxx": "gcc",
            "build.cxx_version": "13.3.0",
            "cudnn.version": "9.24.0",
            "driver.cuda_version": "13.0",
            "driver.version": "580.173.02",
            "gpu.compute_capability": "12.0",
            "gpu.name": "NVIDIA GeForce RTX 5070 Ti",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
            "host.arch": "x86_64",
            "host.glibc_version": "2.39",
            "host.os_name": "Ubuntu 24.04.4 LTS",
            "host.python_version": "3.12.3",
            "host.wsl": False,
            "torch.cuda_version": "13.0",
            "torch.debug": False,
            "torch.version": "2.14.0+cu130",
        },
        0,
    ),
    "nvidia_smi_470_two_truncated_geforce.txt": (
        ("nvidia-smi",),
        {"driver.cuda_version": "11.4", "driver.version": "470.57.02", "gpus.count": 2},
        0,
    ),
    "nvidia_smi_470_a100_cuda_na_gpu_operator.txt": (
        ("nvidia-smi",),
        {"driver.version": "470.82.01", "gpu.compute_capability": "8.0", "gpus.count": 1},
        0,
    ),
    "nvidia_smi_535_gtx1050ti_gtx1060.txt": (
        ("nvidia-smi",),
        {
            "driver.cuda_version": "12.2",
            "driver.version": "535.183.01",
            "gpu.compute_capability": "6.1",
            "gpu.name": "NVIDIA GeForce GTX 1050 Ti",
            "gpus.count": 2,
            "gpus.distinct_names": 2,
        },
        0,
    ),
    "nvidia_smi_550_rtx4090.txt": (
        ("nvidia-smi",),
        {
            "driver.cuda_version": "12.4",
            "driver.version": "550.142",
            "gpu.compute_capability": "8.9",
            "gpu.name": "NVIDIA GeForce RTX 4090",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
        },
        0,
    ),
    "nvidia_smi_550_a100_mig_cuda_na_gpu_operator_docs.txt": (
        ("nvidia-smi",),
        {
            "driver.version": "550.54.14",
            "gpu.compute_capability": "8.0",
            "gpu.name": "NVIDIA A100 80GB PCIe",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
        },
        0,
    ),
    "nvidia_smi_570_550_v100_two_hosts_and_nvcc.txt": (
        ("nvidia-smi", "nvcc"),
        {
            "cuda.toolkit_version": "12.0.140",
            "gpu.compute_capability": "7.0",
            "gpu.name": "Tesla V100-SXM2-16GB",
            "gpus.count": 2,
            "gpus.distinct_names": 1,
        },
        0,
    ),
    "nvidia_smi_570_l40s_slurm_docs.txt": (
        ("nvidia-smi",),
        {
            "driver.cuda_version": "12.8",
            "driver.version": "570.195.03",
            "gpu.compute_capability": "8.9",
            "gpu.name": "NVIDIA L40S",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
        },
        0,
    ),
    "nvidia_smi_580_wsl_rtx5090_laptop_truncated.txt": (
        ("nvidia-smi",),
        {
            "driver.cuda_version": "13.0",
            "driver.version": "580.88",
            "gpu.compute_capability": "12.0",
            "gpus.count": 1,
        },
        0,
    ),
    "nvidia_smi_580_quadro_rtx8000_environment_snapshot.txt": (
        ("nvidia-smi",),
        {  # the stored copy ends at the border after GPU 0: a GPU 1 may have followed
            "driver.cuda_version": "13.0",
            "driver.version": "580.159.03",
            "gpu.compute_capability": "7.5",
            "gpu.name": "Quadro RTX 8000",
        },
        0,
    ),
    "nvcc_12_9_and_12_6_two_users_litevggt_issue_2.txt": (("nvcc",), {}, 0),
    "pip_list_grep_te_issue_1853.txt": (("pip-list",), {}, 12),
    "pip_list_header_details_onnxruntime_genai_issue_344.txt": (("pip-list",), {}, 33),
    "pip_list_te_2_10_runpod_environment_snapshot.txt": (
        ("pip-list",),
        {
            "te.version": "2.10.0",
            "torch.cuda_version": "12.8",
            "torch.version": "2.8.0+cu128",
        },
        32,
    ),
    "conda_list_accelerate_issue_1590.txt": (("conda-list",), {}, 18),
    "pip_freeze_rocm_container_wrapped.txt": (("pip-freeze",), {}, 20),
    "traceback_chained_flash_attn_te_issue_1123.txt": (("traceback",), {}, 0),
    "traceback_rank_prefixed_te_issue_1680.txt": (("traceback",), {}, 0),
    "freetext_environment_te_issue_2040.txt": (
        ("environment-list",),
        {
            "driver.cuda_version": "12.8",
            "driver.version": "570.86.10",
            "gpu.compute_capability": "9.0",
            "gpu.name": "NVIDIA H100 80GB SXM5",
            "gpus.count": 8,
            "host.python_version": "3.12.11",
            "te.version": "2.6.0",
        },
        1,
    ),
    "template_versions_three_commenters_megatron_issue_696.txt": (
        ("environment-list",),
        {},
        0,
    ),
    "accelerate_env_rtx4090_docs_zh.txt": (
        ("environment-list",),
        {
            "gpu.compute_capability": "8.9",
            "gpu.name": "NVIDIA GeForce RTX 4090",
            "host.python_version": "3.10.13",
            "torch.cuda_version": "12.4",
            "torch.version": "2.5.1+cu124",
        },
        1,
    ),
    "sglang_check_env_h100_cu130_driver_535.txt": (
        ("nvcc", "environment-list"),
        {
            "cuda.toolkit_version": "13.0.88",
            "driver.cuda_version": "12.2",
            "driver.version": "535.161.08",
            "gpu.compute_capability": "9.0",
            "gpu.name": "NVIDIA H100 80GB HBM3",
            "gpus.count": 2,
            "host.python_version": "3.12.3",
            "torch.cuda_version": "13.0",
            "torch.version": "2.11.0+cu130",
        },
        4,
    ),
    "nvidia_smi_q_560_rtx_a2000_laptop.txt": (
        ("nvidia-smi",),
        {
            "driver.cuda_version": "12.6",
            "driver.version": "560.35.05",
            "gpu.compute_capability": "8.6",
            "gpu.name": "NVIDIA RTX A2000 8GB Laptop GPU",
            "gpus.count": 1,
            "gpus.distinct_names": 1,
        },
        0,
    ),
    "nvidia_smi_q_525_eight_gpus_temperature.txt": (
        ("nvidia-smi",),
        {
            "driver.cuda_version": "12.0",
            "driver.version": "525.60.13",
            "gpus.count": 8,
        },
        0,
    ),
}
TWO_MACHINES = "collect_env_torch_2_3_onediff_sdxl_readme_two_machines.txt"
CONFLICTS: dict[str, dict[str, tuple[str, ...]]] = {
    "template_versions_three_commenters_megatron_issue_696.txt": {
        "torch.version": ("2.1.1", "2.1.0", "2.2.1")
    },
    "nvcc_12_9_and_12_6_two_users_litevggt_issue_2.txt": {
        "cuda.toolkit_version": ("12.9.86", "12.6.85")
    },
    "nvidia_smi_570_550_v100_two_hosts_and_nvcc.txt": {
        "driver.version": ("570.133.20", "550.144.03"),
        "driver.cuda_version": ("12.8", "12.4"),
    },
}


def sample(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def core(parsed: Parsed) -> dict[str, object]:
    return {k: v for k, v in parsed.facts.items() if not k.startswith("packages.")}


def packages(parsed: Parsed) -> dict[str, object]:
    return {k: v for k, v in parsed.facts.items() if k.startswith("packages.")}


# ---------------------------------------------------------------- real samples, exact facts


def test_every_sample_file_is_listed_and_documented() -> None:
    files = {p.name for p in DATA.glob("*.txt")}
    assert files == set(EXPECTED)
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in sources for name in files)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_sample_gives_exactly_the_stated_facts(name: str) -> None:
    formats, facts, package_count = EXPECTED[name]
    parsed = parse_report(sample(name))
    assert parsed.formats == formats
    assert core(parsed) == facts
    assert len(packages(parsed)) == package_count
    assert dict(parsed.conflicts).keys() >= CONFLICTS.get(name, {}).keys()
    for path, values in CONFLICTS.get(name, {}).items():
        assert parsed.conflicts[path] == values


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_fact_is_declared_typed_and_sourced(name: str) -> None:
    parsed = parse_report(sample(name))
    assert set(parsed.sources) == set(parsed.facts)
    for path, value in parsed.facts.items():
        spec = spec_of(path)
        assert spec is not None, path
        assert isinstance(value, PYTHON_TYPES[spec.type]), (path, value)
        assert not (spec.type is FactType.INT and isinstance(value, bool)), path
        assert parsed.sources[path], path
    assert not set(parsed.facts) & set(parsed.conflicts)


def test_sources_quote_the_line_the_fact_came_from() -> None:
    parsed = parse_report(sample("collect_env_torch_1_12_k2_sherpa_install_notes.txt"))
    assert parsed.sources["driver.version"] == "collect_env: 'Nvidia driver version: 525.60.13'"
    assert parsed.sources["cuda.toolkit_version"] == (
        "collect_env: 'CUDA runtime version: 11.3.109'"
    )
    assert parsed.sources["driver.cuda_version"].startswith("nvidia-smi: '| NVIDIA-SMI 525.60.13")


def test_two_machines_in_one_report_are_conflicts_not_facts() -> None:
    parsed = parse_report(sample(TWO_MACHINES))
    assert parsed.conflicts["torch.version"] == ("2.3.1+cu121", "2.3.0+cu121")
    assert parsed.conflicts["gpu.name"] == ("NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090")
    assert parsed.conflicts["driver.version"] == ("535.104.05", "550.90.07")
    assert "packages.torch" in parsed.conflicts
    assert "cudnn.version" not in parsed.facts  # only "libcudnn.so.8": no minor version stated


def test_cuda_runtime_version_of_collect_env_is_the_toolkit_never_the_runtime() -> None:
    for name in EXPECTED:
        assert "cuda.runtime_version" not in parse_report(sample(name)).facts


def test_cpu_build_and_could_not_collect_state_nothing() -> None:
    text = (
        "PyTorch version: 2.4.0+cpu\nIs debug build: False\nCUDA used to build PyTorch: None\n"
        "ROCM used to build PyTorch: N/A\nCUDA runtime version: No CUDA\n"
        "GPU models and configuration: No CUDA\nNvidia driver version: No CUDA\n"
        "cuDNN version: No CUDA\n"
    )
    parsed = parse_report(text)
    assert core(parsed) == {"torch.version": "2.4.0+cpu", "torch.debug": False}


# ---------------------------------------------------------------- package listings


def test_collect_env_pip3_and_conda_lines() -> None:
    found = packages(parse_report(sample("collect_env_torch_1_12_k2_sherpa_install_notes.txt")))
    assert found["packages.torch"] == "1.12.0+cu113"
    assert found["packages.pytorch"] == "1.12.0"  # the conda package, under its own name
    assert found["packages.cudatoolkit"] == "11.3.1"
    assert found["packages.pytorch_mutex"] == "1.0"
    assert "packages.could" not in found


def test_pip_list_grep_without_header() -> None:
    found = packages(parse_report(sample("pip_list_grep_te_issue_1853.txt")))
    assert found["packages.nvidia_cudnn_cu12"] == "9.7.1.26"
    assert found["packages.nvfuser_cu128_torch27"] == "0.2.27.dev20250601"
    assert "packages.nv" not in found


def test_pip_list_header_in_details_and_local_versions() -> None:
    text = sample("pip_list_header_details_onnxruntime_genai_issue_344.txt")
    found = packages(parse_report(text))
    assert found["packages.cuda_python"] == "12.4.0rc7+3.ge75c8a9.dirty"
    assert found["packages.absl_py"] == "2.1.0"


def test_pip_list_and_pip_freeze_state_the_same_facts() -> None:
    listing = sample("pip_list_te_2_10_runpod_environment_snapshot.txt")
    rows = [line.split() for line in listing.splitlines() if line and not line.startswith("`")]
    freeze = "".join(f"{row[0]}=={row[1]}\n" for row in rows if len(row) == 2)
    from_list, from_freeze = parse_report(listing), parse_report(freeze)
    assert from_list.formats == ("pip-list",)
    assert from_freeze.formats == ("pip-freeze",)
    assert from_list.facts == from_freeze.facts
    assert from_list.facts["te.version"] == "2.10.0"
    assert from_list.facts["packages.transformer_engine_cu12"] == "2.10.0"
    assert from_list.facts["packages.transformer_engine_torch"] == "2.10.0"
    assert from_list.sources["te.version"].startswith("packages.transformer_engine: pip-list")


def test_pip_freeze_direct_references_state_no_version() -> None:
    parsed = parse_report(sample("pip_freeze_rocm_container_wrapped.txt"))
    assert "packages.transformer_engine" not in parsed.facts
    assert "packages.torch" not in parsed.facts
    assert "te.version" not in parsed.facts
    assert parsed.facts["packages.flash_attn"] == "2.8.3"
    assert parsed.facts["packages.pytz"] == "2025.2"  # after a .whl line wrapped in two


def test_pip_show() -> None:
    text = (
        "$ pip show transformer_engine\nName: transformer_engine\nVersion: 1.13.0\n"
        "Summary: Transformer acceleration library\n"
    )
    parsed = parse_report(text)
    assert parsed.formats == ("pip-show",)
    assert parsed.facts == {"packages.transformer_engine": "1.13.0", "te.version": "1.13.0"}


def test_conda_list() -> None:
    found = packages(parse_report(sample("conda_list_accelerate_issue_1590.txt")))
    assert found["packages.megatron_lm"] == "3.0.0"
    assert found["packages.numpy"] == "1.24.3"


def test_aligned_tables_that_are_not_package_lists_give_nothing() -> None:
    ls_output = "drwxr-xr-x 2 root root 4096 a\ndrwxr-xr-x 3 root root 4096 b\n" * 3
    df_output = "tmpfs           13G   28K   13G   1% /run/user/125\n" * 4
    prose = "torch 2.1.0\nnumpy 1.26.0\n"  # two rows, no header, no padding: not a listing
    for text in (ls_output, df_output, prose):
        assert parse_report(text).facts == {}


# ---------------------------------------------------------------- te-doctor's own output


def test_te_doctor_json_snapshot_gives_every_known_fact() -> None:
    text = SNAPSHOT.read_text(encoding="utf-8")
    expected = {p: f.value for p, f in flatten(load(SNAPSHOT)).values.items() if f.known}
    parsed = parse_report(text)
    assert parsed.formats == ("te-doctor-json",)
    assert parsed.facts == expected
    assert parsed.facts["te.version"] == "2.3.0"
    assert parsed.sources["driver.version"] == "te-doctor-json: nvidia:nvml"
    assert parsed.error_text == ""
    wrapped = (
        "I ran te-doctor:\n<details><summary>probe</summary>\n\n```json\n"
        + text
        + "```\n</details>\n"
    )
    quoted = "".join(f"> {line}\n" for line in wrapped.splitlines())
    assert parse_report(wrapped).facts == expected
    assert parse_report(quoted).facts == expected


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_te_doctor_text_output_states_only_true_facts(fixture: Path) -> None:
    snapshot = load(fixture)
    known = {p: f.value for p, f in flatten(snapshot).values.items() if f.known}
    parsed = parse_report(render_snapshot_text(snapshot))
    assert parsed.formats == ("te-doctor-text",)
    assert parsed.conflicts == {}
    assert {p: v for p, v in parsed.facts.items() if known.get(p) != v} == {}
    assert parsed.error_text == ""  # te-doctor's own "not present: ..." lines are not errors


def test_te_doctor_text_output_of_an_h100() -> None:
    parsed = parse_report(render_snapshot_text(load(SNAPSHOT)))
    assert parsed.facts["gpu.name"] == "NVIDIA H100 80GB HBM3"
    assert parsed.facts["gpus.count"] == 8
    assert parsed.facts["driver.cuda_version"] == "12.4"
    assert parsed.facts["torch.cuda_arch_list"] == (
        "sm_50",
        "sm_60",
        "sm_70",
        "sm_75",
        "sm_80",
        "sm_86",
        "sm_90",
    )
    assert parsed.facts["te.version"] == "2.3.0"
    assert parsed.facts["packages.flash_attn"] == "2.7.4.post1"


def test_a_broken_snapshot_is_not_a_snapshot() -> None:
    text = SNAPSHOT.read_text(encoding="utf-8")
    assert parse_report(text[: len(text) // 2]).formats == ()
    assert parse_report('{"schema_version": 99}').formats == ()


# ---------------------------------------------------------------- tracebacks and error lines


def test_traceback_with_log_prefixes() -> None:
    parsed = parse_report(sample("collect_env_torch_2_8_vllm_sections_vllm_issue_29070.txt"))
    lines = parsed.error_text.splitlines()
    assert lines[0].startswith("ERROR 11-19 21:10:38 [v1/executor/multiproc_executor.py:671] ")
    assert "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 MiB." in lines[0]
    assert lines[1].endswith("Traceback (most recent call last):")
    assert len(lines) == 11  # "WorkerProc hit an exception." is not an error line
    assert "NVIDIA_VISIBLE_DEVICES" not in parsed.error_text


def test_chained_tracebacks_are_kept_verbatim() -> None:
    text = sample("traceback_chained_flash_attn_te_issue_1123.txt")
    parsed = parse_report(text)
    lines = parsed.error_text.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert "AssertionError: FlashAttention maximum version 2.5.8 is supported." in lines
    assert "During handling of the above exception, another exception occurred:" in lines
    assert lines.count("Traceback (most recent call last):") == 2
    assert all(line in text.splitlines() for line in lines)
    assert "UserWarning" not in parsed.error_text  # a warning is not an error


def test_rank_prefixed_traceback_without_its_last_line() -> None:
    text = sample("traceback_rank_prefixed_te_issue_1680.txt")
    parsed = parse_report(text)
    assert parsed.error_text.splitlines() == text.splitlines()[:-1]  # the empty "[rank0]:" ends it


#: Decisive lines with no "Error:" in them, verbatim from wave-1 reports (source in each id).
DECISIVE_LINES = [
    pytest.param(
        "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA"
        " initialization: The NVIDIA driver on your system is too old (found version 11000).",
        id="IEIT-Yuan/Yuan-2.0#65",
    ),
    pytest.param("NVIDIA driver on your system is too old (found version 6000)....", id="pt#920"),
    pytest.param("module 'torch' has no attribute 'float8_e4m3fn'", id="ComfyUI-CogVideoX#12"),
    pytest.param(
        "Exception: Installed CUDA version 11.8 does not match the version torch was compiled"
        " with 11.7, unable to compile cuda/cpp extensions without a matching cuda version.",
        id="DeepSpeed#3011",
    ),
    pytest.param(
        'assert cuda_home is not None, "CUDA_HOME does not exist, unable to compile CUDA op(s)".',
        id="DeepSpeed#2337",
    ),
    pytest.param(
        "Specified provider \u2018CUDAExecutionProvider\u2019 is not in available provider names."
        " Available providers: \u2018AzureExecutionProvider, CPUExecutionProvider\u2019",
        id="onnxruntime#26996",
    ),
    pytest.param("missing '_flash_attn_varlen_forward'", id="TE#1392"),
    pytest.param(
        "_flash_attn_forward() got an unexpected keyword argument 'descale_q'", id="fa#1710"
    ),
    pytest.param("-- Configuring incomplete, errors occurred!", id="TE#654"),
    pytest.param("no such option: --config-settings", id="NeMo#8814"),
    pytest.param("Unable to find suitable cuBLAS grouped GEMM algorithm", id="TE#3176"),
    pytest.param(
        "Error(s): Apex was not found. Please see the NeMo README for installation instructions",
        id="NeMo#5111",
    ),
    pytest.param("/usr/bin/ld: cannot find -lcurand", id="DeepSpeed#889"),
    pytest.param(
        "iteration 5/50 | elapsed time per iteration: 21392.5 ms | | learning rate: 1.350000E-04"
        " | global batch size: 4096 | | loss scale: 1.0 | grad norm: nan |",
        id="Megatron-Bridge#5306",
    ),
    pytest.param("FP8+PP+**Recompute**+GA>1, loss = nan", id="TE#539"),
    pytest.param(
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
        id="xformers#982",
    ),
    pytest.param(
        "DEBUG:DotProductAttention:Disabling FusedAttention as no backend supports the provided"
        " input",
        id="TE#2285",
    ),
    pytest.param(
        "/home/shitals/miniconda3/envs/nemo/lib/python3.11/site-packages/torch/utils/"
        "cpp_extension.py:424: UserWarning: There are no g++ version bounds defined for CUDA"
        " version 12.4",
        id="TE#1249",
    ),
]


@pytest.mark.parametrize("line", DECISIVE_LINES)
def test_decisive_lines_without_an_error_word_are_kept(line: str) -> None:
    parsed = parse_report(f"I ran the script and got:\n\n{line}\n\nany idea?\n")
    assert parsed.error_text == line


def test_kernel_location_split_from_its_runtime_error_is_kept() -> None:
    """NVIDIA/TransformerEngine#3217: TE's file:line on its own line, blank lines around it."""
    text = (
        "RuntimeError:\n"
        "/home/.../transformer_engine/common/recipe/current_scaling.cu:77\n\n"
        "launch_amax_kernel\n\n"
        "CUDA Error: no kernel image is available for execution on the device\n"
    )
    assert parse_report(text).error_text.splitlines() == [
        "RuntimeError:",
        "/home/.../transformer_engine/common/recipe/current_scaling.cu:77",
        "CUDA Error: no kernel image is available for execution on the device",
    ]


def test_error_wrapped_in_a_log_column_is_kept_whole() -> None:
    """NVIDIA/TransformerEngine#1981: Rich's log handler wraps the message at a fixed column."""
    pad = " " * 29
    cells = [
        "Could not find package",
        "transformer_engine_torch. Install",
        "transformer-engine using 'pip3",
        "install",
        "transformer-engine[pytorch]==VERSIO",
        "N'",
    ]
    text = "[07/23/25 01:51:13] INFO     transformer_engine.common - INFO -  __init__.py:160\n"
    text += "".join(f"{pad}{cell:<52}\n" for cell in cells)
    lines = parse_report(text).error_text.splitlines()
    assert [line.strip() for line in lines] == cells


def test_shallow_error_line_does_not_swallow_the_next_line() -> None:
    text = "  RuntimeError: CUDA error: invalid device ordinal\n  next step of the log\n"
    assert parse_report(text).error_text == "  RuntimeError: CUDA error: invalid device ordinal"


def test_plain_user_warnings_are_still_not_errors() -> None:
    text = "train.py:10: UserWarning: torch.cuda.amp.autocast(args...) is deprecated.\n"
    assert parse_report(text).error_text == ""


def test_error_lines_outside_tracebacks() -> None:
    parsed = parse_report(sample("freetext_environment_te_issue_2040.txt"))
    assert parsed.error_text.splitlines() == [
        "Cannot import transformer_engine, with error:",
        "`OSError: libcublas.so.13: cannot open shared object file: No such file or directory`",
    ]
    # the hand-typed environment list under it states facts (parse_freeform); the sentence
    # around the error states none
    assert parsed.facts["driver.version"] == "570.86.10"
    assert parsed.facts["te.version"] == "2.6.0"
    assert not any("Describe" in source for source in parsed.sources.values())


def test_source_line_above_a_headless_exception_is_kept() -> None:
    """The tail of a traceback whose header was not pasted (NVIDIA/TransformerEngine#1541)."""
    text = (
        "the import fails:\n"
        '    so_path = next(so_dir.glob(f"{module_name}.*.{extension}"))\n'
        "StopIteration\n"
    )
    assert parse_report(text).error_text.splitlines() == text.splitlines()[1:]


def test_no_errors_in_clean_tool_output() -> None:
    for name in EXPECTED:
        if name.startswith(("nvidia_smi", "pip_", "conda_", "nvcc_", "template_")):
            assert parse_report(sample(name)).error_text == "", name


# ---------------------------------------------------------------- wrapping and mangling


def quoted(text: str) -> str:
    return "".join(f"> {line}\n" for line in text.splitlines())


def nested_quote(text: str) -> str:
    return "".join(f"> > {line}\n" for line in text.splitlines())


def details(text: str) -> str:
    return f"<details>\n<summary>Output</summary>\n\n```text\n{text}\n```\n\n</details>\n"


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def indented(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


WRAPPERS: dict[str, Callable[[str], str]] = {
    "quote": quoted,
    "nested-quote": nested_quote,
    "details-fence": details,
    "crlf": crlf,
    "quoted-details-crlf": lambda text: crlf(quoted(details(text))),
    "indented": indented,
}
WRAPPED_SAMPLES = (
    "collect_env_torch_1_12_k2_sherpa_install_notes.txt",
    "collect_env_torch_2_8_vllm_sections_vllm_issue_29070.txt",
    "nvidia_smi_535_gtx1050ti_gtx1060.txt",
    "nvidia_smi_470_two_truncated_geforce.txt",
    "pip_list_grep_te_issue_1853.txt",
    "pip_freeze_rocm_container_wrapped.txt",
    "traceback_chained_flash_attn_te_issue_1123.txt",
)


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("name", WRAPPED_SAMPLES)
def test_markdown_wrapping_changes_nothing(name: str, wrapper: str) -> None:
    plain = parse_report(sample(name))
    wrapped = parse_report(WRAPPERS[wrapper](sample(name)))
    assert wrapped.facts == plain.facts
    assert wrapped.formats == plain.formats
    if wrapper in ("details-fence", "crlf"):
        assert wrapped.error_text == plain.error_text


def test_reflowed_collect_env() -> None:
    text = sample("collect_env_torch_2_8_vllm_sections_vllm_issue_29070.txt")
    body = text[text.index("Collecting environment") : text.index("```\n\n</details>")]
    plain = parse_report(body)
    reflowed = parse_report(" ".join(body.split()))
    for path in (
        "torch.version",
        "torch.cuda_version",
        "torch.debug",
        "driver.version",
        "gpu.name",
        "gpus.count",
        "host.os_name",
        "host.python_version",
        "host.glibc_version",
        "cuda.toolkit_version",
        "packages.torch",
        "packages.nvidia_cudnn_cu12",
    ):
        assert reflowed.facts[path] == plain.facts[path], path


#: Every sample that states one machine (in the others, a cut can drop one side of a conflict).
TRUNCATED_SAMPLES = tuple(
    name for name in sorted(EXPECTED) if name not in CONFLICTS and name != TWO_MACHINES
)


@pytest.mark.parametrize("name", TRUNCATED_SAMPLES)
def test_a_paste_cut_at_a_line_states_nothing_new(name: str) -> None:
    """Cut after any line: every fact is one the whole paste states (counts included)."""
    text = sample(name)
    full = parse_report(text).facts
    lines = text.splitlines(keepends=True)
    for end in range(len(lines)):
        cut = parse_report("".join(lines[:end])).facts
        assert {p: v for p, v in cut.items() if full.get(p) != v} == {}, (end, lines[end - 1])


@pytest.mark.parametrize("name", TRUNCATED_SAMPLES)
def test_a_paste_cut_mid_line_states_nothing_new(name: str) -> None:
    """Cut anywhere: a value on the cut line may be cut short, so it is not read at all."""
    text = sample(name)
    full = parse_report(text).facts
    for end in range(0, len(text), max(1, len(text) // 400)):
        cut = parse_report(text[:end]).facts
        assert {p: v for p, v in cut.items() if full.get(p) != v} == {}, (end, text[:end][-40:])


# ---------------------------------------------------------------- the GPU table


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("Tesla V100-SXM2-32GB", "7.0"),
        ("Tesla T4", "7.5"),
        ("NVIDIA GeForce RTX 2080 Ti", "7.5"),
        ("Quadro RTX 8000", "7.5"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("NVIDIA A30", "8.0"),
        ("NVIDIA A10G", "8.6"),
        ("NVIDIA A40", "8.6"),
        ("NVIDIA RTX A6000", "8.6"),
        ("NVIDIA A6000", "8.6"),  # the "RTX" dropped, as in kijai/ComfyUI-WanVideoWrapper#721
        ("RTX A4500", "8.6"),
        ("NVIDIA GeForce RTX 3090 Ti", "8.6"),
        ("NVIDIA L4", "8.9"),
        ("NVIDIA L40S", "8.9"),
        ("NVIDIA RTX 6000 Ada Generation", "8.9"),
        ("NVIDIA GeForce RTX 4090 D", "8.9"),
        ("RTX 4090D", "8.9"),  # as in aredden/flux-fp8-api#44
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA H200", "9.0"),
        ("NVIDIA H800", "9.0"),
        ("NVIDIA GH200 480GB", "9.0"),
        ("NVIDIA B200", "10.0"),
        ("NVIDIA GB200", "10.0"),
        ("NVIDIA B300 SXM6 AC", "10.3"),
        ("NVIDIA GeForce RTX 5090", "12.0"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0"),
        ("NVIDIA GB10", "12.1"),
        ("NVIDIA A100-PCI...", "8.0"),
        ("NVIDIA GeForce RTX 3060 ...", "8.6"),
        ("Tesla V100-SXM2...", "7.0"),
    ],
)
def test_compute_capability_from_name(name: str, cc: str) -> None:
    assert compute_capability(name) == cc


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA GeForce ...",
        "NVIDIA L4...",
        "NVIDIA GB10...",
        "NVIDIA RTX 6000",
        "Some GPU",
        "",
        "A6000X",
        "NVIDIA A60...",
    ],
)
def test_compute_capability_unknown_or_cut_names(name: str) -> None:
    assert compute_capability(name) is None


# ---------------------------------------------------------------- the dev cases


def dev_cases() -> list[dict[str, object]]:
    skip_unless_shared(DEV_CASES)
    data = json.loads(DEV_CASES.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    return [case for case in data if isinstance(case, dict)]


def test_dev_case_error_excerpts_are_found_verbatim() -> None:
    for case in dev_cases():
        excerpt = case.get("error_excerpt")
        if not isinstance(excerpt, str):
            continue
        parsed = parse_report(excerpt)
        assert parsed.error_text, case["source"]
        assert all(line in excerpt.splitlines() for line in parsed.error_text.splitlines())
        assert parsed.facts == {}, case["source"]  # an error message states no environment


def test_dev_case_collect_env_texts() -> None:
    for case in dev_cases():
        text = case.get("collect_env_text")
        if not isinstance(text, str):
            continue
        parsed = parse_report(text)
        assert "collect_env" in parsed.formats, case["source"]
        environment = case.get("environment")
        gpu = environment.get("gpu") if isinstance(environment, dict) else None
        if isinstance(gpu, str) and "gpu.name" in parsed.facts:
            assert parsed.facts["gpu.name"] == gpu, case["source"]


# ---------------------------------------------------------------- hostile input


def timed(text: str) -> tuple[Parsed, float]:
    start = time.perf_counter()
    parsed = parse_report(text)
    return parsed, time.perf_counter() - start


@pytest.fixture(scope="module")
def seconds_per_mb() -> float:
    """How long a plain 4 MB report takes here, now: the baseline hostile inputs are held to.

    Measured in the same run, so a busy machine slows both alike; a super-linear parser is
    hundreds of times slower than this on a megabyte of bait, far past the factor allowed.
    """
    plain = "PyTorch version: 2.1.0\nsome words here and there\n" * (4 * MB // 49)
    return min(timed(plain)[1] for _ in range(2)) / (len(plain) / MB)


def budget(text: str, per_mb: float) -> float:
    """25 times the plain-text rate for this length, and never under a second."""
    return max(1.0, 25 * per_mb * len(text) / MB)


MB = 1_000_000
HOSTILE: dict[str, Callable[[], str]] = {
    "empty": lambda: "",
    "whitespace": lambda: " \n\t\r\n" * 1000,
    "binary": lambda: os.urandom(MB).decode("latin-1"),
    "binary-utf8": lambda: os.urandom(2 * MB).decode("utf-8", errors="replace"),
    "nul-bytes": lambda: "\x00" * MB,
    "one-long-line": lambda: "a" * MB,
    "digits-and-dots": lambda: "1." * (MB // 2),
    "equals": lambda: "a==" * (MB // 3),
    "pins-in-prose": lambda: ("I installed torch==2.1.0 and " * 60 + "\n") * (MB // 1700),
    "pin-bait": lambda: ("a" * 120 + "==" + "1." * 40 + "[" * 300 + "\n") * (MB // 500),
    "pip3-brackets": lambda: "[pip3] " * (MB // 7),
    "pip3-long-name": lambda: "[pip3] " + "a" * MB,
    "gpu-prefixes": lambda: "GPU 0: " * (MB // 7),
    "collect-env-keys": lambda: "PyTorch version: Is debug build: " * (MB // 33),
    "gpu-list": lambda: (
        "PyTorch version: 1\nIs debug build: True\nGPU models and "
        "configuration:\n" + "GPU 0: x\n" * (MB // 10)
    ),
    "cudnn-files": lambda: (
        "cuDNN version: Nvidia driver version: x\n" + "libcudnn.so.8.9." * (MB // 16)
    ),
    "os-parens": lambda: "PyTorch version: 1\nIs debug build: True\nOS: " + "(" * MB,
    "table-pipes": lambda: "|" * MB,
    "smi-rows": lambda: (
        "| NVIDIA-SMI 1 Driver Version: 1.2 CUDA Version: 1.2\n"
        + ("|   0  x" + " " * 900 + "On | 0000:00:00.0 |\n") * 1000
    ),
    "quotes": lambda: ">" * MB,
    "tags": lambda: "<details>" * (MB // 9),
    "fences": lambda: "```\n" * (MB // 4),
    "tracebacks": lambda: "Traceback (most recent call last):\n" * (MB // 35),
    "frames": lambda: "Traceback (most recent call last):\n" + '  File "x.py", line 1\n' * 40_000,
    "frames-no-header": lambda: 'a.py", line 1, in ' * (MB // 18),
    "exception-dots": lambda: "Traceback (most recent call last):\n" + "A." * 5000 + "\n",
    "error-lines": lambda: "RuntimeError: boom\n" * (MB // 19),
    "json-keys": lambda: '{"schema_version": ' * (MB // 19),
    "json-deep": lambda: '{"schema_version": 3, "x": ' + "[" * MB,
    "uuid": lambda: "GPU 0: x (UUID: GPU-" + "0" * MB,
    "nvcc": lambda: "Cuda compilation tools, release 1.1, V" + "1." * (MB // 2),
    "pip-rows": lambda: "".join(f"pkg{i}   {i}.0\n" for i in range(100_000)),
    "carriage-returns": lambda: "\r" * MB,
    "typed-keys": lambda: "- PyTorch version: " * (MB // 19),
    "typed-key-lines": lambda: "torch 1\n" * (MB // 8),
    "typed-gpu-counts": lambda: "GPU: " + "8x " * (MB // 3),
    "typed-gpu-indices": lambda: "GPU " + "0," * (MB // 2) + ": H100\n",
    "typed-table-cells": lambda: "| GPU | " * (MB // 8),
    "smi-query-fields": lambda: (
        "Attached GPUs : 1\n" + "    Product Name                          : H100\n" * 20_000
    ),
    "smi-header-pairs": lambda: "Driver Version: 1.1, CUDA Version: 1.1 " * (MB // 40),
    "huge-100MB": lambda: ("PyTorch version: 2.1.0\nsome words here " * 2_800_000)[: 100 * MB],
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_input_stays_linear_and_never_raises(kind: str, seconds_per_mb: float) -> None:
    text = HOSTILE[kind]()
    parsed, seconds = timed(text)
    limit = budget(text, seconds_per_mb)
    assert seconds < limit, f"{kind}: {seconds:.2f} s, budget {limit:.2f} s"
    assert len(parsed.error_text) <= 100_000


def test_a_100_mb_report_keeps_its_head_and_tail(seconds_per_mb: float) -> None:
    head = sample("nvidia_smi_550_rtx4090.txt")
    tail = sample("pip_list_grep_te_issue_1853.txt")
    filler = "lorem ipsum dolor sit amet\n" * (100 * MB // 27)
    text = head + filler + tail
    parsed, seconds = timed(text)
    assert seconds < budget(text, seconds_per_mb)
    assert parsed.facts["gpu.name"] == "NVIDIA GeForce RTX 4090"
    assert parsed.facts["packages.nvidia_cudnn_cu12"] == "9.7.1.26"


def test_bytes_are_decoded_rather_than_refused() -> None:
    data = sample("nvidia_smi_550_rtx4090.txt").encode("utf-8") + b"\xff\xfe"
    parsed = parse_report(cast(str, data))
    assert parsed.facts["gpu.name"] == "NVIDIA GeForce RTX 4090"


def test_a_parser_that_crashes_costs_only_its_own_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(report: Report) -> Findings:
        raise RuntimeError("bug")

    monkeypatch.setattr(parsers, "_PARSERS", (broken, parse_collect_env.parse))
    parsed = parse_report(sample("collect_env_torch_1_12_k2_sherpa_install_notes.txt"))
    assert parsed.facts["torch.version"] == "1.12.0"
    # nvidia-smi's header said CUDA 12.0; now only collect_env's driver version implies it
    assert parsed.sources["driver.cuda_version"].startswith("driver.version: collect_env")


@pytest.mark.parametrize(
    ("source", "text", "kept"),
    [
        (
            "pytorch/ao#3356",
            "{'loss': nan, 'grad_norm': nan, 'learning_rate': 4e-05, 'epoch': 0.01}",
            "'loss': nan",
        ),
        (
            "HRNet/HRNet-Semantic-Segmentation#171",
            "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=33 error=10 : invalid"
            " device ordinal",
            "invalid device ordinal",
        ),
        (
            "tensorflow/docs#2251",
            "Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0.",
            "was compiled with",
        ),
        (
            "paninski-lab/lightning-pose#460",
            "Invalid handle. Cannot load symbol cudnnGetVersion",
            "cudnnGetVersion",
        ),
    ],
    ids=lambda value: value if "#" in str(value) else "",
)
def test_wave2_decisive_lines_are_kept(source: str, text: str, kept: str) -> None:
    """Wave-2 corpus lines that name the cause without the word "Error:" (real samples)."""
    assert kept in parse_report(f"some log line\n{text}\nanother log line\n").error_text
