"""Scenario snapshots: a recorded fixture with a few facts changed, as an auditor would edit it.

A scenario file (``tests/scenarios/*.toml``) names a base fixture and a table of edits:

* ``"gpus.*.FIELD"`` sets a field of every GPU (``name``, ``compute_capability``);
* ``"SECTION.FIELD"`` sets one fact (``transformer_engine.version``, ``cuda.cublas_version``);
* ``"packages.NAME"`` sets an installed distribution's version;
* ``"env.NAME"`` sets an environment variable.

Editing the snapshot (not the flattened facts) keeps every derived fact honest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from te_doctor.snapshot.file import loads
from te_doctor.snapshot.model import Snapshot

FIXTURES = Path(__file__).parent / "fixtures"


def _fact(value: Any) -> dict[str, Any]:
    return {"value": value, "source": "scenario"}


def edited_snapshot(base: str, edits: dict[str, Any]) -> Snapshot:
    """The fixture ``base`` with ``edits`` applied; raises KeyError for a path it lacks."""
    data = json.loads((FIXTURES / f"{base}.json").read_text(encoding="utf-8"))
    for path, value in edits.items():
        section, _, rest = path.partition(".")
        if section == "gpus":
            _, _, field = rest.partition(".")
            for gpu in data["gpus"]:
                gpu[field] = _fact(value)
        elif section == "env":
            data["environment"]["variables"][rest] = value
        elif section == "packages":
            rows = [
                p
                for p in data["packages"]["installed"]
                if canonicalize_name(p["name"]) == canonicalize_name(rest)
            ]
            if not rows:
                raise KeyError(f"{base}: no installed package {rest!r}")
            for row in rows:
                row["version"] = _fact(value)
        else:
            if rest not in data[section]:
                raise KeyError(f"{base}: no fact {path!r}")
            data[section][rest] = _fact(value)
    return loads(json.dumps(data), name=f"{base}+scenario")
