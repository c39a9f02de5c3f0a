"""Human-readable snapshots keep the CUDA versions apart and say why facts are missing."""

from __future__ import annotations

from pathlib import Path

from te_doctor.render.snapshot_renderers import SNAPSHOT_RENDERERS, OutputFormat
from te_doctor.render.text import render_snapshot_text
from tests.snapshots import busy_snapshot


def test_every_output_format_has_a_renderer() -> None:
    assert set(SNAPSHOT_RENDERERS) == set(OutputFormat)


def test_cuda_numbers_are_named_apart(tmp_path: Path) -> None:
    text = render_snapshot_text(busy_snapshot(tmp_path))
    for label in (
        "CUDA supported by the driver",
        "CUDA torch was built for",
        "CUDA runtime TE uses",
        "CUDA toolkit (for source builds)",
        "CUDA major TE's core was built for",
    ):
        assert label in text
    assert "nvcc" not in text.split("CUDA runtime TE uses", 1)[1].splitlines()[0]


def test_values_sources_and_reasons_are_shown(tmp_path: Path) -> None:
    text = render_snapshot_text(busy_snapshot(tmp_path))
    assert "550.54.15  [nvidia:nvml]" in text
    assert "#0 NVIDIA H100 80GB HBM3, compute capability 9.0" in text
    assert "hidden by CUDA_VISIBLE_DEVICES" in text
    assert "not present: no CUDA toolkit" in text
    assert "torch 2.4.0+cu121 (wheel)" in text
    assert "cudnn 9.1.0.70 at" in text
