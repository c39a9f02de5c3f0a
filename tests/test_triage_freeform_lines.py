"""One hand-typed environment line at a time: what each reader of parse_freeform takes from it.

Each row is a line as people type it in a bug template, and every fact it should give; every
fact's source must be that line. The rows are the edge wordings that mutation testing found no
test for (``benchmarks/results/mutation.md``, group triage-freeform).
"""

from __future__ import annotations

import pytest

from te_doctor.triage.parse_common import prepare, source
from te_doctor.triage.parse_freeform import FORMAT, parse

Facts = list[tuple[str, object]]


def read(text: str, skip: tuple[tuple[int, int], ...] = ()) -> Facts:
    """The facts parse() takes from ``text``, checking that each names its own line (without
    Markdown emphasis) as its source."""
    lines = text.replace("**", "").replace("`", "").split("\n")
    found = parse(prepare(text + "\n"), skip)
    for observation in found.observations:
        assert observation.source in {source(FORMAT, line.strip()) for line in lines}
    assert found.formats == ([FORMAT] if found.observations else [])
    return [(o.path, o.value) for o in found.observations]


@pytest.mark.parametrize(
    ("line", "facts"),
    [
        # versions with their words around them
        ("transformers: '4.40.0'", [("packages.transformers", "4.40.0")]),
        ("transformers: ==4.40.0", [("packages.transformers", "4.40.0")]),
        ("transformers: 4.40.0 or newer", []),
        ("transformers: 4.40.0 or 4.41.0", []),
        (
            "transformers: 4.40.0 (from /opt/conda/site-packages)",
            [("packages.transformers", "4.40.0")],
        ),
        ("triton: /opt/triton 2.1", []),
        ("transformers: 4.40.0 from /opt/conda env", [("packages.transformers", "4.40.0")]),
        ("torch: 2.1.0/cu121", []),
        ("torch: 2.1.0 (cu121) (also tried 2.2)", [("torch.version", "2.1.0")]),
        ("torch: 2.1.0, 2.2.0", []),
        ("TE: 2", [("packages.transformer_engine", "2")]),
        # the compiler: collect_env's Ubuntu and Red Hat forms, a compiler named in the value
        (
            "gcc: (Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0",
            [("build.cxx_version", "9.4.0"), ("build.cxx", "gcc")],
        ),
        (
            "gcc: (GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)",
            [("build.cxx_version", "11.4.1"), ("build.cxx", "gcc")],
        ),
        ("gcc: (unclosed 9.4.0", []),
        ("gcc: ()", []),
        ("CXX: g++ 8.5.0", [("build.cxx_version", "8.5.0"), ("build.cxx", "g++")]),
        ("CXX: g++ (GCC) 8.5.0", [("build.cxx_version", "8.5.0"), ("build.cxx", "g++")]),
        (
            "compiler: clang++-17 17.0.6",
            [("build.cxx_version", "17.0.6"), ("build.cxx", "clang++-17")],
        ),
        ("host compiler: 9.4.0", [("build.cxx_version", "9.4.0"), ("build.cxx", "host compiler")]),
        ("gcc: 9", [("build.cxx_version", "9"), ("build.cxx", "gcc")]),
        ("cmake: version 3.30.2", [("build.cmake_version", "3.30.2")]),
        # the driver: its words skipped, a "v." prefix, and at least two release numbers
        ("Driver: NVIDIA RTX Enterprise Driver 581.80", [("driver.version", "581.80")]),
        ("Driver: v. 550.54", [("driver.version", "550.54")]),
        ("Driver: v.550.54.15", [("driver.version", "550.54.15")]),
        ("Driver: version v550.54.15", [("driver.version", "550.54.15")]),
        ("Driver: 550", []),
        ("Python: 3", []),
        ("Python: 3.11", [("host.python_version", "3.11")]),
        ("cuDNN: 9", []),
        ("cuDNN: 9.1", [("cudnn.version", "9.1")]),
        # the driver's CUDA, only where nvidia-smi said it
        ("CUDA: 12.8 (nvidia-smi)", [("driver.cuda_version", "12.8")]),
        ("CUDA: 12.8 per NVIDIA-SMI", [("driver.cuda_version", "12.8")]),
        ("CUDA: 12 (nvidia-smi)", []),
        ("CUDA: 12.8", []),
        ("CUDA: see nvidia-smi", []),
        # the platform: WSL, and Windows by name (a Linux distribution is no fact here)
        ("OS: Ubuntu 22.04 on WSL2", [("host.wsl", True)]),
        ("Platform: Linux-5.15.0-microsoft-standard-WSL2-x86_64", [("host.wsl", True)]),
        ("OS: Ubuntu 22.04", []),
        ("| OS | Windows 11 Pro 10.0.26200 |", [("host.os_name", "Windows 11 Pro 10.0.26200")]),
        ("Platform: Windows-10-10.0.19045-SP0", [("host.os_name", "Windows-10-10.0.19045-SP0")]),
        ("OS: Microsoft Windows 10 Home", [("host.os_name", "Microsoft Windows 10 Home")]),
        ("OS: Windowsill 3", []),
        # GPUs: counts before and after, an index list, an explicit capability, cut names
        ("Compute capability: 8.9", [("gpu.compute_capability", "8.9")]),
        ("Compute capability: about 9", []),
        (
            "GPU: A100 x 4",
            [("gpu.name", "A100"), ("gpu.compute_capability", "8.0"), ("gpus.count", 4)],
        ),
        (
            "GPU: NVIDIA A100 * 2",
            [("gpu.name", "NVIDIA A100"), ("gpu.compute_capability", "8.0"), ("gpus.count", 2)],
        ),
        (
            "| GPU | A100 x 4 |",
            [("gpu.name", "A100"), ("gpu.compute_capability", "8.0"), ("gpus.count", 4)],
        ),
        ("GPU: unknown board x 4", []),
        (
            "GPU: GPU 0: NVIDIA A100-SXM4-80GB",
            [("gpu.name", "NVIDIA A100-SXM4-80GB"), ("gpu.compute_capability", "8.0")],
        ),
        (
            "GPU: NVIDIA L4 with 24GB",
            [("gpu.name", "NVIDIA L4"), ("gpu.compute_capability", "8.9")],
        ),
        ("GPU: custom board (sm_90)", [("gpu.compute_capability", "9.0")]),
        ("GPU: Tesla V100-SXM2...", [("gpu.compute_capability", "7.0")]),
        (
            "GPU 0,1: NVIDIA H100 80GB HBM3",
            [
                ("gpu.name", "NVIDIA H100 80GB HBM3"),
                ("gpu.compute_capability", "9.0"),
                ("gpus.count", 2),
            ],
        ),
        ("GPU 0: NVIDIA A10", [("gpu.name", "NVIDIA A10"), ("gpu.compute_capability", "8.6")]),
        ("GPU 1: NVIDIA A10", []),
        ("GPU 0,1: unknown board", []),
        ("GPU 0,1 Compute Capability: 9.0", [("gpu.compute_capability", "9.0")]),
        # Markdown emphasis and code around keys, and every explicit separator
        ("- **PyTorch version**: 2.3.0", [("torch.version", "2.3.0")]),
        ("`torch`: 2.3.0", [("torch.version", "2.3.0")]),
        ("torch=2.3.0", [("torch.version", "2.3.0")]),
        ("torch==2.3.0", [("torch.version", "2.3.0")]),
        ("| torch | 2.3.0 |", [("torch.version", "2.3.0")]),
        ("torch 2.3.0", []),
    ],
)
def test_one_line(line: str, facts: Facts) -> None:
    assert read(line) == facts


def test_a_line_is_owned_alone() -> None:
    found = parse(prepare("I ran it.\ntorch: 2.3.0\nIt failed.\n"))
    assert found.owned_lines == [(1, 2)]


@pytest.mark.parametrize(("length", "facts"), [(400, [("torch.version", "2.3.0")]), (401, [])])
def test_lines_up_to_400_characters_are_read(length: int, facts: Facts) -> None:
    line = "torch: 2.3.0 "
    assert read(line + "x" * (length - len(line))) == facts


def test_an_empty_skip_range_skips_nothing() -> None:
    assert read("torch: 2.3.0", skip=((0, 0),)) == [("torch.version", "2.3.0")]
    assert read("torch: 2.3.0", skip=((0, 1),)) == []


LIST = "torch 2.1.0\ntriton 2.1.0\ncmake 3.27.1"
LIST_FACTS: Facts = [
    ("torch.version", "2.1.0"),
    ("packages.triton", "2.1.0"),
    ("build.cmake_version", "3.27.1"),
]
SENTENCES = "transformers 4.40.0 and more\npython 3.10 is what I use"


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        (  # three key lines without a separator make a list
            LIST,
            LIST_FACTS,
        ),
        ("torch 2.1.0\ntriton 2.1.0", []),
        (  # a key line two lines above a list belongs to it; one further away does not
            "deepspeed 0.14.0\n\n" + LIST,
            [("packages.deepspeed", "0.14.0"), *LIST_FACTS],
        ),
        (
            "deepspeed 0.14.0\n\n\n" + LIST,
            LIST_FACTS,
        ),
        (
            LIST + "\n\n\ndeepspeed 0.14.0",
            LIST_FACTS,
        ),
        (  # a lone key line after a list and far from it, then a line with a colon
            LIST + "\n\n\n\n\n\ntorch 2.2.0\n\ngcc: 9.4.0",
            [*LIST_FACTS, ("build.cxx_version", "9.4.0"), ("build.cxx", "gcc")],
        ),
        (  # in a list, a version followed by words is a sentence; a comma or a note is not
            f"{LIST}\n{SENTENCES}\naccelerate 0.30.1,\nxformers 0.0.26 (pip)",
            [*LIST_FACTS, ("packages.accelerate", "0.30.1"), ("packages.xformers", "0.0.26")],
        ),
    ],
)
def test_lists_without_separators(text: str, facts: Facts) -> None:
    assert read(text) == facts


def test_with_a_separator_words_after_the_version_do_not_matter() -> None:
    assert read("transformers: 4.40.0 installed\npython: 3.10 is what I use") == [
        ("packages.transformers", "4.40.0"),
        ("host.python_version", "3.10"),
    ]
