"""Framework settings (rules/frameworks/settings.toml) and ``te-doctor check --for``: complete,
cited data; the recommended path's settings, or why not and the closest viable path the
framework can express; in text after the snippet, in Markdown and in the JSON report."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.check.schemas import report_schema
from te_doctor.cli.check import FRAMEWORKS
from te_doctor.engine.frameworks import advise, framework_advice, load_frameworks
from te_doctor.engine.paths import load_paths
from te_doctor.engine.recommend import Recommendation
from te_doctor.engine.rule_model import RuleFileError
from te_doctor.snapshot.file import load

FIXTURES = Path(__file__).parent / "fixtures"
PATH_IDS = [p.id for p in load_paths()]
#: Each framework's settings must cite that framework's own repository.
OWN_SOURCE = {
    "megatron": "NVIDIA/Megatron-LM",
    "nemo": "NVIDIA/NeMo",
    "accelerate": "huggingface/accelerate",
    "lightning": "Lightning-AI/pytorch-lightning",
    "hf": "huggingface/transformers",
}


def recommendation(fixture: str) -> Recommendation:
    return run_check(load(FIXTURES / f"{fixture}.json"), GateOptions()).recommendation


def te_doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", *args], capture_output=True, text=True, timeout=120
    )


def test_every_framework_covers_every_path_with_cited_versions() -> None:
    frameworks = load_frameworks(known_paths=PATH_IDS)
    assert tuple(f.id for f in frameworks) == FRAMEWORKS, "--for choices != the data file"
    for framework in frameworks:
        missing = set(PATH_IDS) - set(framework.paths) - set(framework.cannot)
        assert not missing, f"{framework.id}: no settings and no reason for {sorted(missing)}"
        for path_id, settings in framework.paths.items():
            where = f"{framework.id}.path.{path_id}"
            assert OWN_SOURCE[framework.id] in settings.source, where
            assert re.search(r"\d+\.\d+|\d\.x", settings.versions), f"{where}: no version"
        assert all(len(why) > 20 for why in framework.cannot.values()), framework.id


def test_no_framework_claims_fp8_through_a_bf16_flag_or_the_reverse() -> None:
    """A spot check of the data against the paths: FP8 settings name FP8, others do not."""
    quantized = {p.id for p in load_paths() if {"fp8", "nvfp4"} & set(p.families)}
    for framework in load_frameworks():
        for path_id, settings in framework.paths.items():
            says_fp8 = re.search(r"(?i)fp8|fp4|float8|transformer-engine\"", settings.settings)
            where = f"{framework.id}.path.{path_id}: {settings.settings}"
            assert bool(says_fp8) == (path_id in quantized), where


@pytest.mark.parametrize(
    ("fixture", "framework", "path", "cannot", "setting"),
    [
        ("h100-smoke-verified", "megatron", "te-fp8-current", "", "--fp8-recipe tensorwise"),
        ("h100-smoke-verified", "lightning", "te-fp8-current", "", "Float8CurrentScaling()"),
        # accelerate cannot build Float8CurrentScaling: the next viable path it can is delayed.
        (
            "h100-smoke-verified",
            "accelerate",
            "te-fp8-delayed",
            "DelayedScaling, or MXFP8BlockScaling",
            'amax_compute_algo="max"',
        ),
        ("b200", "hf", "te-mxfp8", "", "ACCELERATE_FP8_USE_MXFP8_BLOCK_SCALING=true"),
        # Megatron has no torchao path: the closest viable one it can express is TE-less BF16.
        ("l40s-no-te", "megatron", "torch-amp-bf16", "only through Transformer Engine", "--bf16"),
        ("t4", "nemo", "te-fp16", "", "fp16_mixed()"),
        ("no-gpu-laptop-smoke", "megatron", "", "CUDA GPUs", ""),
    ],
)
def test_advice_for_the_recommended_or_the_closest_path(
    fixture: str, framework: str, path: str, cannot: str, setting: str
) -> None:
    (advice,) = framework_advice([framework], recommendation(fixture))
    assert advice.path == path
    assert (cannot in advice.cannot) if cannot else advice.cannot == ""
    assert setting in advice.settings if setting else advice.settings == ""


def test_nothing_viable_means_nothing_to_set() -> None:
    chosen = recommendation("h100-smoke-verified")
    nothing = Recommendation("", "", "none-viable", "", "", {}, chosen.ranking)
    (framework,) = [f for f in load_frameworks() if f.id == "accelerate"]
    advice = advise(framework, nothing)
    assert (advice.recommended, advice.path, advice.cannot, advice.settings) == ("", "", "", "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("schema = 2\n", "schema: expected 1"),
        ('schema = 1\n[x]\nname = "X"\nform = "f"\nsource = "s"\nextra = 1\n', "x: unknown key"),
        (
            'schema = 1\n[x]\nname = "X"\nform = "f"\nsource = "s"\n[x.path.te-fp9]\n'
            'settings = "a"\nversions = "1.0"\n',
            "x: te-fp9: not an execution path",
        ),
        (
            'schema = 1\n[x]\nname = "X"\nform = "f"\nsource = "s"\n[x.path.cpu]\n'
            'settings = "a"\nversions = "1.0"\n[x.cannot]\ncpu = "no"\n',
            "x: cpu: both in path and in cannot",
        ),
        (
            'schema = 1\n[x]\nname = "X"\nform = "f"\nsource = "s"\n[x.path.cpu]\nsettings = "a"\n',
            "x.path.cpu: versions: expected a non-empty string",
        ),
    ],
    ids=["schema", "key", "path", "both", "versions"],
)
def test_bad_data_names_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "settings.toml"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(RuleFileError, match=re.escape(message)) as raised:
        load_frameworks(file, known_paths=PATH_IDS)
    assert str(file) in str(raised.value)


def test_check_for_prints_the_settings_after_the_snippet() -> None:
    fixture = str(FIXTURES / "h100-smoke-verified.json")
    result = te_doctor("check", "--snapshot", fixture, "--for", "megatron", "--for", "accelerate")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    snippet = out.index("Float8CurrentScaling()")
    megatron = out.index("Megatron-LM, for te-fp8-current (flags of pretrain_gpt.py")
    assert snippet < megatron < out.index("--bf16 --fp8-format hybrid --fp8-recipe tensorwise")
    assert "Hugging Face Accelerate cannot express te-fp8-current: " in out
    assert "The closest it can, viable here: te-fp8-delayed" in out
    markdown = te_doctor("check", "--snapshot", fixture, "--for", "nemo", "--format", "markdown")
    assert "### NeMo settings\n\nNeMo, for `te-fp8-current`" in markdown.stdout
    assert "bf16_with_fp8_current_scaling_mixed()\n```" in markdown.stdout
    assert "Megatron-LM" not in te_doctor("check", "--snapshot", fixture).stdout


def test_the_json_report_carries_the_settings_and_keeps_its_schema() -> None:
    fixture = str(FIXTURES / "b200.json")
    result = te_doctor("check", "--snapshot", fixture, "--for", "lightning", "--format", "json")
    data = json.loads(result.stdout)
    validator = jsonschema.Draft202012Validator(report_schema())
    validator.validate(data)
    assert data["schema"] == "te-doctor/report/v3"
    (advice,) = data["frameworks"]
    assert (advice["framework"], advice["path"]) == ("lightning", "te-mxfp8")
    assert "recipe=MXFP8BlockScaling()" in advice["settings"]
    assert "lightning >= 2.2.0" in advice["versions"]
    del data["frameworks"]  # reports written before --for existed stay valid
    validator.validate(data)


def test_an_unknown_framework_is_a_usage_error() -> None:
    result = te_doctor("check", "--snapshot", str(FIXTURES / "b200.json"), "--for", "keras")
    assert result.returncode == 2
    assert "'keras' is not one of 'megatron', 'nemo', 'accelerate', 'lightning', 'hf'" in (
        result.stderr
    )
