"""An optional plot of the speed-up over BF16 per component and path (needs matplotlib)."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from te_doctor.bench.analysis import BenchAnalysis
from te_doctor.bench.workload import COMPONENTS
from te_doctor.errors import TeDoctorError

FORMATS = (".png", ".svg")


class PlotError(TeDoctorError):
    """The plot cannot be drawn: matplotlib is missing or the file type is not supported."""


def check_plot_target(file: Path) -> None:
    """Fail before measuring, not after: a .png/.svg name and matplotlib importable."""
    if file.suffix.lower() not in FORMATS:
        raise PlotError(f"--plot {file}: the file name must end in .png or .svg")
    if importlib.util.find_spec("matplotlib") is None:
        raise PlotError(f"--plot {file}: matplotlib is not installed (pip install matplotlib)")


def write_plot(analysis: BenchAnalysis, title: str, file: Path) -> None:
    """Grouped bars: one group per component, one bar per path, BF16 = 1.0 drawn as a line."""
    check_plot_target(file)
    matplotlib = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    pyplot = importlib.import_module("matplotlib.pyplot")
    measured = [r for r in analysis.results if r.speedup is not None]
    paths = list(dict.fromkeys(f"{r.path} ({r.device})" for r in measured))
    components = [c for c in COMPONENTS if any(r.component == c for r in measured)]
    figure, axes = pyplot.subplots(
        figsize=(max(6.0, 1.6 * len(components) * max(1, len(paths)) / 2), 4)
    )
    width = 0.8 / max(1, len(paths))
    for index, label in enumerate(paths):
        values = [
            next(
                (
                    r.speedup or 0.0
                    for r in measured
                    if f"{r.path} ({r.device})" == label and r.component == c
                ),
                0.0,
            )
            for c in components
        ]
        positions = [i + (index - (len(paths) - 1) / 2) * width for i in range(len(components))]
        axes.bar(positions, values, width, label=label)
    axes.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    axes.set_xticks(range(len(components)), components)
    axes.set_ylabel("speed-up over BF16 (higher is better)")
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(file)
    pyplot.close(figure)
