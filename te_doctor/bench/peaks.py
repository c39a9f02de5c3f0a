"""Datasheet dense peak throughput per GPU (``rules/bench/peaks.toml``) and a strict loader.

``te-doctor bench`` divides a measured rate by the GPU's dense peak for the same precision.
The table is data: entries are matched in file order against the NVML device name, first
match wins, and a GPU or precision that is not in it simply gets no percent, with a reason.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from te_doctor.engine.rules import builtin_rules_dir
from te_doctor.errors import TeDoctorError
from te_doctor.toml_compat import tomllib

PEAKS_SCHEMA = 1
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")
_TEXT_KEYS = ("name", "pattern", "source")
_KEYS = (*_TEXT_KEYS, *PRECISIONS)


class PeaksError(TeDoctorError):
    """A peaks file that cannot be read or breaks the format; the message is one line."""


@dataclass(frozen=True, slots=True)
class GpuPeaks:
    """One GPU's datasheet dense peaks: ``tflops`` maps precision to TFLOP/s."""

    name: str
    pattern: re.Pattern[str]
    source: str
    tflops: Mapping[str, float]


def peaks_file() -> Path:
    """The built-in table, ``rules/bench/peaks.toml``."""
    return builtin_rules_dir() / "bench" / "peaks.toml"


def load_peaks(file: Path | None = None) -> tuple[GpuPeaks, ...]:
    """The entries of ``file`` (default: the built-in table), in order; raises ``PeaksError``."""
    return _builtin_peaks() if file is None else _load(file)


@functools.cache
def _builtin_peaks() -> tuple[GpuPeaks, ...]:
    return _load(peaks_file())


def match_gpu(peaks: Sequence[GpuPeaks], gpu_name: str) -> GpuPeaks | None:
    """The first entry whose pattern is found in ``gpu_name``, or ``None``."""
    return next((entry for entry in peaks if entry.pattern.search(gpu_name)), None)


def peak_for(peaks: Sequence[GpuPeaks], gpu_name: str, precision: str) -> tuple[float | None, str]:
    """``(TFLOP/s, "")`` when the table has the figure, else ``(None, why not)``."""
    if precision not in PRECISIONS:
        return None, f"te-doctor's table of datasheet peaks has no precision {precision!r}"
    entry = match_gpu(peaks, gpu_name)
    if entry is None:
        return None, f"{gpu_name or 'this GPU'} is not in te-doctor's table of datasheet peaks"
    value = entry.tflops.get(precision)
    if value is None:
        return None, f"the datasheet gives no {precision} peak for {entry.name}"
    return value, ""


def _load(file: Path) -> tuple[GpuPeaks, ...]:
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PeaksError(f"{file}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PeaksError(f"{file}: not valid TOML: {exc}") from None
    _unknown_keys(data, ("schema", "gpu"), str(file))
    if data.get("schema") != PEAKS_SCHEMA:
        raise PeaksError(f"{file}: schema: expected {PEAKS_SCHEMA}, got {data.get('schema')!r}")
    entries = data.get("gpu", [])
    if not isinstance(entries, list) or not entries:
        raise PeaksError(f"{file}: gpu: expected one or more [[gpu]] tables")
    peaks = tuple(_entry(entry, f"{file}: gpu[{i}]") for i, entry in enumerate(entries))
    seen: set[str] = set()
    for i, entry in enumerate(peaks):
        if entry.name in seen:
            raise PeaksError(f"{file}: gpu[{i}] ({entry.name}): name: already used")
        seen.add(entry.name)
    return peaks


def _entry(data: Any, where: str) -> GpuPeaks:
    if not isinstance(data, dict):
        raise PeaksError(f"{where}: expected a table")
    if isinstance(data.get("name"), str) and data["name"].strip():
        where = f"{where} ({data['name']})"
    _unknown_keys(data, _KEYS, where)
    text: dict[str, str] = {}
    for key in _TEXT_KEYS:
        if key not in data:
            raise PeaksError(f"{where}: missing required key '{key}'")
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise PeaksError(f"{where}: {key}: expected a non-empty string")
        text[key] = value
    try:
        pattern = re.compile(text["pattern"])
    except re.error as exc:
        raise PeaksError(f"{where}: pattern: not a valid regular expression: {exc}") from None
    tflops: dict[str, float] = {}
    for precision in PRECISIONS:
        if precision not in data:
            continue
        value = data[precision]
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        if not is_number or not math.isfinite(value) or value <= 0:
            raise PeaksError(f"{where}: {precision}: must be a positive number, got {value!r}")
        tflops[precision] = float(value)
    if not tflops:
        raise PeaksError(f"{where}: no peak given (expected one of {', '.join(PRECISIONS)})")
    return GpuPeaks(
        name=text["name"],
        pattern=pattern,
        source=text["source"],
        tflops=MappingProxyType(tflops),
    )


def _unknown_keys(data: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise PeaksError(f"{where}: unknown key '{key}'{hint}")
