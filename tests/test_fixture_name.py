"""The fixture name a real snapshot gets (benchmarks/fixture_name.py), from the snapshot's facts."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.fixture_name import fixture_name, main

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_gpu_machine_is_named_by_gpu_driver_and_torch() -> None:
    snapshot = json.loads((FIXTURES / "a100.json").read_text(encoding="utf-8"))
    assert fixture_name(snapshot) == "real-a100-sxm4-80gb-535-183-06-torch-2-4-0-cu121"


def test_a_machine_without_gpu_driver_or_torch_says_so() -> None:
    assert fixture_name({"gpus": [], "driver": {"version": {"absent": "no driver"}}}) == (
        "real-no-gpu-no-driver-torch-none"
    )


def test_an_unreadable_snapshot_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    assert main([str(broken)]) == 2
    assert main([]) == 2
