"""Typed conversion between snapshot records and JSON data, driven by the dataclass annotations.

``to_data`` never fails; ``from_data`` checks every field against its declared type and raises
``SnapshotError`` naming the exact place (``gpus[0].compute_capability: ...``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, NewType, TypeVar, get_args, get_origin

from te_doctor.errors import SnapshotError
from te_doctor.snapshot.facts import Fact, FactState

R = TypeVar("R")

_SCALARS: tuple[type, ...] = (str, int, float, bool)


_FIELD_TYPES: dict[Any, dict[str, Any]] = {}


def field_types(cls: Any) -> dict[str, Any]:
    """The resolved type of every field of a dataclass, in declaration order (cached)."""
    if cls not in _FIELD_TYPES:
        hints = typing.get_type_hints(cls)
        _FIELD_TYPES[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    return _FIELD_TYPES[cls]


def base_type(tp: Any) -> Any:
    """Strip ``NewType`` wrappers: ``Version`` -> ``str``."""
    while isinstance(tp, NewType):
        tp = tp.__supertype__
    return tp


def to_data(obj: Any) -> Any:
    """Convert a snapshot record (or part of one) to plain JSON-compatible data."""
    if isinstance(obj, Fact):
        value_key = {FactState.KNOWN: "value", FactState.ABSENT: "absent"}.get(obj.state, "unknown")
        payload = to_data(obj.value) if obj.state is FactState.KNOWN else obj.reason
        return {value_key: payload, "source": obj.source}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {name: to_data(getattr(obj, name)) for name in field_types(type(obj))}
    if isinstance(obj, tuple):
        return [to_data(item) for item in obj]
    if isinstance(obj, Mapping):
        return {str(key): to_data(value) for key, value in obj.items()}
    return obj


def from_data(tp: type[R], data: Any, where: str = "") -> R:
    """Build a value of type ``tp`` from JSON data, or raise ``SnapshotError`` saying where."""
    result: R = _decode(tp, data, where)
    return result


def _decode(tp: Any, data: Any, where: str) -> Any:
    tp = base_type(tp)
    origin = get_origin(tp)
    if origin is Fact:
        return _decode_fact(get_args(tp)[0], data, where)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_record(tp, data, where)
    if origin is tuple:
        item_type = get_args(tp)[0]
        items = _expect(list, data, where, "a list")
        return tuple(_decode(item_type, item, f"{where}[{i}]") for i, item in enumerate(items))
    if origin in (Mapping, dict):
        value_type = get_args(tp)[1]
        table = _expect(dict, data, where, "an object")
        return {key: _decode(value_type, value, f"{where}.{key}") for key, value in table.items()}
    if origin in (types.UnionType, typing.Union):
        return _decode_optional(get_args(tp), data, where)
    if tp in _SCALARS:
        return _decode_scalar(tp, data, where)
    raise TypeError(f"unsupported snapshot field type {tp!r} at {where}")


def _decode_optional(options: tuple[Any, ...], data: Any, where: str) -> Any:
    """``X | None``: null, or an ``X``; other unions are not part of any record."""
    present = [option for option in options if option is not type(None)]
    if len(present) != 1 or len(options) != 2:
        raise TypeError(f"only ``X | None`` unions are supported ({where})")
    return None if data is None else _decode(present[0], data, where)


def _decode_scalar(tp: type, data: Any, where: str) -> Any:
    # bool is a subclass of int in Python but not in JSON: keep them apart.
    if isinstance(data, bool) != (tp is bool) or not isinstance(data, tp):
        if tp is float and isinstance(data, int) and not isinstance(data, bool):
            return float(data)
        raise SnapshotError(f"{where}: expected {tp.__name__}, got {type(data).__name__} {data!r}")
    return data


def _decode_fact(value_type: Any, data: Any, where: str) -> Fact[Any]:
    table = _expect(dict, data, where, "a fact object")
    keys = set(table) - {"source"}
    if len(keys) != 1 or not keys <= {"value", "absent", "unknown"}:
        raise SnapshotError(
            f"{where}: a fact needs exactly one of 'value', 'absent' or 'unknown'"
            f" (got {sorted(table)})"
        )
    source = _decode_scalar(str, table.get("source", ""), f"{where}.source")
    (key,) = keys
    if key == "value":
        return Fact.of(_decode(value_type, table["value"], f"{where}.value"), source)
    reason = _decode_scalar(str, table[key], f"{where}.{key}")
    return Fact.absent(reason, source) if key == "absent" else Fact.unknown(reason, source)


def _decode_record(cls: type, data: Any, where: str) -> Any:
    table = _expect(dict, data, where, "an object")
    types_ = field_types(cls)
    unknown_keys = sorted(set(table) - set(types_))
    if unknown_keys:
        raise SnapshotError(f"{_join(where, unknown_keys[0])}: unknown field")
    missing = [name for name in types_ if name not in table]
    if missing:
        raise SnapshotError(f"{_join(where, missing[0])}: missing field")
    values = {name: _decode(tp, table[name], _join(where, name)) for name, tp in types_.items()}
    return cls(**values)


def _expect(kind: type, data: Any, where: str, what: str) -> Any:
    if not isinstance(data, kind):
        raise SnapshotError(f"{where or 'top level'}: expected {what}, got {type(data).__name__}")
    return data


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def unknown_record(cls: type[R], reason: str, source: str) -> R:
    """A record of type ``cls`` whose every fact is unknown for ``reason`` (a crashed probe)."""
    values: dict[str, Any] = {}
    for name, tp in field_types(cls).items():
        tp = base_type(tp)
        origin = get_origin(tp)
        if origin is Fact:
            values[name] = Fact.unknown(reason, source)
        elif origin is tuple:
            values[name] = ()
        elif origin in (Mapping, dict):
            values[name] = {}
        elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
            values[name] = unknown_record(tp, reason, source)
        else:
            values[name] = tp()
    return cls(**values)
