"""Versions pinned in sentences and commands (parse_pins), on real reports' lines.

The real lines are read from the corpus by ``source`` (so they cannot drift from it); the ones
that must give nothing are pip's resolver and people speaking of what something needs.
"""

from __future__ import annotations

import pytest

from te_doctor.triage.parse_common import prepare
from te_doctor.triage.parse_pins import parse
from te_doctor.triage.parsers import parse_report
from tests.test_triage_freeform import corpus


def line_of(source: str, needle: str) -> str:
    """The first line of the report's pasted text holding ``needle``."""
    report = corpus()[source]
    text = f"{report['environment_text'] or ''}\n{report['error_excerpt'] or ''}"
    return next(line for line in text.splitlines() if needle in line)


def facts(text: str) -> dict[str, object]:
    return {obs.path: obs.value for obs in parse(prepare(text)).observations}


@pytest.mark.parametrize(
    ("source", "needle", "expected"),
    [
        (
            "NVIDIA/TransformerEngine#1236",
            "flash-attn==",
            {"packages.transformer_engine": "1.11", "packages.flash_attn": "2.6.3"},
        ),
        ("Dao-AILab/flash-attention#821", "pip install", {"packages.flash_attn": "2.5.2"}),
        ("kylesargent/ZeroNVS#35", "torch==", {"packages.torch": "2.0.1+cu118"}),
        (
            "NVIDIA/TransformerEngine#1147",
            "pip install transformer-engine==",
            {"packages.transformer_engine": "1.9.0"},
        ),
        (
            "NVIDIA/TransformerEngine#1981",
            "Requirement already satisfied: transformer_engine_cu12==",
            {"packages.transformer_engine_cu12": "2.5.0"},
        ),
    ],
)
def test_real_pins_in_sentences(source: str, needle: str, expected: dict[str, object]) -> None:
    assert facts(line_of(source, needle) + "\n") == expected


def test_a_pin_in_prose_is_a_fact_triage_reasons_with() -> None:
    parsed = parse_report(line_of("NVIDIA/TransformerEngine#1236", "flash-attn=="))
    assert (parsed.facts["te.version"], parsed.facts["packages.flash_attn"]) == ("1.11", "2.6.3")
    assert parsed.sources["packages.flash_attn"].startswith("pins-in-prose: 'When installing")
    assert "pins-in-prose" in parsed.formats


@pytest.mark.parametrize(
    "text",
    [
        line_of("kohya-ss/sd-scripts#1859", "recommends"),  # advice, not an install
        "The conflict is caused by:\n",
        "    xformers 0.0.22 depends on torch==2.0.1\n",
        "    The user requested torch==2.1.0\n",
        "ERROR: Could not find a version that satisfies the requirement transformer_engine==9.9\n",
        "ERROR: No matching distribution found for flash-attn==2.9.9\n",
        "TE 1.11 requires flash-attn==2.4.2 at most\n",
        "you should upgrade to torch==2.4.0\n",
        "assert flat_first_dim % MXFP8_BLOCK_SIZE == 0\n",  # a comparison, not a pin
        "if x==1: pass\n",
        "assert version == 2.1\n",
        "pkg==\n",
        "torch==two\n",
        "==2.1.0\n",
        "a.b==c.d\n",
        "http://host/torch==2.1.0\n",  # part of a path, not a name
    ],
)
def test_what_is_needed_or_compared_is_not_installed(text: str) -> None:
    assert facts(text) == {}


def test_a_version_the_paste_may_cut_is_not_read() -> None:
    """Without a newline after it, ``torch==2.1`` may be the start of ``torch==2.1.2``."""
    assert facts("I installed torch==2.1") == {}
    assert facts("I installed `torch==2.1.2`") == {"packages.torch": "2.1.2"}  # closed by `
    assert facts("I installed torch==2.1.2 today") == {"packages.torch": "2.1.2"}


def test_a_sentence_ending_in_a_pin_keeps_the_version_without_its_full_stop() -> None:
    assert facts("It pulled in flash-attn==2.6.3.\n") == {"packages.flash_attn": "2.6.3"}


def test_lines_another_parser_read_are_left_alone() -> None:
    text = "torch==2.1.0\nnumpy==1.26.4\ntriton==2.1.0\n"
    assert parse(prepare(text), [(0, 3)]).observations == []
    assert parse_report(text).sources["packages.torch"].startswith("pip-freeze")


@pytest.mark.parametrize(
    "text",
    [
        "==" * 5000,
        "a==" * 5000 + "\n",
        "x" * 3000 + "==1.0\n",
        "\x00==\x01\n",
        "torch==" + "9" * 90,
    ],
)
def test_garbage_states_nothing_and_never_raises(text: str) -> None:
    assert facts(text) == {}


def test_lines_that_give_nothing_do_not_stop_the_reading() -> None:
    text = "xformers 0.0.22 depends on torch==2.0.1\nbut I installed torch==2.1.0\n"
    assert facts(text) == {"packages.torch": "2.1.0"}
    skipped = "numpy==1.26.4\nscipy==1.13.0\nthen it pulled in flash-attn==2.6.3\n"
    found = parse(prepare(skipped), [(0, 2)])
    assert [(o.path, o.value) for o in found.observations] == [("packages.flash_attn", "2.6.3")]


def test_a_line_up_to_2000_characters_is_read() -> None:
    line = "I installed torch==2.1.0 " + "x" * (2000 - 25)
    assert len(line) == 2000
    assert facts(line + "\n") == {"packages.torch": "2.1.0"}
    assert facts(line + "x\n") == {}


@pytest.mark.parametrize(
    ("source", "needle", "release"),
    [
        ("huggingface/accelerate#1282", "nvcr.io", "22.09"),  # "docker from: nvcr.io/..."
        ("NVIDIA/TransformerEngine#985", "FROM nvcr.io", "24.03"),  # a Dockerfile line
        ("NVIDIA/Megatron-LM#1274", "nvcr.io", "24.04"),  # inside a `docker run` command
    ],
)
def test_real_ngc_pytorch_images_name_the_container_release(
    source: str, needle: str, release: str
) -> None:
    assert facts(line_of(source, needle) + "\n") == {"host.ngc_pytorch_version": release}


def test_an_ngc_image_is_a_fact_triage_reasons_with() -> None:
    parsed = parse_report(line_of("huggingface/accelerate#1282", "nvcr.io"))
    assert parsed.facts["host.ngc_pytorch_version"] == "22.09"
    assert parsed.sources["host.ngc_pytorch_version"].startswith("ngc-container: 'docker from:")
    assert "ngc-container" in parsed.formats


@pytest.mark.parametrize(
    "text",
    [
        "docker pull nvcr.io/nvidia/pytorch:24.0",  # cut inside the tag
        "nvcr.io/nvidia/pytorch:latest\n",
        "nvcr.io/nvidia/nemo:24.05\n",  # another container: not the PyTorch release
        "nvcr.io/nvidia/pytorch:\n" * 3000,
        "xnvcr.io/nvidia/pytorch:24.03-py3\n",
    ],
)
def test_what_names_no_ngc_pytorch_release_gives_nothing(text: str) -> None:
    assert facts(text) == {}


def test_two_ngc_releases_in_one_paste_are_a_conflict_not_a_fact() -> None:
    parsed = parse_report(
        "FROM nvcr.io/nvidia/pytorch:24.03-py3\nnow on nvcr.io/nvidia/pytorch:25.01-py3\n"
    )
    assert "host.ngc_pytorch_version" not in parsed.facts
    assert parsed.conflicts["host.ngc_pytorch_version"] == ("24.03", "25.01")
