"""`te-doctor triage`: diagnose from pasted text with the same rules, ranked, and redacted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from te_doctor.check.pipeline import load_rule_set
from te_doctor.engine.rule_model import Severity
from te_doctor.render.triage_render import triage_markdown
from te_doctor.render.triage_render import triage_text as render_text
from te_doctor.triage.diagnose import diagnose, pasted_facts
from te_doctor.triage.parsers import parse_report
from tests.conftest import skip_unless_shared

CASES = Path(__file__).resolve().parents[2] / "shared" / "cases" / "dev-cases.json"
RULES, _ = load_rule_set()


def triage_text(text: str) -> Any:
    parsed = parse_report(text)
    return diagnose(
        pasted_facts(parsed.facts, parsed.sources, parsed.error_text, parsed.absent),
        RULES,
        parsed.formats,
        parsed.unread_text,
    )


def cases() -> list[dict[str, Any]]:
    skip_unless_shared(CASES)
    data: list[dict[str, Any]] = json.loads(CASES.read_text(encoding="utf-8"))
    return data


def report_text(case: dict[str, Any]) -> str:
    """The case as a reporter would paste it: the environment block and the error."""
    parts = [case.get("collect_env_text") or "", case.get("error_excerpt") or ""]
    return "\n\n".join(part for part in parts if part)


def test_dev_cases_hit_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """Every case with an error text or enough environment: its category among the top causes."""
    usable = [c for c in cases() if report_text(c).strip()]
    missed = set()
    for case in usable:
        top = [f.category for f in triage_text(report_text(case)).causes[:3]]
        if case["category"] not in top:
            missed.add(case["source"])
    with capsys.disabled():
        hits = len(usable) - len(missed)
        print(f"\ndev-cases triage hit rate: {hits}/{len(usable)} = {hits / len(usable):.0%}")
    # pytorch/pytorch#149845 is filed under driver-too-old, yet its text says "no kernel image"
    # (an architecture mismatch); everything else must be found.
    assert missed <= {"pytorch/pytorch#149845"}, sorted(missed)


def test_wording_can_vary() -> None:
    """Versions, paths and line numbers change from report to report; the cause must not."""
    for text in (
        '  File "/opt/conda/lib/python3.10/site-packages/x.py", line 12\n'
        "ImportError: /opt/conda/lib/python3.10/site-packages/transformer_engine_torch.cpython-310"
        "-x86_64-linux-gnu.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs",
        "ImportError: /home/bob/venv/lib/python3.12/site-packages/transformer_engine_torch"
        ".cpython-312-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE",
    ):
        causes = triage_text(text).causes
        assert causes and causes[0].category in ("import-abi", "torch-version")


def test_error_matches_rank_first_and_missing_facts_become_questions() -> None:
    text = (
        "GPU 0: NVIDIA GeForce RTX 3090\n"
        "AssertionError: Device compute capability 8.9 or higher required for FP8 execution."
    )
    diagnosis = triage_text(text)
    assert diagnosis.causes[0].rule_id == "TED724"  # the pasted error's own signature first
    assert all(c.severity is Severity.ERROR for c in diagnosis.causes[:1])
    assert any("nvidia-smi" in r.what or "pip list" in r.what for r in diagnosis.ask_for)


def test_a_signature_that_also_needed_an_environment_fact_ranks_above_the_line_alone() -> None:
    """TED7010 and TED7074 read the same error line at the same severity; TED7074 also needed
    the pasted OS to be Windows, so it is the narrower explanation and comes first."""
    line = "RuntimeError: Rowwise scaling is not currently supported on your device\n"
    on_windows = [c.rule_id for c in triage_text("OS: Windows 11 Pro\n\n" + line).causes]
    assert on_windows[:2] == ["TED7074", "TED7010"]
    on_linux = [c.rule_id for c in triage_text("OS: Ubuntu 22.04.4 LTS (x86_64)\n\n" + line).causes]
    assert on_linux[0] == "TED7010" and "TED7074" not in on_linux


def te_doctor(args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", "triage", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def test_cli_reads_stdin_and_files_and_redacts(tmp_path: Path) -> None:
    pasted = (
        b"Traceback (most recent call last):\n"
        b'  File "/home/alice/train.py", line 3, in <module>\n'
        b"RuntimeError: cudnn shared object not found.\n"
        b"HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456\n"
    )
    result = te_doctor(["-"], pasted)
    out = result.stdout.decode()
    assert result.returncode == 0 and "TED705" in out
    assert "alice" not in out and "hf_AbCdEfGh" not in out
    path = tmp_path / "report.txt"
    path.write_bytes(pasted)
    markdown = te_doctor([str(path), "--format", "markdown", "--no-redact"]).stdout.decode()
    assert markdown.startswith("### te-doctor triage") and "TED705" in markdown
    data = json.loads(te_doctor([str(path), "--format", "json"]).stdout)
    assert data["schema"] == "te-doctor/triage/v1" and data["causes"][0]["rule_id"] == "TED705"


@pytest.mark.parametrize(
    "payload",
    [b"", b"\x00\xff\xfe\x89PNG\r\n\x1a\n" * 1000, b"a" * 5_000_000, b"Error: " + b"(" * 200_000],
    ids=["empty", "binary", "five-mb-of-a", "backtracking-bait"],
)
def test_odd_input_finishes_with_a_clear_result(payload: bytes) -> None:
    result = te_doctor(["-"], payload)  # a hang fails on the helper's timeout
    assert result.returncode == 0 and b"te-doctor triage" in result.stdout
    assert b"Traceback" not in result.stderr


def test_unreadable_file_is_exit_2() -> None:
    result = te_doctor(["/nonexistent/report.txt"])
    assert result.returncode == 2 and b"cannot read" in result.stderr


def test_a_fact_not_pasted_is_not_evidence() -> None:
    """pytorch/pytorch#37320: collect_env gives the driver version but no GPU count; "the
    driver does not answer" (``driver.gpu_count is unknown``) must not fire on that silence."""
    text = (
        "PyTorch version: 1.5.0\n"
        "Is debug build: No\n"
        "CUDA used to build PyTorch: 10.2\n"
        "\n"
        "OS: Ubuntu 18.04.3 LTS\n"
        "Python version: 3.6\n"
        "Is CUDA available: No\n"
        "CUDA runtime version: 10.0.130\n"
        "Nvidia driver version: 410.104\n"
    )
    diagnosis = triage_text(text)
    assert "TED204" not in [c.rule_id for c in diagnosis.causes]
    undecided = {f.rule_id: f for f in diagnosis.undecided}
    assert "TED204" in undecided
    # both of its "is unknown" leaves read facts the paste does not state
    assert [m.path for m in undecided["TED204"].missing] == ["driver.gpu_count", "driver.nvml"]


def test_an_unstated_fact_reads_not_in_the_paste() -> None:
    """TED706's message names TE's core package; a bare error line does not state it."""
    text = "OSError: libcublas.so.13: cannot open shared object file: No such file or directory\n"
    diagnosis = triage_text(text)
    cause = next(c for c in diagnosis.causes if c.rule_id == "TED706")
    assert "not in the paste" in cause.message and "?" not in cause.message

    for rendered in (render_text(diagnosis), triage_markdown(diagnosis)):
        assert "built for CUDA not in the paste" in rendered
        assert "CUDA ?" not in rendered and "(? was built" not in rendered


def test_a_format_just_parsed_is_never_asked_for() -> None:
    smi = (Path(__file__).parent / "data" / "triage" / "nvidia_smi_550_rtx4090.txt").read_text(
        encoding="utf-8"
    )
    asked = {r.what for r in triage_text(smi).ask_for}
    assert not any("nvidia-smi" in what for what in asked)
    assert any("collect_env" in what for what in asked)  # what it lacks is still asked for
    bare = {r.what for r in triage_text("RuntimeError: CUDA error: unknown error\n").ask_for}
    assert any("nvidia-smi" in what for what in bare)


def test_an_error_quoted_in_a_sentence_is_matched_after_the_error_lines() -> None:
    """accelerate's RTX 40xx refusal, quoted in prose (QwenLM/Qwen-VL#447's wording), and an
    error line that has its own signature: both are causes, the error line's first."""
    text = (
        "I get 'Using RTX 4000 series doesn't support faster communication broadband via P2P "
        "or IB.' when I start.\n"
        "OSError: libcudnn.so.9: cannot open shared object file: No such file or directory\n"
    )
    parsed = parse_report(text)
    assert "RTX 4000" not in parsed.error_text and "RTX 4000" in parsed.unread_text
    ids = [c.rule_id for c in triage_text(text).causes]
    assert ids[0] == "TED705" and "TED7009" in ids


def test_a_named_gpu_without_a_count_is_at_least_one_gpu() -> None:
    """`GPU: RTX 3090` states a GPU but not how many: FP8's cc 8.9 check still fires."""
    diagnosis = triage_text(
        "- GPU: NVIDIA GeForce RTX 3090\n- PyTorch: 2.4.0+cu121\n- Recipe: FP8\n"
    )
    assert "TED102" in [c.rule_id for c in diagnosis.causes]
    unnamed = triage_text("- PyTorch: 2.4.0+cu121\n- Recipe: FP8\n")
    assert "TED102" not in [c.rule_id for c in unnamed.causes]


def test_a_paste_without_the_loader_path_keeps_the_driver_too_old_error() -> None:
    """A paste never shows which libcuda.so.1 the loader picks: no cuda-compat is assumed, so
    TED201 still fires (as before forward compatibility was modelled) and TED210 does not."""
    text = (
        "PyTorch version: 2.9.0+cu130\n"
        "CUDA used to build PyTorch: 13.0\n"
        "\n"
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 535.161.08   Driver Version: 535.161.08   CUDA Version: 12.2     |\n"
        "|-------------------------------+----------------------+----------------------+\n"
    )
    diagnosis = triage_text(text)
    causes = [c.rule_id for c in diagnosis.causes]
    assert "TED201" in causes
    assert "TED210" not in causes + [f.rule_id for f in diagnosis.undecided]


def test_a_fix_written_over_several_lines_prints_as_one() -> None:
    """A rule file wraps long fixes; the triage text and Markdown show each as one line (a
    continuation at column 0 reads as a new item, and breaks a Markdown list)."""
    diagnosis = triage_text(
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install "
        "root.\n"
    )
    finding = next(f for f in diagnosis.causes if f.rule_id == "TED771")
    assert "\n" in finding.fix  # the rule file wraps it
    one_line = " ".join(finding.fix.split())
    assert f"   fix: {one_line}\n" in render_text(diagnosis)
    assert f"   - Fix: {one_line}\n" in triage_markdown(diagnosis)


def test_a_gpu_without_fp8_explains_only_a_report_about_fp8() -> None:
    """TED102 (no FP8 below sm_89) is a cause of an FP8 report, not of any report that names
    an RTX 3090; error signatures are never held back."""
    env = "- GPU: NVIDIA GeForce RTX 3090\n- PyTorch: 2.4.0+cu121\n\n"
    about_attention = (
        env + "NotImplementedError: No operator found for `memory_efficient_attention`\n"
    )
    assert "TED102" not in [c.rule_id for c in triage_text(about_attention).causes]
    about_fp8 = env + "I enabled fp8_autocast and training fails\n"
    assert "TED102" in [c.rule_id for c in triage_text(about_fp8).causes]
    refused = (
        env
        + "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.\n"
    )
    assert triage_text(refused).causes[0].rule_id == "TED724"


_FA_REFUSAL = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/app.py", line 9, in <module>\n'
    "    out = flash_attn_func(q, k, v)\n"
    "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n"
)


def test_prose_can_rule_out_a_signature_the_error_line_fired() -> None:
    """The error line alone reads as "a GPU older than Ampere" (TED7016); a sentence naming a
    Blackwell GPU is that rule's exclusion, so it stays silent and the old-build cause leads."""
    alone = [c.rule_id for c in triage_text(_FA_REFUSAL).causes]
    assert alone[0] == "TED7016"
    with_gpu = [c.rule_id for c in triage_text("I have an RTX 5090\n" + _FA_REFUSAL).causes]
    assert "TED7016" not in with_gpu
    assert with_gpu[0] == "TED7138"


def test_a_service_log_reads_as_the_program_printed_it() -> None:
    """journald puts its prefix on every line; xFormers' two-line warning is read whole."""
    text = (
        "Aug 12 10:38:34 fileserver unsloth[4073658]: WARNING[XFORMERS]: xFormers can't load "
        "C++/CUDA extensions. xFormers was built for:\n"
        "Aug 12 10:38:34 fileserver unsloth[4073658]:     PyTorch 2.10.0+cu128 with CUDA 1208 "
        "(you have 2.11.0+cu130)\n"
    )
    assert "TED7034" in [c.rule_id for c in triage_text(text).causes]
