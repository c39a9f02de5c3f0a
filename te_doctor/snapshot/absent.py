"""The smoke section of a snapshot taken without the smoke test."""

from __future__ import annotations

from typing import Any

from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.model import SmokeFacts

SOURCE = "smoke"


def not_run(reason: str, python: str = "") -> SmokeFacts:
    """SmokeFacts for a run without the smoke test (``--no-smoke``, or a saved snapshot)."""
    gone: Fact[Any] = Fact.absent(reason, SOURCE)
    return SmokeFacts(
        outcome=gone,
        stage=gone,
        error_text=gone,
        python=python,
        duration_ms=0.0,
        torch_cuda_available=gone,
        torch_device_capability=gone,
        torch_cudnn_version=gone,
        te_support=(),
        checks=(),
        loaded_libraries=(),
    )
