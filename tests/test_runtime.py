"""The runtime API: the README example runs, the cache skips the smoke test, and every path
id has a way to be enabled (checked without torch or TE)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _te_doctor_smoke_te_checks import TE_RECIPES

import te_doctor
import te_doctor.smoke.runner as runner
from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.check.snapshot_source import take_snapshot
from te_doctor.engine.paths import load_paths
from te_doctor.runtime.decision_cache import cache_key, key_facts
from te_doctor.runtime.enable import ENABLERS, SelectedPath, te_autocast_api
from te_doctor.runtime.selection import (
    NoViablePathError,
    UnknownPathError,
    choose,
    explained_verdicts,
    select_path,
)
from te_doctor.snapshot.file import load
from te_doctor.snapshot.model import SmokeFacts
from tests.conftest import need_torch

ROOT = Path(__file__).parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
SECTION = "## Runtime API: the fallback path, done once"
#: The recipe classes of transformer_engine.common.recipe (TE facts §3.3).
TE_RECIPE_CLASSES = {
    "DelayedScaling",
    "Float8CurrentScaling",
    "MXFP8BlockScaling",
    "Float8BlockScaling",
    "NVFP4BlockScaling",
}


def has_gpu() -> bool:
    return any(g.visible for g in take_snapshot(None, None, smoke=False).gpus)


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None, "the runtime API section has no python block"
    return found.group(1)


class CountingSmoke:
    """Stands in for ``run_smoke``: counts the runs, optionally with another child."""

    def __init__(self, real: Callable[..., SmokeFacts], child: Path | None = None) -> None:
        self.real, self.child, self.calls = real, child, 0

    def __call__(self, python: str, **kwargs: Any) -> SmokeFacts:
        self.calls += 1
        if self.child is not None:
            kwargs["child"] = self.child
        return self.real(python, **kwargs)


@pytest.fixture
def smoke_runs(monkeypatch: pytest.MonkeyPatch) -> CountingSmoke:
    counter = CountingSmoke(runner.run_smoke)
    monkeypatch.setattr(runner, "run_smoke", counter)
    return counter


# --------------------------------------------------------------------------- the README example


def test_readme_example_is_ten_lines_and_runs(tmp_path: Path) -> None:
    code = readme_example()
    assert len([line for line in code.splitlines() if line.strip()]) == 10
    need_torch()  # the example trains a layer
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    path_id, verification, *_ = result.stdout.split()
    assert verification == "verified", result.stdout
    if not has_gpu():
        assert path_id == "cpu-bf16"  # BF16 autocast on the CPU, verified by its smoke check
    assert len(list((tmp_path / "te-doctor" / "paths").glob("*.json"))) == 1


@pytest.mark.torch  # the CPU path is viable only with torch installed
def test_select_path_imports_no_torch(tmp_path: Path) -> None:
    code = (
        "import sys, te_doctor\n"
        f"path = te_doctor.select_path(smoke=False, cache_dir={str(tmp_path)!r})\n"
        "heavy = {m.split('.')[0] for m in sys.modules} & {'torch', 'numpy', 'torchao'}\n"
        "assert not heavy, heavy\n"
        "print(path.id, path.verification)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[1] == "predicted"
    assert te_doctor.select_path is select_path and te_doctor.SelectedPath is SelectedPath


# --------------------------------------------------------------------------- the cache


@pytest.mark.torch  # the CPU path is viable only with torch installed
def test_second_call_skips_the_smoke_test(tmp_path: Path, smoke_runs: CountingSmoke) -> None:
    first = select_path(cache_dir=tmp_path)
    assert smoke_runs.calls == 1 and not first.from_cache
    (cached,) = tmp_path.glob("*.json")
    second = select_path(cache_dir=tmp_path)
    assert smoke_runs.calls == 1, "a cache hit must not run the smoke test"
    assert second.from_cache and second == first
    if not has_gpu():
        assert (first.id, first.verification) == ("cpu-bf16", "verified")
        assert first.evidence.startswith("smoke GEMM cpu-bf16 on cpu")
        assert "te-fp8-current: No NVIDIA GPU is visible to CUDA here" in "\n".join(
            first.reasons_skipped
        )

    cached.write_text('{"format": 1, "key": "trunc', encoding="utf-8")
    third = select_path(cache_dir=tmp_path)
    assert smoke_runs.calls == 2 and not third.from_cache and third == first
    assert json.loads(cached.read_text(encoding="utf-8"))["format"] == 1  # rewritten

    fourth = select_path(cache_dir=tmp_path, cache=False)
    assert smoke_runs.calls == 3 and not fourth.from_cache and fourth == first


@pytest.mark.torch  # the CPU path is viable only with torch installed
def test_a_crashed_smoke_test_gives_a_predicted_uncached_choice(
    tmp_path: Path, smoke_runs: CountingSmoke
) -> None:
    smoke_runs.child = tmp_path / "no-such-child.py"
    cache = tmp_path / "cache"
    chosen = select_path(cache_dir=cache)
    assert chosen.verification == "predicted"
    assert "the smoke test ended crashed" in chosen.evidence
    if not has_gpu():
        assert chosen.id == "cpu"
    assert list(cache.glob("*.json")) == []
    select_path(cache_dir=cache)
    assert smoke_runs.calls == 2


def test_cache_key_changes_with_the_deciding_facts() -> None:
    h100 = load(FIXTURES / "h100-cuda12-te-ok.json")
    keys = {
        cache_key(key_facts(load(FIXTURES / name), smoke=True))
        for name in ("h100-cuda12-te-ok.json", "a100.json", "b200.json", "no-gpu-laptop.json")
    }
    assert len(keys) == 4
    assert cache_key(key_facts(h100, smoke=True)) != cache_key(key_facts(h100, smoke=False))


# --------------------------------------------------------------------------- require


def test_require_fp8_without_a_gpu_says_why(tmp_path: Path) -> None:
    if has_gpu():
        pytest.skip("this machine has a GPU")
    with pytest.raises(NoViablePathError) as raised:
        select_path(require="fp8", smoke=False, cache_dir=tmp_path)
    message = str(raised.value)
    assert message.startswith("require='fp8': no viable execution path here: ")
    assert (
        "te-mxfp8, te-fp8-block, te-fp8-current, te-fp8-delayed, torch-fp8: No NVIDIA GPU is"
        " visible to CUDA here: TE and every GPU path need one (TED101)" in message
    )
    assert "No NVIDIA GPU is visible to CUDA" in message


def test_unknown_require_fails_before_probing() -> None:
    with pytest.raises(UnknownPathError, match="require='fp9': unknown execution path"):
        select_path(require="fp9")


# --------------------------------------------------------------------------- a recorded GPU machine


def h100_choice(require: str | None = None, *, torchao: bool = False) -> SelectedPath:
    snapshot = load(FIXTURES / "h100-cuda12-te-ok.json")
    verdicts = explained_verdicts(run_check(snapshot, GateOptions()), snapshot.smoke)
    return choose(
        verdicts, load_paths(), require=require, is_importable=lambda m: torchao or m != "torchao"
    )


def test_h100_picks_te_fp8_current_scaling() -> None:
    chosen = h100_choice()
    assert (chosen.id, chosen.device, chosen.verification) == (
        "te-fp8-current",
        "cuda",
        "predicted",
    )
    assert chosen.evidence == "predicted from the probed facts (the smoke test was not run)"
    # te-nvfp4 is opt-in: never a candidate unless asked for, so it is not "skipped" either.
    assert [r.split(":")[0] for r in chosen.reasons_skipped] == ["te-mxfp8", "te-fp8-block"]
    assert "needs PyTorch built for CUDA 12.9 or newer" in chosen.reasons_skipped[1]
    how = chosen.enabler
    assert (how.te_recipe, how.amp_dtype, how.linear, how.params_dtype) == (
        "Float8CurrentScaling",
        "bfloat16",
        "te",
        "bfloat16",
    )
    assert not how.grad_scaling and not how.float8_training


def test_torch_fp8_only_with_torchao() -> None:
    with pytest.raises(
        NoViablePathError, match="torch-fp8: needs torchao, which is not importable"
    ):
        h100_choice("torch-fp8")
    assert h100_choice("torch-fp8", torchao=True).enabler.float8_training
    assert h100_choice("bf16").id == "te-bf16"
    fp16 = h100_choice("fp16")
    assert fp16.id == "te-fp16" and fp16.enabler.grad_scaling
    assert fp16.enabler.params_dtype == "float32"  # GradScaler cannot unscale FP16 gradients


# --------------------------------------------------------------------------- the enabling table


def test_every_path_has_a_way_to_be_enabled() -> None:
    assert set(ENABLERS) == {p.id for p in load_paths()}
    for path in load_paths():
        how = ENABLERS[path.id]
        assert (how.linear == "te") == path.id.startswith("te-"), path.id
        assert how.grad_scaling == ("fp16" in path.families), path.id
        assert (how.amp_dtype is None) == (path.id in ("torch-fp32", "cpu")), path.id
        if how.te_recipe is not None:
            assert how.te_recipe in TE_RECIPE_CLASSES


def test_recipes_are_the_ones_the_smoke_child_verifies() -> None:
    verified = {name: recipe for name, recipe, *_ in TE_RECIPES}
    enabled = {p: how.te_recipe for p, how in ENABLERS.items() if how.te_recipe is not None}
    assert enabled == verified


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ({"autocast", "fp8_autocast", "Linear"}, ("autocast", "recipe")),
        ({"fp8_autocast", "Linear"}, ("fp8_autocast", "fp8_recipe")),
    ],
)
def test_te_autocast_api_per_te_version(names: set[str], expected: tuple[str, str]) -> None:
    assert te_autocast_api(names) == expected


def test_cpu_bf16_autocasts_on_the_cpu() -> None:
    torch = pytest.importorskip("torch")
    chosen = SelectedPath("cpu-bf16", "PyTorch autocast BF16 on the CPU", "verified", "", (), "cpu")
    a = torch.ones(16, 16)
    with chosen.autocast():
        assert (a @ a).dtype == torch.bfloat16
    assert (a @ a).dtype == torch.float32


@pytest.mark.parametrize("path_id", ["cpu", "torch-fp32"])
def test_plain_paths_need_no_torch_to_autocast(
    monkeypatch: pytest.MonkeyPatch, path_id: str
) -> None:
    """With torch and TE unimportable, a plain path's ``autocast()`` is a no-op that imports
    nothing, while a mixed-precision path's does reach for torch."""
    for module in ("torch", "transformer_engine", "transformer_engine.pytorch"):
        monkeypatch.setitem(sys.modules, module, None)
    chosen = SelectedPath(path_id, "plain", "verified", "", (), "cpu")
    with chosen.autocast():  # importing torch here would raise ImportError
        assert sys.modules.get("torch") is None
    amp = SelectedPath("torch-amp-bf16", "AMP", "verified", "", (), "cuda")
    with pytest.raises(ImportError), amp.autocast():
        pass
