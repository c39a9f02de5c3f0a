"""``te-doctor bench`` output: a table in the terminal, Markdown, JSON; formatting only."""

from __future__ import annotations

import json
from collections.abc import Sequence

from te_doctor.bench.analysis import BenchAnalysis, ComponentResult
from te_doctor.bench.record import BenchRun, run_to_data
from te_doctor.bench.stability import UNSTABLE_SPREAD, rerun_advice

HEADERS = (
    "Path",
    "Device",
    "Component",
    "Median",
    "Spread",
    "TFLOP/s",
    "% peak",
    "vs BF16",
    "Error",
    "Memory",
)


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.1f} us"


def _memory(result: ComponentResult) -> str:
    if result.memory_bytes is None:
        return "-"
    kind = " RSS" if result.memory_kind == "peak-rss" else ""
    return f"{result.memory_bytes / 1024**2:,.0f} MiB{kind}"


def _row(result: ComponentResult) -> tuple[str, ...]:
    timing = result.timing
    if timing is None:
        return (result.path, result.device, result.component, result.status, "", "", "", "", "", "")
    spread = f"±{100 * (result.spread or 0.0):.1f}%" + (" unstable" if result.unstable else "")
    versus = "-" if result.speedup is None else f"{result.speedup:.2f}x"
    if result.speedup is None and result.baseline:
        versus = "not compared"  # this row or its baseline is unstable
    error = "-" if result.rel_error is None else f"{result.rel_error:.1e}"
    if result.rel_error is not None and result.rel_error > result.tolerance:
        error += " (!)"
    return (
        result.path,
        result.device,
        result.component,
        _seconds(timing.median_s),
        spread,
        "-" if result.tflops is None else f"{result.tflops:.3g}",
        "-" if result.percent_of_peak is None else f"{result.percent_of_peak:.0f}%",
        versus,
        error,
        _memory(result),
    )


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _workload(run: BenchRun) -> str:
    w = run.workload
    return (
        f"{w.name}: hidden {w.hidden_size}, FFN {w.ffn_hidden_size}, {w.num_heads} heads "
        f"({w.num_kv_heads} KV), seq {w.seq_len} x batch {w.batch_size}, {w.activation}"
    )


def _machine(run: BenchRun) -> str:
    m = run.machine
    gpu = f"{m.gpu} (cc {m.compute_capability}) x{m.gpu_count}" if m.gpu else "no GPU"
    return (
        f"{gpu}, driver {m.driver or '-'}, torch {m.torch or '-'}, "
        f"TE {m.transformer_engine or '-'}, {m.cpu_count} CPUs"
    )


def _not_measured(run: BenchRun, analysis: BenchAnalysis) -> list[str]:
    lines = [
        f"  {path.id} on {path.device}: {path.status}: {path.reason}"
        for path in run.paths
        if path.status != "ran"
    ]
    for result in analysis.results:
        ran = next(p for p in run.paths if p.id == result.path).status == "ran"
        if ran and result.timing is None:
            lines.append(f"  {result.path} {result.component}: {result.status}: {result.reason}")
    return lines


def _unstable(run: BenchRun, analysis: BenchAnalysis) -> list[str]:
    """Which rows are too unsteady to compare, why, and how to measure again."""
    shaky = [r for r in analysis.results if r.unstable]
    if not shaky:
        return []
    return [
        f"Unstable (no speed-up is computed from these, as a row or as a baseline; "
        f"{rerun_advice(run.settings)}):",
        *(f"  {r.path} {r.component}: {r.unstable}" for r in shaky),
    ]


def bench_text(run: BenchRun, analysis: BenchAnalysis) -> str:
    """The terminal report: what was measured, the table, what was not, the verdict."""
    settings = run.settings
    lines = [
        f"te-doctor bench: {_workload(run)}",
        f"Machine: {_machine(run)}; measured {run.created_at}",
        f"Each sample is one forward + backward step; warm-up (excluded): at least "
        f"{settings.warmup} steps, until the step time settles; timed: up to {settings.repeats}; "
        f"budget {settings.budget_s:g} s per component; rows with a spread over "
        f"±{UNSTABLE_SPREAD:.0%} are not compared.",
        "",
    ]
    timed = [r for r in analysis.results if r.timing is not None]
    if timed:
        lines += _table([HEADERS, *(_row(r) for r in timed)])
    else:
        lines.append("Nothing could be measured.")
    missing = _not_measured(run, analysis)
    if missing:
        lines += ["", "Not measured:", *missing]
    if timed:
        notes = sorted({r.peak_note for r in timed if r.peak_note})
        lines += ["", *(f"Peak: {note}" for note in notes)]
        lines.append(
            "Spread is half the interquartile range; vs BF16 is the BF16 median over this one; "
            "Error is ||out - FP32|| / ||FP32|| of the forward output ((!) above tolerance)."
        )
        lines += _unstable(run, analysis)
    lines += [
        "",
        f"Verdict: {analysis.verdict.text}",
    ]
    return "\n".join(lines) + "\n"


def bench_markdown(run: BenchRun, analysis: BenchAnalysis) -> str:
    """The table and verdict as Markdown, for an issue or a step summary."""
    timed = [r for r in analysis.results if r.timing is not None]
    lines = [f"## te-doctor bench: {_workload(run)}", "", f"Machine: {_machine(run)}", ""]
    if timed:
        lines += ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += ["| " + " | ".join(_row(r)) + " |" for r in timed]
    missing = _not_measured(run, analysis)
    if missing:
        lines += ["", "Not measured:", *(f"- {line.strip()}" for line in missing)]
    unstable = _unstable(run, analysis)
    if unstable:
        lines += ["", unstable[0], *(f"- {line.strip()}" for line in unstable[1:])]
    lines += ["", f"**Verdict:** {analysis.verdict.text}"]
    return "\n".join(lines) + "\n"


def bench_json(run: BenchRun, analysis: BenchAnalysis) -> str:
    """The raw record (every sample) with the analysis appended."""
    return json.dumps(run_to_data(run, analysis), indent=2) + "\n"
