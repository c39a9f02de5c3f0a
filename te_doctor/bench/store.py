"""Bench results kept per machine, so ``te-doctor check`` can cite the last one measured here.

A machine is the facts a measurement depends on (GPU, driver, torch and its CUDA, TE, cuDNN,
Python interpreter): the same facts give the same key, whatever te-doctor version ran.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from te_doctor.bench.record import BenchFileError, BenchMachine, BenchRun, load_run
from te_doctor.files import cache_root, write_atomically
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.model import Snapshot


def default_store_dir() -> Path:
    """``bench/`` in te-doctor's cache (``$TE_DOCTOR_CACHE_DIR``, else the XDG cache)."""
    return cache_root() / "bench"


def _text(fact: Fact[Any]) -> str:
    return str(fact.value) if fact.known else ""


def bench_machine(snapshot: Snapshot) -> BenchMachine:
    """The facts of ``snapshot`` a bench result depends on (GPU 0 of the visible ones)."""
    visible = [g for g in snapshot.gpus if g.visible]
    first = visible[0] if visible else None
    return BenchMachine(
        hostname=_text(snapshot.host.hostname),
        gpu=_text(first.name) if first else "",
        compute_capability=_text(first.compute_capability) if first else "",
        gpu_count=len(visible),
        driver=_text(snapshot.driver.version),
        torch=_text(snapshot.torch.version),
        torch_cuda=_text(snapshot.torch.cuda_version),
        transformer_engine=_text(snapshot.transformer_engine.version),
        cudnn=_text(snapshot.cudnn.version),
        python=_text(snapshot.host.python_executable),
        cpu_count=snapshot.host.cpu_count.get() or 0,
    )


def machine_key(machine: BenchMachine) -> str:
    """A stable hash of everything but the host name and CPU count."""
    facts = [
        machine.gpu,
        machine.compute_capability,
        machine.gpu_count,
        machine.driver,
        machine.torch,
        machine.torch_cuda,
        machine.transformer_engine,
        machine.cudnn,
        machine.python,
    ]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:24]


def save(text: str, key: str, store: Path | None = None) -> Path:
    """Write a result's JSON as the latest for ``key``, atomically; returns the file."""
    target = (store or default_store_dir()) / f"{key}.json"
    write_atomically(target, text)
    return target


def latest(key: str, store: Path | None = None) -> tuple[BenchRun, Path] | None:
    """The last result saved for ``key``, or None (a corrupt file counts as none)."""
    file = (store or default_store_dir()) / f"{key}.json"
    if not file.is_file():
        return None
    try:
        return load_run(file), file
    except BenchFileError:
        return None
