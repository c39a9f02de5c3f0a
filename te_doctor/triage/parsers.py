"""Read facts from a pasted bug report: collect_env, nvidia-smi, nvcc, pip, te-doctor, hand-typed
environment lists, tracebacks.

:func:`parse_report` runs every tool format's parser over the same cleaned-up text (see
:func:`te_doctor.triage.parse_common.prepare`), then, over the lines no tool parser read, the
hand-typed ``key: value`` parser and the reader of ``name==version`` pins in sentences and
commands, and merges what they found; the lines nobody read (errors, logs, sentences) are kept
as ``unread_text`` for the error signatures. It never guesses:
a fact is recorded only when the text states it, and when two places in the text state
different values for the same fact (a report that compares two machines, two users'
outputs in one thread) the fact is dropped and listed in ``conflicts`` instead. It never
raises: a parser that fails contributes nothing, and the others still run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from te_doctor.engine.condition_parser import spec_of
from te_doctor.engine.derived import driver_cuda_version
from te_doctor.engine.fact_paths import PYTHON_TYPES, FactType
from te_doctor.triage import (
    parse_check_report,
    parse_collect_env,
    parse_errors,
    parse_freeform,
    parse_nvidia,
    parse_packages,
    parse_pins,
    parse_te_doctor,
)
from te_doctor.triage.parse_common import Findings, Observation, Report, prepare, read_mask
from te_doctor.triage.parse_freeform import local_cuda, local_rocm


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a pasted report states, by fact path, with where each fact was read."""

    facts: Mapping[str, object]  # fact path -> value of the declared type
    sources: Mapping[str, str]  # fact path -> where it came from
    error_text: str  # every traceback / error line found, joined with newlines
    formats: tuple[str, ...]  # which report kinds were recognised
    #: fact path -> the different values the text states for it (those paths are not facts)
    conflicts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: the text no environment parser read (errors, logs, sentences), head and tail if long
    unread_text: str = ""
    #: fact path -> where the text says it is not there (never a path it also states)
    absent: Mapping[str, str] = field(default_factory=dict)


#: Parsers in priority order: the first to state a value gives the fact its source.
_PARSERS: tuple[Callable[[Report], Findings], ...] = (
    parse_te_doctor.parse,
    parse_check_report.parse,
    parse_collect_env.parse,
    parse_nvidia.parse,
    parse_packages.parse,
)


def parse_report(text: str) -> Parsed:
    """Every fact, error line and report kind found in ``text``; never raises."""
    try:
        return _parse(_as_text(text))
    except Exception:  # noqa: BLE001 - a bug in the merge must not take triage down either
        return Parsed({}, {}, "", ())


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return ""


def _parse(text: str) -> Parsed:
    report = prepare(text)
    results = [_safely(parser, report) for parser in _PARSERS]
    owned = [span for found in results for span in found.owned_lines]
    typed = _safely(lambda r: parse_freeform.parse(r, owned), report)  # what no tool printed
    results.append(typed)
    owned += typed.owned_lines
    results.append(_safely(lambda r: parse_pins.parse(r, owned), report))  # pins in sentences
    try:
        error_text, errors = parse_errors.parse(report, owned)
    except Exception:  # noqa: BLE001 - a parser bug yields no errors, not a crash
        error_text, errors = "", Findings()
    results.append(errors)
    in_reports = [error for found in results for error in found.errors]  # pasted smoke tests'
    error_text = "\n".join(text for text in (*in_reports, error_text) if text)
    facts, sources, conflicts = _merge(obs for found in results for obs in found.observations)
    _derive(facts, sources, conflicts)
    formats = tuple(dict.fromkeys(fmt for found in results for fmt in found.formats))
    absent = {
        path: where
        for found in results
        for path, where in found.absent
        if path not in facts and path not in conflicts
    }
    return Parsed(facts, sources, error_text, formats, conflicts, _unread(report, owned), absent)


#: How much unread text signatures are matched on: its first and last characters.
UNREAD_HEAD = 60_000
UNREAD_TAIL = 60_000


def _unread(report: Report, owned: Iterable[tuple[int, int]]) -> str:
    """The lines no environment parser read, without blank ones, head and tail if long."""
    read = read_mask(len(report.lines), owned)
    text = "\n".join(
        line for number, line in enumerate(report.lines) if not read[number] and line.strip()
    )
    if len(text) > UNREAD_HEAD + UNREAD_TAIL:
        text = text[:UNREAD_HEAD] + "\n" + text[-UNREAD_TAIL:]
    return text


def _safely(parser: Callable[[Report], Findings], report: Report) -> Findings:
    try:
        return parser(report)
    except Exception:  # noqa: BLE001 - a parser bug yields no facts from it, not a crash
        return Findings()


def _merge(
    observations: Iterable[Observation],
) -> tuple[dict[str, object], dict[str, str], dict[str, tuple[str, ...]]]:
    """First value per path wins; a path stated with two different values is a conflict."""
    facts: dict[str, object] = {}
    sources: dict[str, str] = {}
    clashing: dict[str, list[object]] = {}
    for obs in observations:
        kind = _kind(obs)
        if kind is None:
            continue
        if obs.path in clashing:
            if not any(_same(kind, obs.value, v) for v in clashing[obs.path]):
                clashing[obs.path].append(obs.value)
        elif obs.path not in facts:
            facts[obs.path] = obs.value
            sources[obs.path] = obs.source
        elif not _same(kind, facts[obs.path], obs.value):
            clashing[obs.path] = [facts.pop(obs.path), obs.value]
            sources.pop(obs.path)
    conflicts = {path: tuple(_show(v) for v in values) for path, values in clashing.items()}
    return facts, sources, conflicts


def _show(value: object) -> str:
    return ", ".join(value) if isinstance(value, tuple) else str(value)


def _kind(obs: Observation) -> FactType | None:
    """The declared type of ``obs.path`` if ``obs.value`` has it, else None (dropped)."""
    spec = spec_of(obs.path)
    if spec is None:
        return None
    expected = PYTHON_TYPES[spec.type]
    value = obs.value
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        return None
    if isinstance(value, tuple) and not all(isinstance(item, str) for item in value):
        return None
    return spec.type


def _same(kind: FactType, left: object, right: object) -> bool:
    if left == right:
        return True
    if kind is FactType.VERSION:
        try:
            return Version(str(left)) == Version(str(right))
        except InvalidVersion:
            return left == right
    if kind is FactType.CC:
        return _cc(str(left)) == _cc(str(right))
    return left == right


def _cc(text: str) -> tuple[str, ...]:
    major, _, minor = text.partition(".")
    return (major.lstrip("0") or "0", minor or "0")


def _derive(
    facts: dict[str, object], sources: dict[str, str], conflicts: Mapping[str, object]
) -> None:
    """Facts another fact states: ``te.version`` and ``torch.version`` are the versions of their
    distributions, a ``+cu126``/``+rocm6.2`` local version names the CUDA/ROCm torch was built
    for, and a driver's version the highest CUDA it supports."""
    _copy(facts, sources, conflicts, "packages.transformer_engine", "te.version", str)
    _copy(facts, sources, conflicts, "packages.torch", "torch.version", str)
    torch = facts.get("torch.version")
    if isinstance(torch, str):
        _copy(facts, sources, conflicts, "torch.version", "torch.cuda_version", local_cuda)
        _copy(facts, sources, conflicts, "torch.version", "torch.hip_version", local_rocm)
    if sources.get("driver.version", "").startswith(_NO_DRIVER_CUDA):
        # nvidia-smi and te-doctor print the driver's CUDA themselves: "N/A" or "UNKNOWN" there
        # (no libcuda in a container, a wedged driver) is what they said, not a gap to fill
        _copy(
            facts, sources, conflicts, "driver.version", "driver.cuda_version", driver_cuda_version
        )


#: Formats that state a driver's version but never its CUDA version.
_NO_DRIVER_CUDA = (parse_collect_env.FORMAT, parse_freeform.FORMAT)


def _copy(
    facts: dict[str, object],
    sources: dict[str, str],
    conflicts: Mapping[str, object],
    origin: str,
    path: str,
    derive: Callable[[str], str | None],
) -> None:
    """Set ``path`` to ``derive(facts[origin])`` unless the text states (or disputes) it."""
    value = facts.get(origin)
    if not isinstance(value, str) or path in facts or path in conflicts:
        return
    derived = derive(value)
    if derived is not None:
        facts[path] = derived
        sources[path] = f"{origin}: {sources[origin]}"
