"""Speed-ups, TFLOP/s, percent of peak and the verdict, from hand-made bench records."""

from __future__ import annotations

import dataclasses

import pytest

from te_doctor.bench.analysis import BenchAnalysis, analyse
from te_doctor.bench.peaks import load_peaks
from te_doctor.bench.record import BenchMachine, BenchRun, BenchSettings, ComponentRun, PathRun
from te_doctor.bench.workload import COMPONENTS, build_workload, step_flops

WORKLOAD = build_workload("llama-3-8b")


def path(
    path_id: str, seconds: float, *, device: str = "cuda", error: float | None = 0.01
) -> PathRun:
    components = tuple(
        ComponentRun(
            name,
            "ok",
            "",
            step_flops(WORKLOAD, name),
            (9.0,),
            (seconds * 0.9, seconds, seconds * 1.1),
            1024,
            "cuda-peak-allocated",
            error,
            "",
        )
        for name in COMPONENTS
    )
    name = "NVIDIA H100 80GB HBM3" if device == "cuda" else "cpu"
    return PathRun(path_id, device, "ran", "", name, "2.13.0", "2.8.0", 1.0, components)


def run_of(*paths: PathRun, gpu: str = "NVIDIA H100 80GB HBM3") -> BenchRun:
    machine = BenchMachine(
        "node", gpu, "9.0", 1, "580.1", "2.13.0", "12.8", "2.8.0", "9.10", "py", 8
    )
    return BenchRun(
        "te-doctor/bench/v1",
        "0",
        "2026-11-30T00:00:00+00:00",
        "k",
        machine,
        WORKLOAD,
        BenchSettings(5, 3, 30.0),
        paths,
    )


def analysed(*paths: PathRun) -> BenchAnalysis:
    return analyse(run_of(*paths), load_peaks())


def test_speedup_tflops_and_percent_of_peak() -> None:
    analysis = analysed(path("te-fp8-current", 0.010), path("te-bf16", 0.016))
    fp8 = next(r for r in analysis.results if r.path == "te-fp8-current" and r.component == "layer")
    assert fp8.baseline == "te-bf16" and fp8.speedup == pytest.approx(1.6)
    assert fp8.timing is not None and fp8.timing.median_s == pytest.approx(0.010)
    tflops = step_flops(WORKLOAD, "layer") / 0.010 / 1e12
    assert fp8.tflops == pytest.approx(tflops)
    peak = 1978.9  # H100 SXM dense FP8, rules/bench/peaks.toml
    assert fp8.percent_of_peak == pytest.approx(100 * tflops / peak, rel=1e-3)
    bf16 = next(r for r in analysis.results if r.path == "te-bf16" and r.component == "layer")
    assert bf16.speedup == pytest.approx(1.0) and bf16.precision == "bf16"


@pytest.mark.parametrize(
    ("fp8_seconds", "kind", "words"),
    [
        (0.010, "worth-it", "te-fp8-current is 1.60x faster than te-bf16 for these shapes (layer"),
        (0.0145, "marginal", "marginal"),
        (
            0.0157,
            "stay-on-bf16",
            "not worth it: stay on BF16 (worth it from 1.20x, not below 1.05x)",
        ),
        (0.020, "stay-on-bf16", "0.80x the speed of te-bf16"),
    ],
)
def test_the_verdict_follows_the_numbers(fp8_seconds: float, kind: str, words: str) -> None:
    verdict = analysed(path("te-fp8-current", fp8_seconds), path("te-bf16", 0.016)).verdict
    assert verdict.kind == kind and words in verdict.text
    assert verdict.component == "layer"


def test_the_best_fp8_path_is_the_one_judged() -> None:
    verdict = analysed(
        path("te-fp8-delayed", 0.012),
        path("te-fp8-current", 0.008),
        path("torch-fp8", 0.011),
        path("te-bf16", 0.016),
        path("torch-amp-bf16", 0.020),
    ).verdict
    assert verdict.path == "te-fp8-current" and verdict.speedup == pytest.approx(2.0)


def test_torch_paths_compare_with_torch_autocast() -> None:
    analysis = analysed(
        path("torch-fp8", 0.010), path("te-bf16", 0.016), path("torch-amp-bf16", 0.020)
    )
    torch_fp8 = next(r for r in analysis.results if r.path == "torch-fp8")
    assert torch_fp8.baseline == "torch-amp-bf16" and torch_fp8.speedup == pytest.approx(2.0)


def test_fast_but_wrong_is_not_worth_it() -> None:
    verdict = analysed(path("te-fp8-current", 0.010, error=0.4), path("te-bf16", 0.016)).verdict
    assert verdict.kind == "numerics"
    assert "its error against FP32 is 0.4 (tolerance 0.1): fix the numbers first" in verdict.text


def test_without_fp8_or_baseline_the_verdict_says_why() -> None:
    assert analysed(path("te-bf16", 0.016)).verdict.kind == "no-fp8"
    alone = analysed(path("te-fp8-current", 0.010)).verdict
    assert alone.kind == "no-fp8" and "no BF16 baseline measured" in alone.text


def test_unknown_gpus_and_cpus_get_no_percent_and_say_so() -> None:
    a10g = dataclasses.replace(path("te-bf16", 0.016), device_name="NVIDIA A10G")
    result = analyse(run_of(a10g, gpu="NVIDIA A10G"), load_peaks()).results[0]
    assert result.percent_of_peak is None and result.tflops is not None
    assert result.peak_note.startswith("NVIDIA A10G is not in")
    on_cpu = analysed(path("cpu", 1.0, device="cpu"), path("torch-amp-bf16", 0.5, device="cpu"))
    assert all(r.percent_of_peak is None for r in on_cpu.results)
    assert on_cpu.results[0].peak_note == "CPU: te-doctor has no peak figures for CPUs"


def test_a_cpu_only_verdict_is_labelled() -> None:
    verdict = analysed(
        path("torch-fp8", 2.0, device="cpu"), path("torch-amp-bf16", 0.5, device="cpu")
    ).verdict
    assert verdict.text.startswith("On the CPU (this says nothing about a GPU): torch-fp8 is 0.25x")


def with_samples(run: PathRun, samples: tuple[float, ...]) -> PathRun:
    """The path with every component's timed steps replaced."""
    components = tuple(dataclasses.replace(c, samples_s=samples) for c in run.components)
    return dataclasses.replace(run, components=components)


def test_a_row_whose_spread_is_over_the_threshold_gives_no_speedup() -> None:
    """The 3.9x-then-0.01x of issue 15: a noisy FP8 row is marked, not compared, not judged."""
    noisy = with_samples(path("te-fp8-current", 0.010), (0.002, 0.010, 0.040))
    analysis = analysed(noisy, path("te-bf16", 0.016))
    fp8 = next(r for r in analysis.results if r.path == "te-fp8-current")
    assert fp8.unstable.startswith("spread ±") and fp8.speedup is None
    assert fp8.baseline == "te-bf16"  # compared with, but no ratio from an unsteady row
    verdict = analysis.verdict
    assert verdict.kind == "unstable" and verdict.speedup is None
    assert "rerun with --repeats 20 --warmup 10" in verdict.text


def test_an_unstable_baseline_withholds_every_ratio_built_on_it() -> None:
    noisy_bf16 = with_samples(path("te-bf16", 0.016), (0.004, 0.016, 0.064))
    analysis = analysed(path("te-fp8-current", 0.010), noisy_bf16)
    fp8 = next(r for r in analysis.results if r.path == "te-fp8-current")
    assert not fp8.unstable and fp8.speedup is None
    assert analysis.verdict.kind == "unstable"


def test_too_few_samples_are_unstable_and_steady_rows_still_count() -> None:
    two = with_samples(path("torch-fp8", 0.011), (0.011, 0.011))
    analysis = analysed(two, path("te-fp8-current", 0.010), path("te-bf16", 0.016))
    torch_fp8 = next(r for r in analysis.results if r.path == "torch-fp8")
    assert torch_fp8.unstable == "only 2 timed step(s), fewer than 3"
    assert analysis.verdict.kind == "worth-it" and analysis.verdict.path == "te-fp8-current"


def test_the_table_marks_unstable_rows_and_says_how_to_measure_again() -> None:
    from te_doctor.render.bench_render import bench_text

    noisy = with_samples(path("te-fp8-current", 0.010), (0.002, 0.010, 0.040))
    run = run_of(noisy, path("te-bf16", 0.016))
    text = bench_text(run, analyse(run, load_peaks()))
    row = next(line for line in text.splitlines() if line.startswith("te-fp8-current"))
    assert "unstable" in row and "not compared" in row
    assert "Unstable (no speed-up is computed from these" in text
    assert "rerun with --repeats 20 --warmup 10" in text
