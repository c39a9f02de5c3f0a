"""The ``bench`` command (wiring only; the work is in te_doctor/bench/)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from te_doctor.bench.record import BenchRun
from te_doctor.bench.workload import ACTIVATIONS, DEFAULT_PRESET, PRESETS
from te_doctor.cli.options import Decorator, format_option, output_option, python_option
from te_doctor.cli.output import write
from te_doctor.errors import ExitCode, TeDoctorError
from te_doctor.probes.target import Target

#: (warm-up, repeats) by where the paths run: GPUs are fast, delayed scaling needs history.
DEFAULT_STEPS = {"cuda": (5, 20), "cpu": (2, 10)}
MODELS_HELP = "; ".join(f"{name}: {source}" for name, (_, source) in PRESETS.items())


def _size_option(name: str, what: str) -> Decorator:
    return click.option(name, type=int, metavar="N", help=f"{what} (overrides --model).")


@click.command()
@click.option(
    "--model",
    type=click.Choice(list(PRESETS)),
    help=f"A preset layer shape (default {DEFAULT_PRESET}). {MODELS_HELP}.",
)
@_size_option("--hidden-size", "Hidden size")
@_size_option("--ffn-hidden-size", "FFN hidden size, before gating")
@_size_option("--num-heads", "Attention heads")
@_size_option("--num-kv-heads", "Key/value heads (grouped-query attention; default --num-heads)")
@_size_option("--seq-len", "Sequence length")
@_size_option("--batch-size", "Micro-batch size")
@click.option("--activation", type=click.Choice(ACTIVATIONS), help="MLP activation.")
@click.option(
    "--paths",
    "path_ids",
    multiple=True,
    metavar="ID[,ID...]",
    help="Execution paths to compare (ids from `te-doctor check -v`); default every viable one.",
)
@click.option("--warmup", type=click.IntRange(min=1), metavar="N", help="Warm-up steps, untimed.")
@click.option("--repeats", type=click.IntRange(min=1), metavar="N", help="Timed steps.")
@click.option(
    "--time-budget",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Most time one component of one path may take; fewer repeats when it would not fit.",
)
@format_option("json", "markdown")
@output_option("the result")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also draw the speed-ups to FILE (.png or .svg; needs matplotlib).",
)
@python_option("Benchmark this interpreter (a venv's bin/python).")
@click.option(
    "--load",
    "load_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Show a saved result (from --format json) instead of measuring.",
)
@click.option(
    "--save/--no-save",
    default=True,
    show_default=True,
    help="Keep the result as this machine's latest, which `te-doctor check` cites.",
)
@click.option(
    "--quiet", "-q", is_flag=True, help="No live status on stderr (there is none on a pipe)."
)
def bench(
    model: str | None,
    hidden_size: int | None,
    ffn_hidden_size: int | None,
    num_heads: int | None,
    num_kv_heads: int | None,
    seq_len: int | None,
    batch_size: int | None,
    activation: str | None,
    path_ids: tuple[str, ...],
    warmup: int | None,
    repeats: int | None,
    time_budget: float,
    output_format: str,
    output: Path | None,
    plot: Path | None,
    python: Target,
    load_file: Path | None,
    save: bool,
    quiet: bool,
) -> None:
    """Measure what each execution path buys on this machine, for one layer's shapes."""
    from te_doctor.bench.analysis import analyse
    from te_doctor.bench.peaks import load_peaks
    from te_doctor.bench.record import load_run
    from te_doctor.render.bench_render import bench_json, bench_markdown, bench_text

    if plot is not None:
        from te_doctor.bench.plot import check_plot_target

        check_plot_target(plot)
    if load_file is not None:
        run = load_run(load_file)
    else:
        run = _measure(
            model,
            {
                "hidden_size": hidden_size,
                "ffn_hidden_size": ffn_hidden_size,
                "num_heads": num_heads,
                "num_kv_heads": num_kv_heads,
                "seq_len": seq_len,
                "batch_size": batch_size,
                "activation": activation,
            },
            [p.strip() for ids in path_ids for p in ids.split(",") if p.strip()],
            (warmup, repeats, time_budget),
            python,
            quiet,
        )
    analysis = analyse(run, load_peaks())
    if save and load_file is None:
        from te_doctor.bench.store import save as save_result

        try:
            saved = save_result(bench_json(run, analysis), run.machine_key)
        except OSError as exc:  # the result is still shown; only check cannot cite it
            click.echo(
                f"te-doctor: warning: not saved: {exc.strerror or exc}: {exc.filename}", err=True
            )
        else:
            if not quiet:
                click.echo(f"te-doctor: saved {saved} (te-doctor check cites it)", err=True)
    if plot is not None:
        from te_doctor.bench.plot import write_plot

        write_plot(
            analysis, f"te-doctor bench: {run.workload.name} on {run.machine.gpu or 'CPU'}", plot
        )
    render = {"text": bench_text, "json": bench_json, "markdown": bench_markdown}[output_format]
    write(render(run, analysis), output)
    if not any(r.timing is not None for r in analysis.results):
        raise click.exceptions.Exit(ExitCode.FINDINGS)


def _measure(
    model: str | None,
    sizes: dict[str, int | str | None],
    requested: list[str],
    steps: tuple[int | None, int | None, float],
    python: Target,
    quiet: bool,
) -> BenchRun:
    """Probe, choose the paths, and run them (progress on stderr)."""
    from te_doctor.bench.pipeline import plan_paths, run_bench
    from te_doctor.bench.record import BenchSettings
    from te_doctor.bench.workload import WorkloadError, build_workload
    from te_doctor.check.snapshot_source import take_snapshot
    from te_doctor.cli.live import live

    try:
        workload = build_workload(model, **sizes)
    except WorkloadError as exc:
        raise TeDoctorError(str(exc)) from None
    snapshot = take_snapshot(None, python)
    planned = plan_paths(snapshot, workload, requested)
    device = "cuda" if any(p.device == "cuda" and not p.skip_reason for p in planned) else "cpu"
    warmup, repeats, budget = steps
    default_warmup, default_repeats = DEFAULT_STEPS[device]
    settings = BenchSettings(warmup or default_warmup, repeats or default_repeats, budget)

    with live("bench: starting", quiet=quiet) as status:
        return run_bench(
            snapshot,
            snapshot.host.python_executable.value or sys.executable,
            workload,
            settings,
            planned,
            progress=lambda line: status.update(f"bench: {line}"),
        )
