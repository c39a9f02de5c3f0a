"""Error text and its causes: exits in words, the shared capture, the signatures on any error
text, and generic smoke findings stepping back for the signature that names the cause."""

from __future__ import annotations

from typing import Any

import pytest

from te_doctor.check.pipeline import load_rule_set
from te_doctor.engine.error_capture import error_facts, last_error_line
from te_doctor.engine.error_causes import causes_of
from te_doctor.engine.evaluate import Finding, evaluate
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_examples import BASELINE
from te_doctor.engine.rule_model import Severity
from te_doctor.probes.exits import exit_in_words, signal_in_words
from te_doctor.snapshot.facts import Fact

UNDEFINED_TORCH_SYMBOL = (
    "Traceback (most recent call last):\n"
    '  File "child.py", line 3, in <module>\n'
    "ImportError: /venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: "
    "undefined symbol: _ZN3c1015SmallVectorBaseIjE8grow_podEPKvmm"
)


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (-11, "killed by SIGSEGV (segmentation fault)"),
        (-6, "killed by SIGABRT (aborted)"),
        (-9, "killed by SIGKILL (likely the OOM killer)"),
        (127, "exit 127 (not found)"),
        (126, "exit 126 (not executable)"),
        (139, "exit 139 (SIGSEGV (segmentation fault), as a shell reports it)"),
        (1, "exit 1"),
        (-99, "killed by signal 99"),
    ],
)
def test_exits_in_words(code: int, words: str) -> None:
    assert exit_in_words(code) == words


def test_an_unknown_signal_stays_a_number() -> None:
    assert signal_in_words(10) == "SIGUSR1" and signal_in_words(200) == "signal 200"


def test_the_line_shown_is_the_exception_not_trailing_noise() -> None:
    noisy = UNDEFINED_TORCH_SYMBOL + "\nte-doctor smoke: torch warned: something harmless\n\n"
    assert last_error_line(noisy).startswith("ImportError: /venv/lib")
    killed = "the smoke child was killed by SIGSEGV (segmentation fault) during import-te\n"
    faulthandler = 'Fatal Python error: Segmentation fault\n  File "te/__init__.py", line 2'
    line = error_facts(killed + faulthandler, "smoke", "signal")["smoke.error_line"].value
    assert line == killed.strip(), "how the child ended, not the last frame"


def test_signatures_name_the_cause_of_any_error_text() -> None:
    rules, _ = load_rule_set()
    assert {f.rule_id for f in causes_of(UNDEFINED_TORCH_SYMBOL, rules)} >= {"TED778", "TED779"}
    assert causes_of("ModuleNotFoundError: No module named 'torch'", rules) == ()
    assert causes_of("", rules) == ()


def smoke_failure(
    text: str, stage: str = "import-torch", driver_said: str = ""
) -> dict[str, Finding]:
    rules, _ = load_rule_set()
    values: dict[str, Fact[Any]] = {p: Fact.of(v, "example") for p, v in BASELINE.items()}
    values.update(
        {"smoke.outcome": Fact.of("failed", "smoke"), "smoke.stage": Fact.of(stage, "smoke")}
    )
    values.update(error_facts(text, "smoke", "failed"))
    if driver_said:
        values["driver.evidence"] = Fact.of(driver_said, "nvidia:nvml")
    return {f.rule_id: f for f in evaluate(FlatFacts(values, ()), rules) if f.fired}


def test_a_generic_finding_steps_back_and_hands_over_its_paths() -> None:
    fired = smoke_failure(UNDEFINED_TORCH_SYMBOL)
    generic = fired["TED802"]
    assert generic.severity is Severity.INFO and generic.blocks == ()
    assert generic.message.endswith("(the cause: TED778, TED779)")
    assert generic.fix == "See TED778, TED779: the cause of this error, with its fix."
    assert "cpu" in fired["TED779"].blocks, "the CPU path stays ruled out: no false green"


def test_without_a_recognised_cause_the_generic_finding_stands() -> None:
    generic = smoke_failure("ModuleNotFoundError: No module named 'torch'")["TED802"]
    assert generic.severity is Severity.ERROR and "cpu" in generic.blocks


def test_a_warning_signature_alone_does_not_make_it_step_back() -> None:
    # only TED7014 (a warning: pin torch back) recognises a vtable symbol in another extension
    fired = smoke_failure("ImportError: /x/apex_C.so: undefined symbol: _ZTVN5torch8autogradE")
    assert "TED7014" in fired
    assert fired["TED802"].severity is Severity.ERROR and "cpu" in fired["TED802"].blocks


def test_what_the_driver_said_adds_its_cause_and_leaves_the_smoke_findings_alone() -> None:
    mismatch = "NVML: Driver/library version mismatch"
    fired = smoke_failure(UNDEFINED_TORCH_SYMBOL, driver_said=mismatch)
    assert "TED763" in fired, "the driver's words are read by the signatures too"
    generic = fired["TED802"]
    assert generic.severity is Severity.INFO  # still stepped back for TED778/TED779
    assert generic.message.endswith("(the cause: TED778, TED779)")
    assert mismatch not in generic.message
