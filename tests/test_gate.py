"""The report and its CI gate on hand-made facts, rules and paths: every reason the gate fails,
the names it refuses, and the machine header's facts."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from te_doctor.check.report import GateOptions, Machine, Report, build_report
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.paths import load_paths, path_names
from te_doctor.engine.rule_model import Severity
from te_doctor.errors import TeDoctorError
from te_doctor.snapshot.absent import not_run
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.file import load
from te_doctor.snapshot.model import ProbeStatus
from tests.hand_made import ABSENT_REASON, UNKNOWN_REASON, flat, path, rule

SNAPSHOT = dataclasses.replace(
    load(Path(__file__).parent / "fixtures" / "no-gpu-laptop.json"),
    smoke=not_run("test"),
    probes=(
        ProbeStatus(name="host", state="ok", detail="", duration_ms=1.0),
        ProbeStatus(name="nvidia", state="error", detail="probe nvidia failed", duration_ms=1.0),
        ProbeStatus(name="cuda", state="skipped", detail="no driver", duration_ms=1.0),
    ),
)
#: A GPU path that needs Ada and TE, and the CPU.
PATHS = (
    path("fp8", ["gpu.compute_capability >= 8.9", "te.version is present"], ("fp8", "gpu")),
    path("cpu", ["host.arch is present"], ("cpu",)),
)


#: An error that fires on TE 2.1, a warning on TE < 3 and an info rule that always fires.
RULES = (
    rule("TED991", "te.version < 2.2", severity=Severity.ERROR),
    rule("TED992", "te.version < 3.0", severity=Severity.WARNING),
    rule("TED993", "host.arch is present", severity=Severity.INFO),
)


def facts(
    te: str | None = "2.5.0", cc: str = "9.0", gpus: Any = 2, names: tuple[Any, ...] = ()
) -> FlatFacts:
    values = {
        "te.version": te,
        "gpu.compute_capability": cc,
        "gpus.count": gpus,
        "host.arch": "x86_64",
        "driver.version": "560.35",
        "torch.version": None,
    }
    return flat(values, names)


def report(flat: FlatFacts | None = None, **options: Any) -> Report:
    return build_report(SNAPSHOT, flat or facts(), RULES, PATHS, GateOptions(**options), "9.9")


@pytest.mark.parametrize(
    ("te", "fail_on", "reasons"),
    [
        ("2.5.0", "error", ()),
        ("2.5.0", "warning", ("1 finding(s) at or above --fail-on warning: TED992",)),
        ("2.1.0", "error", ("1 finding(s) at or above --fail-on error: TED991",)),
        ("2.1.0", "warning", ("2 finding(s) at or above --fail-on warning: TED991, TED992",)),
        ("2.1.0", "never", ()),
    ],
)
def test_fail_on_counts_fired_findings_at_or_above_its_severity(
    te: str, fail_on: str, reasons: tuple[str, ...]
) -> None:
    gate = report(facts(te=te), fail_on=fail_on).gate
    assert gate.reasons == reasons
    assert gate.passed is (not reasons)


@pytest.mark.parametrize("name", ["TED991", "rule-ted991"])
def test_an_ignored_rule_neither_shows_nor_fails_the_gate(name: str) -> None:
    ignored = report(facts(te="2.1.0"), ignore=(name,))
    assert ignored.gate.passed
    assert [f.rule_id for f in ignored.findings] == ["TED992", "TED993"]


def test_no_viable_path_fails_the_gate_unless_fail_on_never() -> None:
    no_cpu = build_report(SNAPSHOT, facts(te=None), RULES, PATHS[:1], GateOptions(), "9.9")
    assert no_cpu.gate.reasons == ("no execution path is viable here",)
    never = build_report(
        SNAPSHOT, facts(te=None), RULES, PATHS[:1], GateOptions(fail_on="never"), "9.9"
    )
    assert never.gate.passed


@pytest.mark.parametrize(
    ("gpus", "passed"),
    [(2, False), (1, False), (0, True), ("?", True), (None, True)],
)
def test_only_the_cpu_next_to_gpus_fails_the_gate(gpus: Any, passed: bool) -> None:
    gate = report(facts(te=None, gpus=gpus)).gate
    assert gate.passed is passed
    if not passed:
        assert gate.reasons == (f"only the CPU path is viable on a machine with {gpus} GPU(s)",)


def test_a_gpu_path_viable_beside_the_cpu_passes() -> None:
    assert report(facts(gpus=1)).gate.passed


@pytest.mark.parametrize(
    ("require", "reasons"),
    [
        (("fp8",), ()),
        (("cpu",), ()),
        (("gpu", "fp8"), ()),
    ],
)
def test_require_passes_when_a_path_it_names_is_viable(
    require: tuple[str, ...], reasons: tuple[str, ...]
) -> None:
    assert report(require=require).gate.reasons == reasons


def test_require_names_the_paths_none_of_which_is_viable() -> None:
    gate = report(facts(te=None, gpus=0), require=("gpu", "cpu")).gate
    assert gate.reasons == ("--require gpu: no viable execution path (fp8)",)
    never = report(facts(te=None, gpus=0), require=("fp8",), fail_on="never").gate
    assert never.reasons == ("--require fp8: no viable execution path (fp8)",)


def test_require_lists_every_path_of_a_family() -> None:
    paths = (*PATHS, path("bf16", ["gpu.compute_capability >= 8.0", "te.version >= 9"], ("gpu",)))
    gate = build_report(
        SNAPSHOT, facts(te=None), RULES, paths, GateOptions(require=("gpu",)), "9.9"
    ).gate
    assert gate.reasons[-1] == "--require gpu: no viable execution path (fp8, bf16)"


def test_a_path_named_like_its_family_is_listed_once() -> None:
    """The shipped ``cpu`` path is also the ``cpu`` family: named once, not "(cpu, cpu)"."""
    named = path_names(load_paths())["cpu"]
    assert named.count("cpu") == 1
    assert set(named) == {p.id for p in load_paths() if "cpu" in p.families} | {"cpu"}
    gate = report(facts(te=None, gpus=0), require=("cpu",)).gate
    assert gate.passed
    no_cpu = build_report(
        SNAPSHOT, facts(te=None), RULES, PATHS[:1], GateOptions(require=("fp8",)), "9.9"
    )
    assert no_cpu.gate.reasons[-1] == "--require fp8: no viable execution path (fp8)"


@pytest.mark.parametrize(
    ("gpus", "expect", "reason"),
    [
        (8, 8, None),
        (9, 8, None),
        (7, 8, "--expect-gpus 8: 7 visible"),
        (0, 1, "--expect-gpus 1: 0 visible"),
        ("?", 1, f"--expect-gpus 1: unknown ({UNKNOWN_REASON}) visible"),
        (None, 1, f"--expect-gpus 1: unknown ({ABSENT_REASON}) visible"),
        ("?", 0, None),
    ],
)
def test_expect_gpus_needs_that_many_known_gpus(gpus: Any, expect: int, reason: str | None) -> None:
    gate = report(facts(gpus=gpus), expect_gpus=expect, fail_on="never").gate
    assert gate.reasons == ((reason,) if reason else ())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ignore": ("TED000",)}, "--ignore TED000: no rule has that id or name"),
        ({"require": ("fp16",)}, "--require fp16: unknown execution path; choose from "),
        ({"fail_on": "info"}, "--fail-on info: choose from error, warning, never"),
    ],
)
def test_unknown_names_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(TeDoctorError, match="^" + message.replace("(", r"\(")) as raised:
        report(**options)
    if "require" in options:
        assert str(raised.value).endswith("choose from cpu, fp8, gpu")


def test_the_report_keeps_what_it_was_built_from() -> None:
    built = report(facts(te="2.1.0"), fail_on="warning")
    assert built.schema == "te-doctor/report/v3"
    assert built.te_doctor_version == "9.9"
    assert built.options == GateOptions(fail_on="warning")
    assert built.smoke is SNAPSHOT.smoke
    assert [p.name for p in built.probe_errors] == ["nvidia"]
    assert built.recommendation.path == "fp8"
    assert [f.rule_id for f in built.fired()] == ["TED991", "TED992", "TED993"]


@pytest.mark.parametrize(
    ("names", "gpus"),
    [
        (("NVIDIA H100", "NVIDIA H100", "NVIDIA A100"), "2x NVIDIA H100, 1x NVIDIA A100"),
        (("NVIDIA A100", "NVIDIA H100", "NVIDIA A100"), "2x NVIDIA A100, 1x NVIDIA H100"),
        (("NVIDIA L4", "?"), "1x NVIDIA L4"),
        ((), "no visible GPU"),
        (("?",), "no visible GPU"),
    ],
)
def test_the_header_counts_visible_gpus_by_name(names: tuple[str, ...], gpus: str) -> None:
    assert report(facts(names=names)).machine.gpus == gpus


def test_the_header_shows_versions_or_what_is_missing() -> None:
    machine = report(facts(te=None)).machine
    assert machine == Machine(
        gpus="no visible GPU",
        driver="560.35",
        torch="not installed",
        transformer_engine="not installed",
        recorded_at=SNAPSHOT.meta.created_at,
        python="/home/alice/.venvs/llm/bin/python3 (Python 3.12.3): "
        "te-doctor's own interpreter (no other environment is active)",
    )
    no_driver = dataclasses.replace(
        facts(), values={**facts().values, "driver.version": Fact.absent("none", "t")}
    )
    shown = report(no_driver).machine
    assert (shown.driver, shown.transformer_engine) == ("no driver", "2.5.0")
    with_torch = dataclasses.replace(
        facts(), values={**facts().values, "torch.version": Fact.of("2.4.0+cu121", "t")}
    )
    assert report(with_torch).machine.torch == "2.4.0+cu121"


def test_the_header_says_unknown_where_a_probe_could_not_tell() -> None:
    blind = dataclasses.replace(
        facts(),
        values={
            **facts().values,
            "driver.version": Fact.unknown("NVML hung", "nvidia"),
            "gpus.count": Fact.unknown("NVML hung", "nvidia"),
        },
    )
    machine = report(blind).machine
    assert (machine.gpus, machine.driver) == ("GPUs unknown", "unknown")


def test_the_header_names_an_interpreter_it_knows_nothing_about() -> None:
    host = dataclasses.replace(
        SNAPSHOT.host,
        python_executable=Fact.unknown("the interpreter did not answer", "host"),
        python_version=Fact.unknown("the interpreter did not answer", "host"),
        python_chosen_by=Fact.absent("not recorded", "host"),
    )
    unknown = dataclasses.replace(SNAPSHOT, host=host)
    built = build_report(unknown, facts(), RULES, PATHS, GateOptions(), "9.9")
    assert built.machine.python == "an unknown interpreter"


def test_the_report_fills_unknown_values_and_the_diagnosed_interpreter_in_fixes() -> None:
    rules = (
        rule(
            "TED994",
            "te.version < 3.0",
            summary="cuDNN {cudnn.version}",
            fix="`pip install -U nvidia-cudnn-cu12`",
        ),
        rule("TED995", "te.version < 3.0"),  # no fix at all
    )
    built = build_report(SNAPSHOT, facts(), rules, PATHS, GateOptions(), "9.9", python="/v/python")
    shown = {f.rule_id: f for f in built.findings}
    assert shown["TED994"].message == "cuDNN (not known)"
    assert (
        shown["TED994"].fix
        == "`/home/alice/.venvs/llm/bin/python3 -m pip install -U nvidia-cudnn-cu12`"
    )
    assert shown["TED995"].fix == ""
    assert built.rerun == "te-doctor check --python /v/python"


def test_fixes_keep_a_bare_pip_when_the_interpreter_is_unknown() -> None:
    host = dataclasses.replace(
        SNAPSHOT.host, python_executable=Fact.unknown("the interpreter did not answer", "host")
    )
    unknown = dataclasses.replace(SNAPSHOT, host=host)
    pip_fix = (rule("TED994", "te.version < 3.0", fix="`pip install -U nvidia-cudnn-cu12`"),)
    built = build_report(unknown, facts(), pip_fix, PATHS, GateOptions(), "9.9")
    assert built.findings[0].fix == "`pip install -U nvidia-cudnn-cu12`"
