"""The JSON Schema of a snapshot, generated from the dataclasses so the two cannot drift.

The generated schema ships as ``te_doctor/snapshot.schema.json``; a test checks it is current.
Regenerate with ``python -m te_doctor.schema > te_doctor/snapshot.schema.json``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any, NewType, get_args, get_origin

from te_doctor.codec import field_types
from te_doctor.facts import Fact
from te_doctor.snapshot import SCHEMA_VERSION, Snapshot

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def snapshot_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) describing a snapshot of the current schema version."""
    definitions: dict[str, Any] = {}
    root = _record_schema(Snapshot, definitions)
    root["properties"]["schema_version"] = {"const": SCHEMA_VERSION}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://te-doctor/snapshot/v{SCHEMA_VERSION}.json",
        "title": "te-doctor snapshot",
        **root,
        "$defs": dict(sorted(definitions.items())),
    }


def _type_schema(tp: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    if isinstance(tp, NewType):
        return {**_type_schema(tp.__supertype__, definitions), "format": tp.__name__}
    origin = get_origin(tp)
    if origin is Fact:
        (value_type,) = get_args(tp)
        name = f"Fact_{_type_name(value_type)}"
        if name not in definitions:
            value = _type_schema(value_type, definitions)
            definitions[name] = {
                "oneOf": [
                    _fact_variant("value", value),
                    _fact_variant("absent", {"type": "string"}),
                    _fact_variant("unknown", {"type": "string"}),
                ]
            }
        return {"$ref": f"#/$defs/{name}"}
    if origin is tuple:
        return {"type": "array", "items": _type_schema(get_args(tp)[0], definitions)}
    if origin is Mapping:
        return {
            "type": "object",
            "additionalProperties": _type_schema(get_args(tp)[1], definitions),
        }
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if tp.__name__ not in definitions:
            definitions[tp.__name__] = {}  # placeholder breaks recursion
            definitions[tp.__name__] = _record_schema(tp, definitions)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    return {"type": _JSON_TYPES[tp]}


def _type_name(tp: Any) -> str:
    if get_origin(tp) is tuple:
        return f"list_{_type_name(get_args(tp)[0])}"
    return str(tp.__name__)


def _fact_variant(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: value, "source": {"type": "string"}},
        "required": [key, "source"],
        "additionalProperties": False,
    }


def _record_schema(cls: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    types = field_types(cls)
    return {
        "type": "object",
        "description": (cls.__doc__ or "").strip(),
        "properties": {name: _type_schema(tp, definitions) for name, tp in types.items()},
        "required": list(types),
        "additionalProperties": False,
    }


def schema_text() -> str:
    """The schema as the exact text of the shipped file."""
    return json.dumps(snapshot_schema(), indent=2) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
