"""te-doctor's own check report pasted into a bug report, as text, Markdown or JSON: every fact
it reads is the machine's, the smoke error comes through, and te-doctor's own sentences (which
name causes) never fire an error signature."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions, Report
from te_doctor.engine.error_causes import signatures
from te_doctor.engine.flatten import flatten
from te_doctor.render.check_renderers import CHECK_RENDERERS, CheckFormat
from te_doctor.render.style import Style
from te_doctor.snapshot.file import load
from te_doctor.triage.diagnose import NOT_PASTED
from te_doctor.triage.parse_check_report import JSON_FORMAT, MARKDOWN_FORMAT, TEXT_FORMAT
from te_doctor.triage.parsers import parse_report
from tests.test_triage import RULES, triage_text

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
FORMATS = {
    CheckFormat.TEXT: TEXT_FORMAT,
    CheckFormat.MARKDOWN: MARKDOWN_FORMAT,
    CheckFormat.JSON: JSON_FORMAT,
}
STYLES = {
    "plain": Style(),
    "ascii-80-columns-verbose": Style(unicode=False, width=80, verbose=True),
}
#: Facts the report states for most machines: the read-back must find them when known.
CORE = ("gpu.name", "gpu.compute_capability", "driver.version", "torch.version", "te.version")


@functools.cache
def checked(fixture: Path) -> Report:
    return run_check(load(fixture), GateOptions())


def rendered(fixture: Path, fmt: CheckFormat, style: Style = STYLES["plain"]) -> str:
    return CHECK_RENDERERS[fmt](checked(fixture), style)


@functools.cache
def machine_facts(fixture: Path) -> dict[str, object]:
    return {p: f.value for p, f in flatten(load(fixture)).values.items() if f.known}


@pytest.mark.parametrize("style", STYLES, ids=str)
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_every_fact_read_back_is_the_machines(fixture: Path, fmt: CheckFormat, style: str) -> None:
    parsed = parse_report(rendered(fixture, fmt, STYLES[style]))
    truth = machine_facts(fixture)
    assert FORMATS[fmt] in parsed.formats
    wrong = {
        path: (value, truth.get(path))
        for path, value in parsed.facts.items()
        if not path.startswith("smoke.") and str(truth.get(path)) != str(value)
    }
    assert not wrong
    stated = {path for path in CORE if truth.get(path) is not None}
    assert stated <= set(parsed.facts)
    assert not [path for path in parsed.absent if path in truth]  # "not installed" is true


def test_a_report_of_a_machine_without_a_driver_says_so() -> None:
    """The report says "not installed" in words; triage reads it as the driver's absence."""
    fixture = Path(__file__).parent / "fixtures" / "no-gpu-laptop.json"
    for fmt in FORMATS:
        parsed = parse_report(rendered(fixture, fmt))
        assert {"driver.version", "te.version"} <= set(parsed.absent), fmt
        assert "TED101" in [c.rule_id for c in triage_text(rendered(fixture, fmt)).causes], fmt


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize(
    "fixture",
    [f for f in FIXTURES if not machine_facts(f).get("smoke.error_text")],
    ids=lambda p: p.stem,
)
def test_no_signature_fires_on_the_reports_own_words(fixture: Path, fmt: CheckFormat) -> None:
    """A report without a smoke error holds no error: its findings' words are not one."""
    diagnosis = triage_text(rendered(fixture, fmt))
    reading_errors = {rule.id for rule in signatures(RULES)}
    assert not [c.rule_id for c in diagnosis.causes if c.rule_id in reading_errors]


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_a_cause_read_from_the_report_needs_no_fact_it_leaves_out(
    fixture: Path, fmt: CheckFormat
) -> None:
    """A cause found in te-doctor's own report says what the report states: its message never
    puts "not in the paste" where the check named a fact (a core package the report omits)."""
    causes = triage_text(rendered(fixture, fmt)).causes
    assert not [(c.rule_id, c.message) for c in causes if NOT_PASTED in c.message]


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_the_failed_smoke_gemm_is_the_pastes_error(fmt: CheckFormat) -> None:
    fixture = Path(__file__).parent / "fixtures" / "h100-fp8-gemm-fails.json"
    text = rendered(fixture, fmt, Style(width=60))
    parsed = parse_report(text)
    assert "RuntimeError: CUBLAS_STATUS_NOT_SUPPORTED when calling cublasLtMatmul" in (
        parsed.error_text
    )
    assert triage_text(text).causes[0].rule_id == "TED742"


def test_an_error_pasted_after_the_report_is_still_read() -> None:
    fixture = Path(__file__).parent / "fixtures" / "h100-cuda12-te-ok.json"
    error = "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"
    for fmt in FORMATS:
        parsed = parse_report(f"{rendered(fixture, fmt)}\nthen my job failed:\n{error}\n")
        assert error in parsed.error_text, fmt


def test_a_gpu_t4_report_names_fp8_and_bf16_as_causes() -> None:
    """The report is about FP8 by definition, so the GPU's missing FP8 is a cause."""
    fixture = Path(__file__).parent / "fixtures" / "t4.json"
    causes = [c.rule_id for c in triage_text(rendered(fixture, CheckFormat.MARKDOWN)).causes]
    assert causes[:2] == ["TED102", "TED114"]


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_a_report_cut_anywhere_gives_only_true_facts(fmt: CheckFormat) -> None:
    fixture = Path(__file__).parent / "fixtures" / "two-te-variants.json"
    text = rendered(fixture, fmt)
    truth = machine_facts(fixture)
    for cut in range(0, len(text), max(len(text) // 97, 1)):
        parsed = parse_report(text[:cut])
        for path, value in parsed.facts.items():
            if not path.startswith("smoke."):
                assert str(truth.get(path)) == str(value), (cut, path, value)


def test_garbage_in_the_report_shapes_gives_no_facts() -> None:
    garbage = "\n".join(
        [
            "te-doctor 9 check: x",
            "✓ GPU: 3x (cc 99.99.9)",
            "✓ NVIDIA driver: (CUDA )",
            "✓ PyTorch: built for CUDA",
            "✓ Transformer Engine: x (CUDA y core, z)",
            "## te-doctor check: PASS",
            "| ok | cuDNN | not found |",
            json.dumps({"schema": "te-doctor/report/v3", "areas": [{"name": "GPU"}, 7, None]}),
            '{"schema": "te-doctor/report/v3", "areas": [',
        ]
    )
    parsed = parse_report(garbage * 50)
    assert {p: v for p, v in parsed.facts.items() if not p.startswith("smoke.")} == {}


def test_a_stage_with_a_hyphen_gives_its_error(tmp_path: Path) -> None:
    """Stages are named like ``import-torch``; the text report's stage line is read whatever
    the name (te-doctor check on a machine without torch says ``stage import-torch: ...``)."""
    data = json.loads(
        (Path(__file__).parent / "fixtures" / "h100-fp8-gemm-fails.json").read_text("utf-8")
    )
    error = "ModuleNotFoundError: No module named 'torch'"
    data["smoke"]["stage"]["value"] = "import-torch"
    data["smoke"]["error_text"]["value"] = error
    data["smoke"]["checks"] = []
    fixture = tmp_path / "no-torch.json"
    fixture.write_text(json.dumps(data), encoding="utf-8")
    assert error in parse_report(rendered(fixture, CheckFormat.TEXT)).error_text
