"""`te-doctor bench` end to end on this machine's CPU, its JSON read back, and `check` citing it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from te_doctor.bench.analysis import analyse
from te_doctor.bench.peaks import load_peaks
from te_doctor.bench.plot import PlotError, check_plot_target
from te_doctor.bench.record import load_run, run_to_data
from te_doctor.bench.workload import build_workload, step_flops

#: Every test here runs the real bench child, which needs torch.
pytestmark = pytest.mark.torch

SHAPE = [
    "--hidden-size",
    "64",
    "--ffn-hidden-size",
    "128",
    "--num-heads",
    "4",
    "--num-kv-heads",
    "2",
    "--seq-len",
    "32",
    "--batch-size",
    "2",
]
FAST = ["--warmup", "1", "--repeats", "3", "--time-budget", "20"]


def te_doctor(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture(scope="module")
def measured(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """One real CPU bench: (its JSON, the cache it was saved in, the process)."""
    root = tmp_path_factory.mktemp("bench")
    out = root / "bench.json"
    done = te_doctor(
        "bench", *SHAPE, *FAST, "--format", "json", "-o", str(out), cache=root / "cache"
    )
    return out, root / "cache", done


def test_the_cpu_paths_are_measured_and_labelled(
    measured: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    out, _, done = measured
    assert done.returncode == 0, done.stderr
    run = load_run(out)
    assert [(p.id, p.device, p.status) for p in run.paths] == [
        ("torch-fp8", "cpu", "ran"),
        ("cpu-bf16", "cpu", "ran"),
        ("cpu", "cpu", "ran"),
    ]
    for path in run.paths:
        for component in path.components:
            assert component.status == "ok", (path.id, component.reason)
            # every timed step is kept; the warm-up ran at least the one asked for
            assert len(component.samples_s) == 3 and len(component.warmup_s) >= 1
    assert "bench: " not in done.stderr  # no live status on a pipe
    assert "te-doctor: saved " in done.stderr


def test_the_json_holds_the_analytic_flop_counts(
    measured: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    run = load_run(measured[0])
    workload = build_workload(
        None,
        hidden_size=64,
        ffn_hidden_size=128,
        num_heads=4,
        num_kv_heads=2,
        seq_len=32,
        batch_size=2,
    )
    assert run.workload == workload
    # 64 tokens; QKV 64 -> 64 + 2*2*16 = 128, out 64 -> 64, FC1 64 -> 128, FC2 128 -> 64.
    gemms = 3 * 2 * 64 * (64 * 128 + 64 * 64 + 64 * 128 + 128 * 64)
    layer = gemms + 3 * 4 * 2 * 32 * 32 * 64
    expected = {"gemms": gemms, "mlp": 3 * 2 * 64 * (64 * 128 + 128 * 64), "layer": layer}
    for path in run.paths:
        assert {c.name: c.flops for c in path.components} == expected
    assert expected == {name: step_flops(workload, name) for name in expected}


def test_the_json_loads_back_to_the_same_analysis(
    measured: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    out = measured[0]
    data = json.loads(out.read_text())
    run = load_run(out)
    assert run_to_data(run, analyse(run, load_peaks())) == data
    assert data["analysis"]["verdict"]["text"].startswith(
        "On the CPU (this says nothing about a GPU)"
    )


def test_load_renders_the_table_and_the_verdict(
    measured: tuple[Path, Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    shown = te_doctor("bench", "--load", str(measured[0]), cache=tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert (
        lines[0]
        == "te-doctor bench: custom: hidden 64, FFN 128, 4 heads (2 KV), seq 32 x batch 2, gelu"
    )
    assert any(re.match(r"torch-fp8 +cpu +gemms ", line) for line in lines)
    assert lines[-1].startswith("Verdict: On the CPU")
    markdown = te_doctor(
        "bench", "--load", str(measured[0]), "--format", "markdown", cache=tmp_path
    )
    assert "| Path | Device | Component |" in markdown.stdout


def test_check_cites_the_bench_result_for_this_machine(
    measured: tuple[Path, Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    cache = measured[1]
    cited = te_doctor("check", "--no-smoke", "--fail-on", "never", cache=cache)
    assert "Measured here (te-doctor bench, " in cited.stdout
    assert "details: te-doctor bench --load " in cited.stdout
    report = json.loads(te_doctor("check", "--no-smoke", "--format", "json", cache=cache).stdout)
    # the recommended path is cpu; its speed-up is cited only when its rows were steady
    cited_path = report["measured"]["path"]
    assert cited_path in ("cpu", "")
    assert report["measured"]["baseline"] == ("cpu-bf16" if cited_path else "")
    markdown = te_doctor("check", "--no-smoke", "--format", "markdown", cache=cache).stdout
    assert "- Measured here (" in markdown
    elsewhere = te_doctor("check", "--no-smoke", "--fail-on", "never", cache=tmp_path)
    assert "Measured here" not in elsewhere.stdout


def test_the_plot_is_drawn(
    measured: tuple[Path, Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib", reason="the test dependency group installs matplotlib")
    png, svg = tmp_path / "speedup.png", tmp_path / "speedup.svg"
    for file in (png, svg):
        done = te_doctor("bench", "--load", str(measured[0]), "--plot", str(file), cache=tmp_path)
        assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in svg.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--hidden-size", "0"],
            "te-doctor: error: --hidden-size must be a positive integer, not 0",
        ),
        (["--seq-len", "-16"], "te-doctor: error: --seq-len must be a positive integer, not -16"),
        (
            ["--hidden-size", "100", "--num-heads", "3"],
            "--hidden-size 100 is not divisible by --num-heads 3",
        ),
        (["--paths", "fp9"], "te-doctor: error: --paths: unknown path 'fp9'"),
        (["--load", "{missing}"], "cannot read bench result"),
        (
            ["--load", "{bad}"],
            "paths[0].components[0].samples_s[0]: expected float",
        ),
        (["--load", "{good}", "--plot", "{tmp}/x.txt"], "the file name must end in .png or .svg"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str],
    message: str,
    measured: tuple[Path, Path, subprocess.CompletedProcess[str]],
    tmp_path: Path,
) -> None:
    bad = tmp_path / "bad.json"
    data = json.loads(measured[0].read_text())
    data["paths"][0]["components"][0]["samples_s"][0] = "fast"
    bad.write_text(json.dumps(data))
    files = {
        "missing": str(tmp_path / "none.json"),
        "bad": str(bad),
        "good": str(measured[0]),
        "tmp": str(tmp_path),
    }
    done = te_doctor("bench", *[a.format(**files) for a in args], cache=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_misaligned_shapes_skip_fp8_with_the_reason(tmp_path: Path) -> None:
    shape = [
        "--hidden-size",
        "64",
        "--ffn-hidden-size",
        "128",
        "--num-heads",
        "4",
        "--seq-len",
        "30",
    ]
    done = te_doctor(
        "bench", *shape, *FAST, "--paths", "torch-fp8,cpu", "--no-save", cache=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (
        "  torch-fp8 on cpu: skipped: needs every GEMM dimension divisible by 16: "
        "tokens (seq x batch) 30 is not"
    ) in done.stdout
    assert re.search(r"^cpu +cpu +layer +[0-9.]+ (s|ms|us) ", done.stdout, re.MULTILINE)


def test_shapes_too_big_for_this_machine_measure_nothing_and_exit_1(tmp_path: Path) -> None:
    done = te_doctor(
        "bench",
        "--hidden-size",
        "1048576",
        "--num-heads",
        "1024",
        "--seq-len",
        "1048576",
        "--no-save",
        cache=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert "Nothing could be measured." in done.stdout
    assert "these shapes need about " in done.stdout and "RAM has" in done.stdout


def test_the_readme_example_is_the_recorded_result(tmp_path: Path) -> None:
    root = Path(__file__).parents[1]
    recorded = root / "benchmarks" / "results" / "cpu-gpt2-small.json"
    shown = te_doctor("bench", "--load", str(recorded), cache=tmp_path)
    assert shown.returncode == 0, shown.stderr
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "$ te-doctor bench\n" + shown.stdout in readme


def test_a_plot_that_cannot_be_drawn_fails_before_measuring(tmp_path: Path) -> None:
    started = time.monotonic()
    done = te_doctor("bench", "--plot", str(tmp_path / "speedup.pdf"), cache=tmp_path)
    assert done.returncode == 2 and time.monotonic() - started < 30
    assert "the file name must end in .png or .svg" in done.stderr
    assert "bench: [" not in done.stderr  # nothing was run


def test_a_missing_matplotlib_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    with pytest.raises(PlotError, match="matplotlib is not installed"):
        check_plot_target(tmp_path / "speedup.png")


def test_a_result_that_cannot_be_saved_is_still_shown(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = te_doctor("bench", *SHAPE, *FAST, "--paths", "cpu", cache=blocker)
    assert done.returncode == 0, done.stderr
    assert "te-doctor: warning: not saved: Not a directory: " in done.stderr
    assert "Traceback" not in done.stderr and done.stdout.startswith("te-doctor bench: custom")
