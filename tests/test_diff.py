"""`te-doctor diff`: rule-relevant differences, one-sided findings, and what explains them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from te_doctor.check.pipeline import load_rule_set
from te_doctor.engine.flatten import FlatFacts, flatten
from te_doctor.engine.rule_model import Severity
from te_doctor.snapshot.file import load
from te_doctor.triage.diff import compare
from tests.hand_made import flat, rule

FIXTURES = Path(__file__).parent / "fixtures"
RULES, _ = load_rule_set()


def facts(name: str) -> FlatFacts:
    return flatten(load(FIXTURES / f"{name}.json"))


def test_a_machine_against_itself_has_no_difference() -> None:
    comparison = compare(facts("h100-cuda12-te-ok"), facts("h100-cuda12-te-ok"), RULES)
    assert comparison.differences == () and comparison.one_sided == ()


def test_the_older_driver_explains_the_minor_version_warning() -> None:
    comparison = compare(facts("h100-cuda12-te-ok"), facts("driver-older-than-torch-cuda"), RULES)
    only_b = {entry.finding.rule_id: entry for entry in comparison.one_sided if entry.side == "B"}
    assert only_b["TED203"].explained_by == ("driver.cuda_version",)
    different = {d.path: (d.left, d.right) for d in comparison.differences}
    assert different["driver.cuda_version"] == ("12.4", "12.2")
    assert "host.hostname" not in different  # only facts some rule reads are compared


def test_errors_rank_first_among_explanations() -> None:
    """A difference behind one error outranks one behind two info findings; ties by path."""
    rules = [
        rule("TED981", "host.wsl == true", severity=Severity.INFO),
        rule("TED982", "host.wsl == true", severity=Severity.INFO),
        rule("TED983", "te.version < 2.0", severity=Severity.ERROR),
        rule("TED984", "torch.version < 2.0", severity=Severity.ERROR),
    ]
    left = flat({"host.wsl": False, "te.version": "2.5.0", "torch.version": "2.4.0"})
    right = flat({"host.wsl": True, "te.version": "1.9.0", "torch.version": "1.13.0"})
    comparison = compare(left, right, rules)
    assert comparison.likely_causes == (("te.version", 1), ("torch.version", 1), ("host.wsl", 2))
    real = compare(facts("h100-cuda12-te-ok"), facts("two-te-variants"), RULES)
    assert real.likely_causes[:3] == (  # each explains two errors on the two-variant machine
        ("packages.transformer_engine_cu12", 2),
        ("packages.transformer_engine_cu13", 2),
        ("te.core_cuda_major", 2),
    )


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", "diff", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_two_snapshots_json_and_this_machine() -> None:
    result = run(
        str(FIXTURES / "a100.json"), str(FIXTURES / "h100-cuda12-te-ok.json"), "--format", "json"
    )
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["schema"] == "te-doctor/diff/v1"
    assert any(d["path"] == "gpu.compute_capability" for d in data["differences"])
    here = run(str(FIXTURES / "no-gpu-laptop.json"))
    assert here.returncode == 0 and "vs this machine" in here.stdout
    bad = run("/nonexistent.json")
    assert bad.returncode == 2 and "cannot read snapshot" in bad.stderr
