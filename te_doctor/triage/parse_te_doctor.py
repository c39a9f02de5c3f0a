"""te-doctor's own ``probe`` output: the JSON snapshot, or its text rendering.

A JSON snapshot is read with :func:`te_doctor.snapshot.file.loads` and flattened exactly as
``te-doctor check`` would, keeping every known fact. The text rendering
(:mod:`te_doctor.render.text`) prints one ``label  value  [source]`` line per fact; the labels
are rebuilt from the same tables the renderer uses, so they cannot drift apart. Lines whose
value is ``not present`` or ``UNKNOWN`` give no fact.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping

from te_doctor.engine.fact_paths import FACT_TYPES, FactType
from te_doctor.engine.flatten import flatten
from te_doctor.errors import SnapshotError
from te_doctor.snapshot.codec import field_types
from te_doctor.snapshot.file import loads
from te_doctor.snapshot.labels import LABELS, TITLES
from te_doctor.snapshot.model import Snapshot
from te_doctor.triage.parse_common import Findings, Report, package_path, source, version_or_none

JSON_FORMAT = "te-doctor-json"
TEXT_FORMAT = "te-doctor-text"
_MAX_SNAPSHOTS = 3
_TEXT_HEADER = re.compile(r"te-doctor \S{1,40} snapshot \(schema \d{1,4}\), recorded.{0,80}")
_GPU_LINE = re.compile(
    r"#(\d{1,3}) (.{1,120}?), compute capability (\S{1,10}), (?:(\d{1,9}) MiB|memory \?), "
    r"MIG (\S{1,20}), persistence (on|off), (visible|hidden by CUDA_VISIBLE_DEVICES)\b.{0,200}"
)
_PACKAGE_LINE = re.compile(r"- (\S{1,120}) (\S{1,100}) \([^()]{1,40}\) in .{1,2000}")
_PREFIX = {"transformer_engine": "te"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}")


def parse(report: Report) -> Findings:
    """Facts from te-doctor snapshots pasted as JSON or as text."""
    found = Findings()
    if '"schema_version"' in report.text:
        _json(report.text, found)
    if " snapshot (schema " in report.text:
        _text(report.complete_lines(), found)
    return found


def _json(text: str, found: Findings) -> None:
    decoder = json.JSONDecoder()
    position = 0
    for _ in range(_MAX_SNAPSHOTS):
        key = text.find('"schema_version"', position)
        if key < 0:
            return
        position = key + 1
        snapshot, start, end = None, -1, -1
        line_start = text.rfind("\n{", 0, key) + 1  # 0 when none: the text's first character
        for start in dict.fromkeys((text.rfind("{", 0, key), line_start)):
            if not text.startswith("{", start):
                continue
            try:
                data, end = decoder.raw_decode(text, start)
                snapshot = loads(json.dumps(data), name="pasted snapshot")
                break
            except (ValueError, RecursionError, SnapshotError):
                snapshot = None
        if snapshot is None:
            continue
        found.recognised(JSON_FORMAT)
        found.owned_lines.append((text.count("\n", 0, start), text.count("\n", 0, end) + 1))
        _snapshot_facts(snapshot, found)
        position = end


def _snapshot_facts(snapshot: Snapshot, found: Findings) -> None:
    for path, fact in flatten(snapshot).values.items():
        if fact.known and fact.value is not None:
            found.add(path, fact.value, f"{JSON_FORMAT}: {fact.source}")


@functools.cache
def _labels() -> Mapping[str, Mapping[str, str]]:
    """Section title -> printed label -> fact path, for every field that is a declared fact."""
    table: dict[str, dict[str, str]] = {}
    types = field_types(Snapshot)
    for section, title in TITLES.items():
        labels: dict[str, str] = {}
        section_type = types.get(section)
        if section_type is None or section in ("gpus", "environment", "packages"):
            table[title] = labels
            continue
        for name in field_types(section_type):
            path = f"{_PREFIX.get(section, section)}.{name}"
            if path in FACT_TYPES:
                labels[LABELS.get(f"{section}.{name}", name.replace("_", " "))] = path
        # longest first: "cxx version" must not be read as "cxx" with the value "version ..."
        table[title] = dict(sorted(labels.items(), key=lambda item: -len(item[0])))
    return table


def _typed(path: str, text: str) -> object | None:
    kind = FACT_TYPES[path].type
    if kind is FactType.VERSION:
        return version_or_none(text)
    if kind is FactType.INT:
        return int(text) if text.isdigit() else None
    if kind is FactType.BOOL:
        return {"True": True, "False": False}.get(text)
    if kind is FactType.LIST:
        return tuple(item.strip() for item in text.split(", ") if item.strip())
    return text


def _text(lines: tuple[str, ...], found: Findings) -> None:
    labels = _labels()
    titles = set(labels) | {"Probes"}
    section = ""
    start = -1
    gpus: list[tuple[str, ...]] = []
    for number, line in enumerate([*lines, "Probes"]):
        stripped = line.strip()
        if _TEXT_HEADER.fullmatch(stripped):
            _gpu_facts(gpus, found)
            start, section, gpus = number, "", []
            found.recognised(TEXT_FORMAT)
            continue
        if start < 0:
            continue
        if stripped in titles:
            section = stripped
            if section == "Probes":
                _gpu_facts(gpus, found)
                found.owned_lines.append((start, number + 1))
                start, gpus = -1, []
            continue
        if section == TITLES["gpus"]:
            gpu = _GPU_LINE.fullmatch(stripped)
            if gpu and gpu.group(7) == "visible":
                gpus.append(tuple(group or "" for group in gpu.groups()))
        elif section == TITLES["environment"]:
            name, equals, value = stripped.partition("=")
            if equals and _ENV_NAME.fullmatch(name):
                found.add(f"env.{name}", value, source(TEXT_FORMAT, stripped))
        elif section == TITLES["packages"]:
            package = _PACKAGE_LINE.fullmatch(stripped)
            path = package_path(package.group(1)) if package else None
            version = version_or_none(package.group(2)) if package else None
            if path is not None and version is not None:
                found.add(path, version, source(TEXT_FORMAT, stripped))
        else:
            _field(labels.get(section, {}), stripped, found)


def _field(labels: Mapping[str, str], line: str, found: Findings) -> None:
    value_part, bracket, origin = line.rpartition("  [")
    if not bracket or not origin.endswith("]"):
        return  # "not present: ..." / "UNKNOWN: ..." / a list: no value here
    for label, path in labels.items():
        if value_part.startswith(label + " "):
            value = _typed(path, value_part[len(label) :].strip())
            if value is not None and value != ():
                found.add(path, value, source(TEXT_FORMAT, line))
            return


def _gpu_facts(gpus: list[tuple[str, ...]], found: Findings) -> None:
    """``gpus.*`` over the visible GPUs, ``gpu.*`` for the first (te-doctor's default device).

    The renderer prints ``persistence off`` for an unknown mode too, so only ``on`` is a fact.
    """
    if not gpus:
        return
    index, name, cc, memory, mig, persistence, _visible = gpus[0]
    where = source(TEXT_FORMAT, f"#{index} {name}, compute capability {cc}")
    found.add("gpus.count", len(gpus), where)
    names = {gpu[1] for gpu in gpus}
    if "?" not in names:
        found.add("gpus.distinct_names", len(names), where)
    found.add("gpu.index", int(index), where)
    if name != "?":
        found.add("gpu.name", name, where)
    if cc != "?":
        found.add("gpu.compute_capability", cc, where)
    if memory:
        found.add("gpu.memory_total_mib", int(memory), where)
    if mig != "n/a":
        found.add("gpu.mig_mode", mig, where)
    if persistence == "on":
        found.add("gpu.persistence_mode", True, where)
