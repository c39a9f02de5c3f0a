"""`te-doctor fleet`: many nodes aggregated, odd nodes named, unreadable files listed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from te_doctor.check import load_rule_set
from te_doctor.fleet import aggregate, report_files
from te_doctor.fleet_sample import write_fleet

FIXTURES = Path(__file__).parent / "fixtures"
RULES, PATHS = load_rule_set()


def test_identical_nodes_share_one_evaluation_and_the_odd_ones_are_named(tmp_path: Path) -> None:
    odd = write_fleet(FIXTURES / "h100-cuda12-te-ok.json", tmp_path, 120, odd_every=40)
    fleet = aggregate(report_files([tmp_path]), RULES, PATHS)
    assert len(fleet.nodes) == 120 and fleet.configurations == 2
    named = [entry.split(" ")[0] for entry in fleet.odd_nodes["driver"]]
    assert named == odd == ["node00039", "node00079", "node00119"]
    assert "most have 550.54.15" in fleet.odd_nodes["driver"][0]
    assert fleet.by_finding["TED203"] == tuple(odd)  # only the stale nodes get the warning
    assert fleet.by_verdict == {"pass": tuple(n.name for n in fleet.nodes)}


def test_mixed_inputs_check_reports_and_junk(tmp_path: Path) -> None:
    write_fleet(FIXTURES / "a100.json", tmp_path, 3, odd_every=0)
    report = subprocess.run(
        [
            sys.executable,
            "-m",
            "te_doctor",
            "check",
            "--snapshot",
            str(FIXTURES / "t4.json"),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    (tmp_path / "t4-report.json").write_text(report)
    (tmp_path / "broken.json").write_text("{ not json")
    fleet = aggregate(report_files([tmp_path]), RULES, PATHS)
    assert len(fleet.nodes) == 4 and len(fleet.unreadable) == 1
    assert "broken.json" in fleet.unreadable[0]
    assert set(fleet.by_verdict["fail"]) == {"node00000", "node00001", "node00002", "t4-report"}
    assert "TED114" in fleet.by_finding  # from the check report (T4: no BF16)


def test_cli_formats(tmp_path: Path) -> None:
    write_fleet(FIXTURES / "h100-cuda12-te-ok.json", tmp_path, 5, odd_every=5)
    run = [sys.executable, "-m", "te_doctor", "fleet", str(tmp_path)]
    text = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert text.returncode == 0 and "5 node(s), 2 distinct configuration(s)" in text.stdout
    assert "node00004 (535.104.05; most have 550.54.15)" in text.stdout
    data = json.loads(
        subprocess.run(
            [*run, "--format", "json"], capture_output=True, text=True, timeout=60
        ).stdout
    )
    assert data["schema"] == "te-doctor/fleet/v1" and len(data["nodes"]) == 5
    markdown = subprocess.run(
        [*run, "--format", "markdown"], capture_output=True, text=True, timeout=60
    ).stdout
    assert markdown.startswith("## te-doctor fleet: 5 nodes")
