"""Reading and writing snapshot files, with one clear error line for anything malformed."""

from __future__ import annotations

import json
from pathlib import Path

from te_doctor.errors import SnapshotError
from te_doctor.snapshot.absent import not_run
from te_doctor.snapshot.codec import from_data, to_data, unknown_record
from te_doctor.snapshot.model import SCHEMA_VERSION, BuildFacts, Snapshot


def dumps(snapshot: Snapshot) -> str:
    """The snapshot as indented JSON with a trailing newline."""
    return json.dumps(to_data(snapshot), indent=2, ensure_ascii=False) + "\n"


def loads(text: str, *, name: str = "<snapshot>") -> Snapshot:
    """Parse snapshot JSON; raise ``SnapshotError`` prefixed with ``name`` on any problem."""
    return from_json_data(parse_json(text, name=name), name=name)


def parse_json(text: str, *, name: str) -> object:
    """JSON, or ``SnapshotError`` saying where it broke (and when the file looks truncated)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        stripped = text.strip()
        truncated = stripped.startswith("{") and not stripped.endswith("}")
        hint = " (the file looks truncated)" if truncated else ""
        raise SnapshotError(
            f"{name}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from None


def from_json_data(data: object, *, name: str = "<snapshot>") -> Snapshot:
    """A snapshot from parsed JSON (upgraded from older schemas); ``SnapshotError`` if not."""
    if not isinstance(data, dict):
        raise SnapshotError(f"{name}: expected a JSON object, got {type(data).__name__}")
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SnapshotError(f"{name}: schema_version: missing or not an integer (not a snapshot?)")
    if version > SCHEMA_VERSION:
        raise SnapshotError(
            f"{name}: schema_version {version} is newer than this te-doctor understands "
            f"({SCHEMA_VERSION}); upgrade te-doctor"
        )
    if version < 1:
        raise SnapshotError(f"{name}: schema_version {version} is not a te-doctor schema")
    data = _upgrade(data, version)
    try:
        return from_data(Snapshot, data)
    except SnapshotError as exc:
        raise SnapshotError(f"{name}: {exc}") from None


def _upgrade(data: dict[str, object], version: int) -> dict[str, object]:
    """Bring an older snapshot up to the current schema, one version at a time."""
    if version == 1:  # schema 1 had no smoke section
        smoke = to_data(not_run("recorded before te-doctor had a smoke test"))
        data, version = {**data, "schema_version": 2, "smoke": smoke}, 2
    if version == 2:  # schema 2 had no build section
        reason = "recorded before te-doctor probed build prerequisites"
        build = to_data(unknown_record(BuildFacts, reason, "build"))
        data, version = {**data, "schema_version": 3, "build": build}, 3
    if version == 3:
        data = _upgrade_3_to_4(data)
    return data


def _upgrade_3_to_4(data: dict[str, object]) -> dict[str, object]:
    """Schema 4 modelled the loader (the libcuda.so.1 picked, torch's and TE's bindings) and
    said why its interpreter was the one diagnosed (``host.python_chosen_by``).

    The loader facts of a schema-3 snapshot are unknown, and why its interpreter was chosen is
    absent. Its ``cudnn.version`` and ``cuda.*_version`` keep their old meaning (the first
    copy found, pip wheels first).
    """
    reason = "recorded before te-doctor modelled the dynamic loader (snapshot schema 3)"
    unknown = {"unknown": reason, "source": "schema 3"}
    added: dict[str, dict[str, object]] = {
        "driver": {"libcuda_path": unknown, "libcuda_version": unknown},
        "torch": {
            "linked_libraries": [],
            **{f"{name}_version": unknown for name in ("cudnn", "cublas", "runtime", "nvrtc")},
        },
        "transformer_engine": {"preloads_pip_cuda": unknown},
        "host": {
            "python_chosen_by": {
                "absent": "recorded before te-doctor said why it chose the interpreter",
                "source": "host",
            }
        },
    }
    upgraded: dict[str, object] = {**data, "schema_version": 4}
    for section, fields in added.items():
        old = data.get(section)
        if isinstance(old, dict):  # anything else is reported by the decoder
            upgraded[section] = {**old, **fields}
    return upgraded


def load(path: Path) -> Snapshot:
    """Read a snapshot file; unreadable files become ``SnapshotError`` too."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc}") from None
    return loads(text, name=str(path))
