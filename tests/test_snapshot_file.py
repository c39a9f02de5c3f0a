"""Snapshot JSON: lossless round trip, the shipped schema, and one clear line for bad files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.check.schemas import schema_text
from te_doctor.errors import SnapshotError
from te_doctor.snapshot.codec import to_data
from te_doctor.snapshot.facts import FactState
from te_doctor.snapshot.file import dumps, load, loads
from te_doctor.snapshot.schema import snapshot_schema
from tests.snapshots import busy_snapshot

SCHEMA_FILE = Path(__file__).parents[1] / "te_doctor" / "snapshot.schema.json"


def test_round_trip_is_lossless(tmp_path: Path) -> None:
    snapshot = busy_snapshot(tmp_path)
    assert loads(dumps(snapshot)) == snapshot
    assert dumps(loads(dumps(snapshot))) == dumps(snapshot)


@pytest.mark.parametrize("name", ["snapshot.schema.json", "report.schema.json"])
def test_shipped_schemas_are_current(name: str) -> None:
    shipped = SCHEMA_FILE.with_name(name).read_text()
    assert shipped == schema_text(name), "run: python -m te_doctor.check.schemas"


def test_snapshots_validate_against_the_schema(tmp_path: Path) -> None:
    data = json.loads(dumps(busy_snapshot(tmp_path)))
    jsonschema.Draft202012Validator(snapshot_schema()).validate(data)


def test_schema_rejects_what_the_loader_rejects(tmp_path: Path) -> None:
    data = json.loads(dumps(busy_snapshot(tmp_path)))
    data["gpus"][0]["compute_capability"] = {"value": 9.0, "source": "x"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(snapshot_schema()).validate(data)
    with pytest.raises(SnapshotError, match=r"gpus\[0\]\.compute_capability\.value: expected str"):
        loads(json.dumps(data))


def mutated(tmp_path: Path, change: str) -> str:
    data = to_data(busy_snapshot(tmp_path))
    if change == "unknown-field":
        data["host"]["colour"] = "blue"
    elif change == "missing-field":
        del data["driver"]["version"]
    elif change == "two-states":
        data["driver"]["version"] = {"value": "550", "absent": "x", "source": "s"}
    elif change == "bool-for-int":
        data["driver"]["gpu_count"] = {"value": True, "source": "s"}
    elif change == "newer":
        data["schema_version"] = 99
    elif change == "older":
        data["schema_version"] = 0
    elif change == "no-version":
        del data["schema_version"]
    return json.dumps(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("unknown-field", "host.colour: unknown field"),
        ("missing-field", "driver.version: missing field"),
        ("two-states", "driver.version: a fact needs exactly one of"),
        ("bool-for-int", "driver.gpu_count.value: expected int, got bool"),
        ("newer", "schema_version 99 is newer than this te-doctor understands (4); upgrade"),
        ("older", "schema_version 0 is not a te-doctor schema"),
        ("no-version", "schema_version: missing or not an integer"),
    ],
)
def test_malformed_snapshots_name_the_field(tmp_path: Path, change: str, message: str) -> None:
    with pytest.raises(SnapshotError) as caught:
        loads(mutated(tmp_path, change), name="snap.json")
    assert str(caught.value).startswith("snap.json: ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_truncated_and_non_json_files(tmp_path: Path) -> None:
    text = dumps(busy_snapshot(tmp_path))
    with pytest.raises(SnapshotError, match="truncated"):
        loads(text[: len(text) // 2], name="cut.json")
    with pytest.raises(SnapshotError, match="not valid JSON at line 1"):
        loads("hello", name="x")
    with pytest.raises(SnapshotError, match="expected a JSON object"):
        loads("[1, 2]", name="x")


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        load(tmp_path / "missing.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        load(binary)


def test_a_schema_1_snapshot_is_upgraded(tmp_path: Path) -> None:
    """Schema 1 had no smoke section: it loads, marked as recorded without a smoke test."""
    data = json.loads(dumps(busy_snapshot(tmp_path)))
    data["schema_version"] = 1
    del data["smoke"]
    snapshot = loads(json.dumps(data))
    assert snapshot.schema_version == 4
    assert "before te-doctor had a smoke test" in snapshot.smoke.outcome.reason
    assert "before te-doctor probed build prerequisites" in snapshot.build.cxx.reason


def test_a_schema_3_snapshot_is_upgraded_and_keeps_its_verdicts() -> None:
    """Schema 4 added the loader model's facts: a schema-3 file loads with them unknown, and
    the driver-too-old error still fires on it (no cuda-compat is read into an old snapshot)."""
    fixture = Path(__file__).parent / "fixtures" / "ngc-h100-r535-cuda-compat.json"
    data = json.loads(fixture.read_text(encoding="utf-8"))
    data["schema_version"] = 3
    for section, fields in (
        ("driver", ("libcuda_path", "libcuda_version")),
        ("torch", ("linked_libraries", "cudnn_version", "cublas_version", "runtime_version")),
        ("torch", ("nvrtc_version",)),
        ("transformer_engine", ("preloads_pip_cuda",)),
    ):
        for field in fields:
            del data[section][field]
    snapshot = loads(json.dumps(data), name="old.json")
    assert snapshot.schema_version == 4
    assert snapshot.driver.libcuda_version.state is FactState.UNKNOWN
    assert "schema 3" in snapshot.torch.cudnn_version.reason
    assert snapshot.torch.linked_libraries == ()
    fired = {f.rule_id for f in run_check(snapshot, GateOptions()).findings if f.fired}
    assert {"TED201", "TED202"} <= fired and not fired & {"TED210", "TED211"}


def test_a_schema_3_snapshot_says_it_did_not_record_why_its_interpreter(tmp_path: Path) -> None:
    """Schema 3 had no host.python_chosen_by: it loads with the fact absent, saying why."""
    data = json.loads(dumps(busy_snapshot(tmp_path)))
    data["schema_version"] = 3
    del data["host"]["python_chosen_by"]
    snapshot = loads(json.dumps(data))
    assert snapshot.schema_version == 4
    chosen = snapshot.host.python_chosen_by
    assert chosen.state is FactState.ABSENT
    assert chosen.reason == "recorded before te-doctor said why it chose the interpreter"
