"""The recommender on hand-made paths and facts: what rules a path out, what verifies it, and
which path is picked (the defaults, ``--require``, opt-in paths, the closest when none runs)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from te_doctor.engine.evaluate import Finding, Outcome
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.recommend import PathVerdict, Recommendation, recommend
from te_doctor.engine.rule_model import Severity
from te_doctor.snapshot.absent import not_run
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.smoke_model import SmokeCheck, SmokeFacts
from tests.hand_made import flat, path

#: In preference order: an opt-in FP4 path, FP8 (needs Ada and TE), BF16 (needs Ampere), CPU.
PATHS = (
    path("fp4", ["gpu.compute_capability >= 10.0"], ("fp4", "gpu"), opt_in="FP4 is opt-in"),
    path("fp8", ["gpu.compute_capability >= 8.9", "te.version is present"], ("fp8", "gpu")),
    path("bf16", ["gpu.compute_capability >= 8.0", "gpus.count > 0"], ("bf16", "gpu")),
    path("cpu", ["host.arch is present"], ("cpu",)),
)


def facts(cc: Any = "9.0", te: Any = "2.1.0", gpus: Any = 1) -> FlatFacts:
    return flat(
        {"gpu.compute_capability": cc, "te.version": te, "gpus.count": gpus, "host.arch": "x86_64"}
    )


def finding(
    rule_id: str,
    blocks: tuple[str, ...],
    severity: Severity = Severity.ERROR,
    outcome: Outcome = Outcome.FIRED,
) -> Finding:
    message = f"{rule_id} says no"
    return Finding(rule_id, rule_id.lower(), severity, "config", outcome, message, "", blocks, ())


def check(
    name: str, status: str, rel_error: float | None = 0.042, device: str = "cuda:0"
) -> SmokeCheck:
    error = Fact.of(rel_error, "smoke") if rel_error is not None else Fact.absent("n/a", "smoke")
    return SmokeCheck(
        name=name,
        device=device,
        status=status,
        max_abs_error=error,
        rel_error=error,
        tolerance=0.05,
        detail=f"{name} said so",
        duration_ms=1.0,
    )


def smoke(*checks: SmokeCheck) -> SmokeFacts:
    return dataclasses.replace(not_run("test"), checks=checks)


def run(
    flat: FlatFacts | None = None,
    findings: tuple[Finding, ...] = (),
    checks: tuple[SmokeCheck, ...] = (),
    require: tuple[str, ...] = (),
) -> Recommendation:
    return recommend(flat or facts(), findings, smoke(*checks), PATHS, require)


def verdict(recommendation: Recommendation, path_id: str) -> PathVerdict:
    return next(v for v in recommendation.ranking if v.id == path_id)


def test_the_first_viable_default_path_wins_with_its_snippet_and_env() -> None:
    best = run()
    assert (best.path, best.title, best.verification) == ("fp8", "fp8 title", "predicted")
    assert (best.snippet, dict(best.env), best.evidence, best.closest) == (
        "use_fp8()",
        {"PATH_ID": "fp8"},
        "",
        "",
    )
    assert [v.id for v in best.ranking] == ["fp4", "fp8", "bf16", "cpu"]
    assert [v.viable for v in best.ranking] == [False, True, True, True]
    assert verdict(best, "bf16") == PathVerdict(
        "bf16", "bf16 title", ("bf16", "gpu"), True, "predicted", "", False, ()
    )


def test_false_and_unknown_requirements_are_the_reasons_in_words() -> None:
    ada = run(facts(cc="8.6", te=None))
    fp8 = verdict(ada, "fp8")
    assert (fp8.viable, fp8.verification, fp8.blocked_by_rules) == (False, "ruled-out", False)
    assert fp8.reasons == (
        "needs a GPU of compute capability 8.9 or newer (Ada); this GPU is 8.6",
        "needs Transformer Engine; Transformer Engine is not installed",
    )
    assert ada.path == "bf16"
    unknown = verdict(run(facts(cc="?")), "fp8")
    assert not unknown.viable
    assert unknown.reasons == (
        "needs a GPU of compute capability 8.9 or newer (Ada); te-doctor could not tell here "
        "(the driver did not answer)",
    )


@pytest.mark.parametrize(
    ("blocker", "blocks"),
    [
        (finding("TED901", ("fp8",)), True),
        (finding("TED901", ("fp8",), severity=Severity.WARNING), False),
        (finding("TED901", ("fp8",), outcome=Outcome.UNDECIDED), False),
        (finding("TED901", ("bf16",)), False),
    ],
)
def test_only_a_fired_error_finding_blocks_the_paths_it_names(
    blocker: Finding, blocks: bool
) -> None:
    fp8 = verdict(run(findings=(blocker,)), "fp8")
    assert fp8.viable is not blocks
    assert fp8.blocked_by_rules is blocks
    assert fp8.reasons == (("TED901 says no (TED901)",) if blocks else ())


def test_every_blocking_rule_is_named_and_explains_better_than_the_requirement() -> None:
    blocked = run(
        facts(te=None), findings=(finding("TED901", ("fp8",)), finding("TED902", ("fp8",)))
    )
    assert verdict(blocked, "fp8").reasons == ("TED901 says no (TED901)", "TED902 says no (TED902)")


@pytest.mark.parametrize(
    ("status", "viable", "verification"),
    [
        ("ok", True, "verified"),
        ("skipped", True, "predicted"),
        ("failed", False, "ruled-out"),
        ("numerics", False, "ruled-out"),
    ],
)
def test_a_smoke_check_verifies_or_rules_out_its_path(
    status: str, viable: bool, verification: str
) -> None:
    fp8 = verdict(run(checks=(check("fp8", status, device="cuda:1"),)), "fp8")
    assert (fp8.viable, fp8.verification) == (viable, verification)
    said = {"failed": "failed", "numerics": "gave wrong numbers"}.get(status, "")
    reasons = () if viable else (f"its smoke GEMM fp8 {said}: fp8 said so",)
    assert fp8.reasons == reasons
    assert fp8.blocked_by_rules is False
    assert bool(fp8.evidence) is (status == "ok")  # only a passed check is evidence


@pytest.mark.parametrize("status", ["ok", "skipped"])
def test_a_check_that_did_not_fail_never_explains_a_path_ruled_out(status: str) -> None:
    """TE missing: the path is out for its requirement, whatever its smoke check said."""
    fp8 = verdict(run(facts(te=None), checks=(check("fp8", status),)), "fp8")
    assert (fp8.viable, fp8.evidence) == (False, "")
    assert fp8.reasons == ("needs Transformer Engine; Transformer Engine is not installed",)


def test_a_smoke_check_on_another_device_says_nothing_about_the_path() -> None:
    cpu_run = run(checks=(check("fp8", "failed", device="cpu"),))
    assert verdict(cpu_run, "fp8").verification == "predicted"


@pytest.mark.parametrize(
    ("rel_error", "evidence"),
    [
        (0.042, "smoke GEMM fp8 on cuda:0: relative error 4.2% (tolerance 5.0%)"),
        (0.001, "smoke GEMM fp8 on cuda:0: relative error 0.1% (tolerance 5.0%)"),
        (0.0001234, "smoke GEMM fp8 on cuda:0: relative error 1.2e-04 (tolerance 5.0%)"),
        (None, "smoke GEMM fp8 on cuda:0 ran"),
    ],
)
def test_verified_evidence_quotes_the_error_and_the_tolerance(
    rel_error: float | None, evidence: str
) -> None:
    best = run(checks=(check("fp8", "ok", rel_error),))
    assert (best.path, best.verification, best.evidence) == ("fp8", "verified", evidence)
    assert verdict(best, "fp8").evidence == evidence


def test_a_viable_opt_in_path_is_passed_over_and_says_why() -> None:
    blackwell = run(facts(cc="10.0"))
    assert blackwell.path == "fp8"
    fp4 = verdict(blackwell, "fp4")
    assert (fp4.viable, fp4.reasons) == (True, ("FP4 is opt-in",))
    chosen = run(facts(cc="10.0"), require=("fp4",))
    assert chosen.path == "fp4"
    assert verdict(chosen, "fp4").reasons == ()


def test_require_picks_the_best_path_it_allows() -> None:
    assert run(require=("bf16",)).path == "bf16"
    assert run(require=("cpu",)).path == "cpu"
    assert run(require=("gpu",)).path == "fp8"  # a broad family never picks the opt-in path


def test_a_require_nothing_meets_falls_back_to_the_best_default() -> None:
    assert run(require=("fp4",)).path == "fp8"  # the gate, not the choice, says no


def test_nothing_viable_names_the_closest_path_the_hardware_could_run() -> None:
    nothing = PATHS[:3]
    turing = recommend(facts(cc="7.5", te=None), (), smoke(), nothing)
    assert (turing.path, turing.verification, turing.closest) == ("", "none-viable", "")
    hopper = recommend(facts(te=None, gpus=0), (), smoke(), nothing)
    assert (hopper.path, hopper.verification, hopper.closest) == ("", "none-viable", "fp8")
    assert hopper.ranking[1].reasons == (
        "needs Transformer Engine; Transformer Engine is not installed",
    )
    assert (hopper.snippet, dict(hopper.env), hopper.title, hopper.evidence) == ("", {}, "", "")


def test_a_gpus_requirement_is_hardware_too() -> None:
    """No GPU at all: a path that needs ``gpus.count > 0`` is not "closest" either."""
    needs_gpus = (path("bf16-te", ["gpus.count > 0", "te.version is present"], ("bf16",)),)
    assert recommend(facts(te=None, gpus=0), (), smoke(), needs_gpus).closest == ""
    assert recommend(facts(te=None, gpus=1), (), smoke(), needs_gpus).closest == "bf16-te"


def test_the_closest_path_is_never_one_a_rule_blocks() -> None:
    no_te = facts(te=None)
    assert recommend(no_te, (), smoke(), PATHS[:2]).closest == "fp8"
    blocked = recommend(no_te, (finding("TED901", ("fp8",)),), smoke(), PATHS[:2])
    assert (blocked.path, blocked.closest) == ("", "")


def test_a_failed_check_without_detail_is_named_without_a_dangling_colon() -> None:
    silent = dataclasses.replace(check("fp8", "failed"), detail="")
    fp8 = verdict(run(checks=(silent,)), "fp8")
    assert fp8.reasons == ("its smoke GEMM fp8 failed",)
