"""The raw bench record: what ran, every sample, on which machine; JSON in and out.

Everything derived (speed-ups, TFLOP/s, the verdict) is recomputed from this record by
``te_doctor.bench.analysis``, so a file saved today is judged by today's rules when loaded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from te_doctor.bench.workload import Workload
from te_doctor.errors import SnapshotError, TeDoctorError
from te_doctor.snapshot.codec import from_data, to_data

BENCH_SCHEMA = "te-doctor/bench/v1"


class BenchFileError(TeDoctorError):
    """A bench result file that cannot be read back."""


@dataclass(frozen=True, slots=True)
class ComponentRun:
    """One component (gemms, mlp, layer) of one path: raw timings and the numerical check."""

    name: str
    status: str
    reason: str
    flops: int
    warmup_s: tuple[float, ...]
    samples_s: tuple[float, ...]
    memory_bytes: int | None
    memory_kind: str
    rel_error: float | None
    error_detail: str


@dataclass(frozen=True, slots=True)
class PathRun:
    """One execution path as its child ran it (or why it did not run)."""

    id: str
    device: str
    status: str
    reason: str
    device_name: str
    torch_version: str
    te_version: str
    duration_s: float
    components: tuple[ComponentRun, ...]


@dataclass(frozen=True, slots=True)
class BenchMachine:
    """The facts a result depends on; "" where unknown."""

    hostname: str
    gpu: str
    compute_capability: str
    gpu_count: int
    driver: str
    torch: str
    torch_cuda: str
    transformer_engine: str
    cudnn: str
    python: str
    cpu_count: int


@dataclass(frozen=True, slots=True)
class BenchSettings:
    """How hard the bench measured: warm-up steps, timed repeats, time budget per component."""

    warmup: int
    repeats: int
    budget_s: float


@dataclass(frozen=True, slots=True)
class BenchRun:
    """A whole ``te-doctor bench`` run (``schema``: te-doctor/bench/v1)."""

    schema: str
    te_doctor_version: str
    created_at: str
    machine_key: str
    machine: BenchMachine
    workload: Workload
    settings: BenchSettings
    paths: tuple[PathRun, ...]


def run_to_data(run: BenchRun, analysis: Any = None) -> dict[str, Any]:
    """The record as JSON data, with the derived ``analysis`` appended when given."""
    data: dict[str, Any] = to_data(run)
    if analysis is not None:
        data["analysis"] = to_data(analysis)
    return data


def loads_run(text: str, *, name: str) -> BenchRun:
    """Parse a bench result; ``BenchFileError`` names the file and the field."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchFileError(
            f"{name}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict):
        raise BenchFileError(f"{name}: expected a JSON object, got {type(data).__name__}")
    if data.get("schema") != BENCH_SCHEMA:
        raise BenchFileError(
            f"{name}: schema: expected {BENCH_SCHEMA!r}, got {data.get('schema')!r}"
            " (is this a te-doctor bench result?)"
        )
    data.pop("analysis", None)
    try:
        return from_data(BenchRun, data)
    except SnapshotError as exc:
        raise BenchFileError(f"{name}: {exc}") from None


def load_run(file: Path) -> BenchRun:
    """Read a bench result file."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchFileError(f"{file}: cannot read bench result: {exc}") from None
    return loads_run(text, name=str(file))
