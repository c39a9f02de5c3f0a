"""The smoke child, ``te_doctor/smoke/child/``: run for real, and its parts with stand-ins.

The slow tests start the real child under the broken TE venv (``tests/real_venv.py``: torch
2.13.0+cpu, TE 2.20.2 without cuDNN) through ``run_smoke``, exactly as te-doctor does, and read
the result with the real parser. The others run the child's pieces in this process: the GPU
and TE code paths, with ``cuda_device`` pointed at the CPU and a stand-in for
``transformer_engine.pytorch``, so their plumbing (autocast call, references, tolerances,
fault injection, skip reasons) is exercised without a GPU.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import stat
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _te_doctor_smoke_gemm import Check, gemm_checks, run_check
from _te_doctor_smoke_libraries import library_origin, loaded_libraries
from _te_doctor_smoke_measure import Measured, measure
from _te_doctor_smoke_record import Result, StageLog, State
from _te_doctor_smoke_stages import call_support, decode_cudnn_version, stage_te_support
from _te_doctor_smoke_te_checks import TOL_TE_FP8
from te_doctor_smoke_child import FAULT_ENV, WRONG_SCALE

from te_doctor.smoke.runner import CHILD, run_smoke
from te_doctor.snapshot.smoke_model import SmokeCheck, SmokeFacts
from te_doctor.toml_compat import tomllib
from tests.conftest import need_torch
from tests.smoke_results import GPU_CHECKS

REPO = Path(__file__).resolve().parents[1]
FAULT_INJECTED = {FAULT_ENV: WRONG_SCALE}


def checks_by_name(facts: SmokeFacts) -> dict[str, SmokeCheck]:
    """The smoke checks, by path id."""
    return {check.name: check for check in facts.checks}


def rel_error(check: SmokeCheck) -> float:
    """The check's relative error, which must have been measured."""
    value = check.rel_error.value
    assert value is not None, check
    return value


# --------------------------------------------------------------------------- the real child


@pytest.mark.slow
def test_broken_te_venv(venv_python: Path) -> None:
    facts = run_smoke(str(venv_python), timeout_s=60)
    assert facts.outcome.value == "failed"
    assert facts.stage.value == "import-te"
    assert "cudnn shared object not found" in (facts.error_text.value or "")
    assert facts.torch_cuda_available.value is False
    checks = checks_by_name(facts)
    fp8 = checks["torch-fp8"]
    assert (fp8.device, fp8.status) == ("cpu", "ok"), fp8
    assert rel_error(fp8) < fp8.tolerance
    assert rel_error(fp8) < 0.01  # only bf16 output rounding against the dequantized inputs
    assert checks["cpu"].status == "ok", checks["cpu"]
    for name in GPU_CHECKS:
        assert checks[name].status == "skipped", checks[name]
    assert "cudnn shared object not found" in checks["te-fp8-delayed"].detail
    assert facts.te_support == ()


@pytest.mark.slow
def test_wrong_scale_is_caught(venv_python: Path) -> None:
    facts = run_smoke(str(venv_python), timeout_s=60, env={**os.environ, **FAULT_INJECTED})
    fp8 = checks_by_name(facts)["torch-fp8"]
    assert fp8.status == "numerics", fp8
    assert rel_error(fp8) > fp8.tolerance
    assert checks_by_name(facts)["cpu"].status == "ok"


@pytest.mark.torch
def test_child_under_this_python() -> None:
    """The result this interpreter must give, from what the test itself sees in it: without a
    CUDA device every GPU check is skipped and torch FP8 runs on the CPU; with one, the torch
    GPU checks run (their verdict is the machine's own)."""
    torch = need_torch()
    facts = run_smoke(sys.executable, timeout_s=60)
    checks = checks_by_name(facts)
    names = ["cpu", "cpu-bf16", *GPU_CHECKS[:3], "torch-fp8", *GPU_CHECKS[3:]]
    assert [c.name for c in facts.checks] == names
    assert checks["cpu"].status == "ok", checks["cpu"]
    assert checks["cpu-bf16"].status == "ok", checks["cpu-bf16"]
    if torch.cuda.is_available():
        for name in GPU_CHECKS[:3]:
            assert checks[name].status != "skipped", checks[name]
        return
    assert facts.outcome.value == "ok", facts.error_text
    fp8 = checks["torch-fp8"]
    assert (fp8.device, fp8.status) == ("cpu", "ok"), fp8
    assert rel_error(fp8) < fp8.tolerance
    has_te = importlib.util.find_spec("transformer_engine") is not None
    for name in GPU_CHECKS:
        assert checks[name].status == "skipped", checks[name]
        if name.startswith("te-") and not has_te:
            assert checks[name].detail == "Transformer Engine is not installed"


def test_child_without_torch(tmp_path: Path) -> None:
    """``python -S`` sees no site-packages, so ``import torch`` fails like a venv without it."""
    python = tmp_path / "python-no-site"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n', encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    facts = run_smoke(str(python), timeout_s=30)
    assert facts.outcome.value == "failed"
    assert facts.stage.value == "import-torch"
    assert "ModuleNotFoundError: No module named 'torch'" in (facts.error_text.value or "")
    assert facts.checks == ()


def test_child_is_standalone() -> None:
    """The child runs in interpreters without te-doctor; torch and TE are imported lazily."""
    tree = ast.parse(CHILD.read_text(encoding="utf-8"))

    def imports(nodes: Iterator[ast.AST]) -> set[str]:
        names = {a.name for n in nodes if isinstance(n, ast.Import) for a in n.names}
        return names | {n.module or "" for n in nodes if isinstance(n, ast.ImportFrom)}

    everywhere = {name.split(".")[0] for name in imports(ast.walk(tree))}
    at_top = {name.split(".")[0] for name in imports(iter(tree.body))}
    assert "te_doctor" not in everywhere
    assert not at_top & {"torch", "transformer_engine"}


def test_check_names_are_path_ids() -> None:
    paths = tomllib.loads((REPO / "rules" / "paths.toml").read_text(encoding="utf-8"))
    ids = {str(entry["id"]) for entry in paths["path"]}
    names = [check.name for check in gemm_checks(State())]
    assert sorted(names) == sorted(ids)


# --------------------------------------------------------------------------- parts


def test_decode_cudnn_version() -> None:
    assert decode_cudnn_version(8902) == "8.9.2"
    assert decode_cudnn_version(90100) == "9.1.0"
    assert decode_cudnn_version(91200) == "9.12.0"


def test_loaded_libraries(tmp_path: Path) -> None:
    conda = tmp_path / "env"
    (conda / "conda-meta").mkdir(parents=True)
    site = "/venv/lib/python3.11/site-packages/nvidia"
    lines = [
        f"7f00-7f01 r-xp 00000000 08:01 1 {site}/cudnn/lib/libcudnn.so.9",
        f"7f01-7f02 r--p 00001000 08:01 1 {site}/cudnn/lib/libcudnn.so.9",
        f"7f02-7f03 r-xp 00000000 08:01 2 {site}/cudnn/lib/libcudnn_ops.so.9",
        "7f03-7f04 r-xp 00000000 08:01 3 /usr/lib/x86_64-linux-gnu/libcublasLt.so.12.8.4.1",
        f"7f04-7f05 r-xp 00000000 08:01 4 {conda}/lib/libnccl.so.2 (deleted)",
        "7f05-7f06 r-xp 00000000 08:01 5 /opt/te/libtransformer_engine.so",
        "7f06-7f07 r-xp 00000000 08:01 6 /usr/lib/x86_64-linux-gnu/libc.so.6",
        "7f07-7f08 rw-p 00000000 00:00 0 [heap]",
    ]
    maps = tmp_path / "maps"
    maps.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = {(lib["name"], lib["version"], lib["origin"]) for lib in loaded_libraries(str(maps))}
    assert found == {
        ("cudnn", "9", "pip"),
        ("cublasLt", "12.8.4.1", "system"),
        ("nccl", "2", "conda"),
        ("transformer_engine", None, "system"),
    }
    assert len(loaded_libraries(str(maps))) == 5  # libcudnn and libcudnn_ops: two paths
    assert library_origin("/opt/miniconda3/lib/libcudart.so.12") == "conda"
    assert loaded_libraries(str(tmp_path / "missing")) == []


def test_call_support() -> None:
    assert call_support(lambda return_reason: (False, "cc 8.0"), public_api=True) == (
        False,
        "cc 8.0",
    )
    assert call_support(lambda: (True, ""), public_api=False) == (True, "")
    assert call_support(lambda: True, public_api=False) == (True, "")

    def broken() -> tuple[bool, str]:
        raise RuntimeError("Torch not compiled with CUDA enabled")

    assert call_support(broken, public_api=False) == (
        False,
        "RuntimeError: Torch not compiled with CUDA enabled",
    )


def test_support_stage_prefers_the_public_api() -> None:
    te = types.SimpleNamespace(
        is_fp8_available=lambda return_reason=False: (False, "compute capability 8.9 needed"),
        is_bf16_available=lambda return_reason=False: (True, ""),
    )
    result = Result(os.devnull)
    state = State(te=te)
    stage_te_support(result, state, StageLog("te-support"))
    support = {item["recipe"]: item for item in result.data["te_support"]}
    assert support["fp8"]["available"] is False
    assert support["fp8"]["source"] == "te.is_fp8_available"
    assert state.support["fp8"] == (False, "compute capability 8.9 needed")
    assert state.support["bf16"] == (True, "")
    assert "nvfp4" not in support  # neither TE nor its modules offer it here


# --------------------------------------------------------------------------- GPU paths, on the CPU


class FakeTE:
    """Stands in for ``transformer_engine.pytorch``: te.Linear is torch.nn.Linear."""

    def __init__(self, torch: Any, *, modern: bool = True) -> None:
        self.torch = torch
        self.recipes: list[tuple[str, Any]] = []
        if modern:
            self.autocast = self._autocast

    def Linear(self, in_features: int, out_features: int, **kwargs: Any) -> Any:  # noqa: N802
        dtype = kwargs.get("params_dtype")
        return self.torch.nn.Linear(in_features, out_features, bias=kwargs["bias"], dtype=dtype)

    def LayerNormLinear(self, in_features: int, out_features: int, **kwargs: Any) -> Any:  # noqa: N802
        nn = self.torch.nn
        dtype = kwargs.get("params_dtype")
        norm = nn.LayerNorm(in_features, eps=kwargs["eps"], dtype=dtype)
        linear = nn.Linear(in_features, out_features, bias=kwargs["bias"], dtype=dtype)
        layer = nn.Sequential(norm, linear)
        layer.weight = linear.weight  # TE's LayerNormLinear.weight is the GEMM weight
        return layer

    @contextlib.contextmanager
    def _autocast(self, enabled: bool = True, recipe: Any = None) -> Iterator[None]:
        self.recipes.append(("autocast", recipe))
        yield

    @contextlib.contextmanager
    def fp8_autocast(self, enabled: bool = True, fp8_recipe: Any = None) -> Iterator[None]:
        self.recipes.append(("fp8_autocast", fp8_recipe))
        yield


class DelayedScaling:
    """A recipe class for the stand-in ``transformer_engine.common.recipe``."""


@pytest.fixture
def torch() -> Any:
    return need_torch()


@pytest.fixture
def recipes(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("transformer_engine.common.recipe")
    module.DelayedScaling = DelayedScaling  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "transformer_engine.common.recipe", module)
    return module


def cpu_state(torch: Any, te: Any = None, **changes: Any) -> State:
    """A State for a working 'GPU' of compute capability 9.0 that is really the CPU."""
    state = State(
        torch=torch, te=te, cuda_ok=True, capability=(9, 0), no_cuda="", no_te="",
        te_version="2.20.2", cuda_device="cpu",
    )  # fmt: skip
    for key, value in changes.items():
        setattr(state, key, value)
    return state


def run(state: State, name: str) -> dict[str, Any]:
    """One check of ``gemm_checks``, run the way the gemm stage runs it."""
    check = next(check for check in gemm_checks(state) if check.name == name)
    return run_check(check, state)


@pytest.mark.parametrize("modern", [True, False])
def test_te_recipe_check(torch: Any, recipes: types.ModuleType, modern: bool) -> None:
    te = FakeTE(torch, modern=modern)
    entry = run(cpu_state(torch, te), "te-fp8-delayed")
    assert entry["status"] == "ok", entry
    assert entry["rel_error"] < 0.01  # nn.Linear in bf16: rounding only
    assert entry["tolerance"] == TOL_TE_FP8
    api = "autocast" if modern else "fp8_autocast"
    assert [(used, type(recipe)) for used, recipe in te.recipes] == [(api, DelayedScaling)] * 2


def test_te_recipe_fault_is_numerics(torch: Any, recipes: types.ModuleType) -> None:
    entry = run(cpu_state(torch, FakeTE(torch), fault=True), "te-fp8-delayed")
    assert entry["status"] == "numerics", entry
    assert entry["rel_error"] == pytest.approx(0.5, abs=0.02)


def test_te_recipe_skips(torch: Any, recipes: types.ModuleType) -> None:
    reason = "Device compute capability 8.9 or higher required for FP8 execution."
    state = cpu_state(torch, FakeTE(torch), support={"fp8": (False, reason)})
    assert (run(state, "te-fp8-current")["status"], run(state, "te-fp8-current")["detail"]) == (
        "skipped",
        "Transformer Engine 2.20.2 has no Float8CurrentScaling recipe",
    )
    entry = run(state, "te-fp8-delayed")
    assert (entry["status"], entry["detail"]) == ("skipped", reason)
    no_cuda = cpu_state(torch, FakeTE(torch), cuda_ok=False, no_cuda="no CUDA device")
    assert run(no_cuda, "te-fp8-delayed")["detail"] == "no CUDA device"


@pytest.mark.parametrize("name", ["te-bf16", "te-fp16", "torch-amp-bf16", "torch-fp32"])
def test_plain_gpu_checks_on_the_cpu(torch: Any, name: str) -> None:
    entry = run(cpu_state(torch, FakeTE(torch)), name)
    assert entry["status"] == "ok", entry
    assert entry["rel_error"] <= entry["tolerance"]


def test_cpu_bf16_runs_autocast_on_the_cpu(torch: Any) -> None:
    """The CPU BF16 path's check: bf16 outputs, within the BF16 tolerance, yet not exact."""
    entry = run(cpu_state(torch), "cpu-bf16")
    assert entry["device"] == "cpu" and entry["status"] == "ok", entry
    assert entry["detail"].endswith("(output torch.bfloat16)")
    assert 1e-4 < entry["rel_error"] <= entry["tolerance"] == 0.02  # really BF16, not FP32


def test_amp_bf16_needs_ampere(torch: Any) -> None:
    entry = run(cpu_state(torch, capability=(7, 5)), "torch-amp-bf16")
    assert entry["status"] == "skipped"
    assert "8.0 or higher" in entry["detail"]


def test_torch_fp8_device_choice(torch: Any) -> None:
    by_name = {check.name: check for check in gemm_checks(cpu_state(torch))}
    assert by_name["torch-fp8"].device == "cpu"  # cuda_device is the CPU here
    ada = cpu_state(torch, capability=(8, 6), cuda_device="cuda:0")
    assert {c.name: c.device for c in gemm_checks(ada)}["torch-fp8"] == "cpu"


def test_non_finite_output_is_numerics(torch: Any) -> None:
    reference = torch.ones(4, 4)
    measured = measure(torch, [("out", reference * float("nan"), reference)])
    assert (measured.rel_error, measured.max_abs_error) == (None, None)
    check = Check("cpu", 1e-5, "cpu", lambda: measured)
    assert run_check(check, cpu_state(torch))["status"] == "numerics"


def test_failed_check_keeps_the_exception(torch: Any) -> None:
    def body() -> Measured:
        raise AttributeError("module 'torch' has no attribute 'float8_e4m3fn'")

    entry = run_check(Check("torch-fp8", 0.08, "cpu", body), cpu_state(torch))
    assert entry["status"] == "failed"
    assert entry["detail"] == "AttributeError: module 'torch' has no attribute 'float8_e4m3fn'"
