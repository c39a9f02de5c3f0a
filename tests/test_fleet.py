"""`te-doctor fleet`: many node reports aggregated, odd nodes named, bad files set aside, gated."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from te_doctor.check.pipeline import load_rule_set
from te_doctor.check.report import GateOptions
from te_doctor.fleet.aggregate import Fleet, aggregate
from te_doctor.fleet.configuration import PER_TASK_NAMES, PER_TASK_PREFIXES
from te_doctor.fleet.gate import FleetOptions
from te_doctor.fleet.launch import Sweep, write_manifest
from te_doctor.fleet.node_report import NodeIdentity
from te_doctor.fleet.reading import (
    Entry,
    RunManifest,
    Skipped,
    read_all,
    report_files,
)
from te_doctor.fleet.sample import node_report, write_fleet

FIXTURES = Path(__file__).parent / "fixtures"
H100 = FIXTURES / "h100-cuda12-te-ok.json"
RULES, PATHS = load_rule_set()


def fleet_of(
    directory: Path,
    *,
    gate: GateOptions | None = None,
    min_healthy: int | None = None,
    expect_nodes: int | None = None,
) -> Fleet:
    options = FleetOptions(gate or GateOptions(), min_healthy, expect_nodes)
    return aggregate(report_files([directory]), RULES, PATHS, options)


def te_doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", *args], capture_output=True, text=True, timeout=120
    )


def test_identical_nodes_share_one_evaluation_and_the_odd_ones_are_named(tmp_path: Path) -> None:
    odd = write_fleet(H100, tmp_path, 120, old_driver_every=40)
    fleet = fleet_of(tmp_path)
    assert len(fleet.nodes) == 120 and fleet.configurations == 2
    named = [entry.split(" ")[0] for entry in fleet.odd_nodes["driver"]]
    assert named == odd.old_driver == ["node00039", "node00079", "node00119"]
    assert "most have 550.54.15" in fleet.odd_nodes["driver"][0]
    assert fleet.by_finding["TED203"] == tuple(odd.old_driver)  # the stale nodes' warning
    assert fleet.by_verdict == {"pass": tuple(n.name for n in fleet.nodes)}
    assert fleet.gate.passed and fleet.gate.healthy == 120 and fleet.gate.problems == ()


def test_a_missing_cudnn_and_missing_gpus_are_odd_and_fail_the_gate(tmp_path: Path) -> None:
    odd = write_fleet(
        H100, tmp_path, 30, old_driver_every=0, no_cudnn_every=10, fewer_gpus_every=15
    )
    assert odd.no_cudnn == ["node00009", "node00019", "node00029"]
    assert odd.fewer_gpus == ["node00014", "node00029"]
    fleet = fleet_of(tmp_path, gate=GateOptions(expect_gpus=8))
    assert [e.split(" ")[0] for e in fleet.odd_nodes["GPUs"]] == odd.fewer_gpus
    assert "node00014 (6; most have 8)" in fleet.odd_nodes["GPUs"]
    assert [e.split(" ")[0] for e in fleet.odd_nodes["cuDNN"]] == odd.no_cudnn
    failed = set(fleet.by_verdict["fail"])
    assert failed == set(odd.no_cudnn) | set(odd.fewer_gpus)
    assert not fleet.gate.passed and fleet.gate.healthy == 30 - len(failed)
    assert fleet.gate.problems[0].startswith(f"{len(failed)} node(s) failed the check: ")
    assert set(fleet.by_finding["TED301"]) == set(odd.no_cudnn), fleet.by_finding


def test_min_healthy_gates_on_the_count(tmp_path: Path) -> None:
    write_fleet(H100, tmp_path, 20, old_driver_every=0, no_cudnn_every=10)
    assert not fleet_of(tmp_path).gate.passed
    enough = fleet_of(tmp_path, min_healthy=18)
    assert enough.gate.passed and enough.gate.healthy == 18
    short = fleet_of(tmp_path, min_healthy=19)
    assert not short.gate.passed
    assert short.gate.problems[0] == "18 healthy node(s), fewer than --min-healthy 19"


def test_require_and_fail_on_apply_to_every_node(tmp_path: Path) -> None:
    write_fleet(H100, tmp_path, 10, old_driver_every=5)
    assert fleet_of(tmp_path).gate.passed  # the old driver is a warning
    strict = fleet_of(tmp_path, gate=GateOptions(fail_on="warning"))
    assert set(strict.by_verdict["fail"]) == {"node00004", "node00009"}
    assert not fleet_of(tmp_path, gate=GateOptions(require=("te-mxfp8",))).gate.passed  # H100
    assert fleet_of(tmp_path, gate=GateOptions(require=("te-fp8",))).gate.passed


def test_timed_out_and_never_reported_tasks_are_named(tmp_path: Path) -> None:
    write_fleet(H100, tmp_path, 4, old_driver_every=0)
    (tmp_path / "node00001-4242-1.json").write_text(
        json.dumps(node_report(NodeIdentity("node00001", "4242", "1"), {}, status="timed-out"))
    )
    write_manifest(Sweep("srun", 6, True, tmp_path, job_name="te-doctor-fleet-test"))
    fleet = fleet_of(tmp_path)
    assert fleet.by_verdict == {
        "pass": ("node00000", "node00002", "node00003"),
        "timed out": ("node00001",),
    }
    assert fleet.missing == (
        "task 4 of te-doctor-fleet-test (srun)",
        "task 5 of te-doctor-fleet-test (srun)",
    )
    assert not fleet.gate.passed
    assert "1 node(s) timed out: node00001" in fleet.gate.problems
    assert (
        "never reported: task 4 of te-doctor-fleet-test (srun), task 5 of "
        "te-doctor-fleet-test (srun)" in fleet.gate.problems
    )
    assert fleet_of(tmp_path, min_healthy=3).gate.passed


def test_expect_nodes_counts_the_missing(tmp_path: Path) -> None:
    write_fleet(H100, tmp_path, 3, old_driver_every=0)
    fleet = fleet_of(tmp_path, expect_nodes=5)
    assert fleet.missing == ("2 of --expect-nodes 5 nodes",) and not fleet.gate.passed


def test_bad_files_are_each_set_aside_and_the_rest_aggregates(tmp_path: Path) -> None:
    write_fleet(H100, tmp_path, 3, old_driver_every=0)
    good = json.loads((tmp_path / "node00000-4242-0.json").read_text())
    (tmp_path / "malformed.json").write_text("{ not json")
    text = json.dumps(good)
    (tmp_path / "truncated.json").write_text(text[: len(text) // 2])
    older = {**good, "created_at": "2026-11-01T00:00:00+00:00"}
    (tmp_path / "node00000-4000-0.json").write_text(json.dumps(older))  # an earlier sweep
    (tmp_path / "old-version.json").write_text(
        json.dumps({**good, "node": "node00777", "te_doctor_version": "0.0.9"})
    )
    (tmp_path / "future.json").write_text(
        json.dumps({**good, "schema": "te-doctor/node-report/v2"})
    )
    (tmp_path / "list.json").write_text("[]")
    (tmp_path / "bad-status.json").write_text(json.dumps({**good, "status": "weird"}))
    fleet = fleet_of(tmp_path)
    assert [n.name for n in fleet.nodes] == ["node00000", "node00001", "node00002"]
    reasons = {Path(s.file).name: s.reason for s in fleet.skipped}
    assert reasons["malformed.json"].startswith("not valid JSON at line 1 column 3")
    assert reasons["truncated.json"].endswith("(the file looks truncated)")
    assert reasons["old-version.json"] == "made by te-doctor 0.0.9, most by 0.1.0: rerun it"
    assert (
        reasons["future.json"]
        == "schema 'te-doctor/node-report/v2' is not one this te-doctor reads"
    )
    assert reasons["list.json"] == "expected a JSON object, got list"
    assert reasons["bad-status.json"].startswith("status: 'weird' is not one of ok, timed-out")
    assert [(Path(d.file).name, d.reason) for d in fleet.duplicates] == [
        (
            "node00000-4000-0.json",
            f"an older report of the same node: {tmp_path}/node00000-4242-0.json",
        )
    ]
    assert not fleet.gate.passed
    assert fleet.gate.problems == (
        "6 report(s) could not be used: bad-status.json, future.json, list.json, malformed.json, "
        "truncated.json and 1 more",
    )


def test_snapshots_and_check_reports_are_read_too(tmp_path: Path) -> None:
    report = te_doctor("check", "--snapshot", str(FIXTURES / "t4.json"), "--format", "json")
    (tmp_path / "t4-report.json").write_text(report.stdout)
    alone = fleet_of(tmp_path)
    assert [(n.name, n.passed, n.recommended) for n in alone.nodes] == [
        ("t4-report", False, "te-fp16")
    ]
    assert "TED114" in alone.by_finding  # from the node's own check (T4: no BF16)
    for name in ("a100.json", "t4.json"):  # recorded by te-doctor 0.0.0+fixture
        (tmp_path / name).write_text((FIXTURES / name).read_text())
    mixed = fleet_of(tmp_path)
    assert sorted(n.name for n in mixed.nodes) == ["a100-node-12", "t4-vm-1"]
    assert [(Path(s.file).name, s.reason) for s in mixed.skipped] == [
        ("t4-report.json", "made by te-doctor 0.1.0, most by 0.0.0+fixture: rerun it")
    ]


@pytest.mark.parametrize("command", [["fleet"], ["fleet", "aggregate"]])
def test_cli_formats_and_exit_codes(tmp_path: Path, command: list[str]) -> None:
    write_fleet(H100, tmp_path, 5, old_driver_every=5)
    text = te_doctor(*command, str(tmp_path))
    assert text.returncode == 0, text.stderr
    assert "5 node(s), 2 distinct configuration(s), 0 report(s) set aside, 0 missing" in text.stdout
    assert "Gate: PASS: 5 of 5 node(s) healthy" in text.stdout
    assert "node00004 (535.104.05; most have 550.54.15)" in text.stdout
    data = json.loads(te_doctor(*command, str(tmp_path), "--format", "json").stdout)
    assert data["schema"] == "te-doctor/fleet/v1" and len(data["nodes"]) == 5
    assert data["gate"]["passed"] is True
    markdown = te_doctor(*command, str(tmp_path), "--format", "markdown").stdout
    assert markdown.startswith("## te-doctor fleet: 5 node(s)\n\n**Gate: PASS")
    strict = te_doctor(*command, str(tmp_path), "--fail-on", "warning")
    assert strict.returncode == 1 and "1 node(s) failed the check: node00004" in strict.stdout


def test_bad_flags_are_one_line_and_exit_2(tmp_path: Path) -> None:
    for args in (
        ["fleet", str(tmp_path / "nope")],
        ["fleet", "run"],
        ["fleet", "run", "--nodes", "0"],
    ):
        done = te_doctor(*args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (args, done.stderr)
    both = te_doctor("fleet", "run", "--nodes", "2", "--ntasks", "2")
    assert (
        both.stderr.strip()
        == "te-doctor: error: fleet run: give exactly one of --nodes N or --ntasks N"
    )


def test_per_task_variables_do_not_split_a_configuration(tmp_path: Path) -> None:
    write_fleet(H100, tmp_path, 3, old_driver_every=0)
    for index, file in enumerate(sorted(tmp_path.glob("*.json"))):
        report = json.loads(file.read_text())
        variables = report["snapshot"]["environment"]["variables"]
        variables |= {"SLURM_PROCID": str(index), "SLURM_TASK_PID": str(9000 + index)}
        variables |= {"RANK": str(index), "NVTE_FLASH_ATTN": "0" if index == 2 else "1"}
        file.write_text(json.dumps(report))
    fleet = fleet_of(tmp_path)
    assert fleet.configurations == 2  # only NVTE_FLASH_ATTN, which rules read, tells apart


def test_no_rule_reads_a_per_task_variable() -> None:
    """Leaving them out of the configuration key is only sound while no rule reads them."""
    for rule in RULES:
        for fact in rule.facts_used():
            name = fact.removeprefix("env.")
            assert not name.startswith(PER_TASK_PREFIXES) and name not in PER_TASK_NAMES, rule.id


def test_reading_in_parallel_gives_the_same_entries(tmp_path: Path) -> None:
    write_fleet(H100, tmp_path, 40, old_driver_every=10)
    files = report_files([tmp_path])
    serial, parallel = read_all(files, workers=1), read_all(files, workers=2)

    def without_snapshots(items: list[Entry | RunManifest | Skipped]) -> list[object]:
        return [replace(i, snapshot=None) if isinstance(i, Entry) else i for i in items]

    assert without_snapshots(serial) == without_snapshots(parallel)
    kept = [i for i in serial if isinstance(i, Entry) and i.snapshot is not None]
    assert len(kept) == 2  # one snapshot per configuration, not one per node


def test_a_duplicate_that_held_the_snapshot_does_not_lose_it(tmp_path: Path) -> None:
    write_fleet(H100, tmp_path, 2, old_driver_every=0)
    first = json.loads((tmp_path / "node00000-4242-0.json").read_text())
    older = {**first, "created_at": "2026-01-01T00:00:00+00:00"}
    (tmp_path / "a-first-in-order.json").write_text(json.dumps(older))
    fleet = fleet_of(tmp_path)
    assert [n.verdict for n in fleet.nodes] == ["pass", "pass"] and len(fleet.duplicates) == 1


def test_fleet_run_without_slurm_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "te_doctor",
            "fleet",
            "run",
            "--ntasks",
            "2",
            "--dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(tmp_path / "no-bin"), "HOME": str(tmp_path)},
    )
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "te-doctor: error: fleet run: cannot start srun: is Slurm installed?"
    )


def test_fleet_run_into_a_directory_it_cannot_write(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = te_doctor("fleet", "run", "--ntasks", "1", "--dir", str(blocker / "sweep"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(
        f"--dir {blocker / 'sweep'}: cannot write there: Not a directory"
    )
