"""Flat facts of what the smoke test showed (``smoke.*``), derived from its checks."""

from __future__ import annotations

from typing import Any

from te_doctor.engine.derived import DERIVED
from te_doctor.engine.fact_paths import FACT_TYPES
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.model import Snapshot


def smoke_facts(snapshot: Snapshot) -> dict[str, Fact[Any]]:
    smoke = snapshot.smoke
    values: dict[str, Fact[Any]] = {
        "smoke.outcome": smoke.outcome,
        "smoke.stage": smoke.stage,
        "smoke.error_text": smoke.error_text,
        "smoke.error_line": _last_line(smoke.error_text),
        "smoke.torch_cuda_available": smoke.torch_cuda_available,
        "smoke.torch_device_capability": smoke.torch_device_capability,
        "smoke.torch_cudnn_version": smoke.torch_cudnn_version,
    }
    if not smoke.outcome.known:  # not run: every derived smoke fact is missing for that reason
        for path in FACT_TYPES:
            if path.startswith("smoke.") and path not in values:
                values[path] = Fact(smoke.outcome.state, None, smoke.outcome.reason, "smoke")
        return values

    def names(*statuses: str) -> Fact[tuple[str, ...]]:
        return Fact.of(tuple(c.name for c in smoke.checks if c.status in statuses), DERIVED)

    cudnn_dirs = {
        lib.path.rsplit("/", 1)[0] for lib in smoke.loaded_libraries if lib.name == "cudnn"
    }
    values.update(
        {
            "smoke.verified": names("ok"),
            "smoke.failed_checks": names("failed"),
            "smoke.numerics_failures": names("numerics"),
            "smoke.failed_check_count": Fact.of(
                sum(c.status == "failed" for c in smoke.checks), DERIVED
            ),
            "smoke.numerics_failure_count": Fact.of(
                sum(c.status == "numerics" for c in smoke.checks), DERIVED
            ),
            "smoke.loaded_cudnn_copies": Fact.of(len(cudnn_dirs), DERIVED),
        }
    )
    return values


def _last_line(text: Fact[str]) -> Fact[str]:
    if text.value is None:
        return text
    lines = [line.strip() for line in text.value.splitlines() if line.strip()]
    return Fact.of(lines[-1][:300] if lines else "", DERIVED)
