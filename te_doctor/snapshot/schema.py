"""JSON Schemas generated from the record dataclasses: the snapshot's, and the machinery for any.

The shipped files (``te_doctor/snapshot.schema.json``, ``te_doctor/report.schema.json``) are
written by ``python -m te_doctor.check.schemas``.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import types
from collections.abc import Mapping
from typing import Any, NewType, get_args, get_origin

from te_doctor.snapshot.codec import field_types
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.model import SCHEMA_VERSION, Snapshot

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def snapshot_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) describing a snapshot of the current schema version."""
    return document_schema(
        Snapshot,
        "te-doctor snapshot",
        f"snapshot/v{SCHEMA_VERSION}",
        "schema_version",
        SCHEMA_VERSION,
    )


def document_schema(
    cls: Any, title: str, name: str, version_key: str, version: object
) -> dict[str, Any]:
    """A standalone draft 2020-12 schema for the dataclass ``cls``, its version pinned."""
    definitions: dict[str, Any] = {}
    root = _record_schema(cls, definitions)
    root["properties"][version_key] = {"const": version}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://te-doctor/{name}.json",
        "title": title,
        **root,
        "$defs": dict(sorted(definitions.items())),
    }


def _type_schema(tp: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"type": "string", "enum": [member.value for member in tp]}
    if get_origin(tp) is types.UnionType:
        return {"anyOf": [_type_schema(arg, definitions) for arg in get_args(tp)]}
    if tp is type(None):
        return {"type": "null"}
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
    """Every field is required but those added later with ``metadata={"optional": True}``."""
    types = field_types(cls)
    optional = {f.name for f in dataclasses.fields(cls) if f.metadata.get("optional")}
    return {
        "type": "object",
        # cleandoc: Python 3.13 strips docstring indentation at compile time, older ones do not.
        "description": inspect.cleandoc(cls.__doc__ or ""),
        "properties": {name: _type_schema(tp, definitions) for name, tp in types.items()},
        "required": [name for name in types if name not in optional],
        "additionalProperties": False,
    }
