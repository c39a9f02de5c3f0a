"""The smoke checks of Transformer Engine's paths: te.Linear (and LayerNormLinear) per recipe."""

from __future__ import annotations

import contextlib
from typing import Any

from _te_doctor_smoke_measure import (
    FAULT_FACTOR,
    SIZE,
    Measured,
    Skip,
    backward_with,
    generator,
    measure,
    need_cuda,
    randn,
)
from _te_doctor_smoke_record import State
from _te_doctor_smoke_stages import import_or_none

TOL_TE_FP8 = 0.1
TOL_TE_NVFP4 = 0.25
#: path id -> (recipe class in transformer_engine.common.recipe, support key, tolerance).
TE_RECIPES = (
    ("te-fp8-delayed", "DelayedScaling", "fp8", TOL_TE_FP8),
    ("te-fp8-current", "Float8CurrentScaling", "fp8", TOL_TE_FP8),
    ("te-fp8-block", "Float8BlockScaling", "fp8-block", TOL_TE_FP8),
    ("te-mxfp8", "MXFP8BlockScaling", "mxfp8", TOL_TE_FP8),
    ("te-nvfp4", "NVFP4BlockScaling", "nvfp4", TOL_TE_NVFP4),
)


def _need_te(state: State) -> Any:
    if state.te is None:
        raise Skip(state.no_te or "Transformer Engine is not importable")
    need_cuda(state)
    return state.te


def _te_linear_pass(
    state: State, dtype: Any, recipe: Any, passes: int
) -> tuple[Any, Any, Any, Any, Any]:
    """te.Linear forward and backward (under the recipe when given); the last pass's
    (output, input grad, input, weight, output grad), all on cuda:0."""
    torch, te = state.torch, state.te
    gen = generator(torch)
    layer = te.Linear(SIZE, SIZE, bias=False, params_dtype=dtype)
    with torch.no_grad():
        layer.weight.copy_(randn(torch, gen, SIZE, SIZE).to(dtype))
    x = randn(torch, gen, SIZE, SIZE).to(device=state.cuda_device, dtype=dtype)
    grad = randn(torch, gen, SIZE, SIZE).to(device=state.cuda_device, dtype=dtype)
    for _ in range(passes):
        inp = x.detach().clone().requires_grad_()
        with te_autocast(te, recipe) if recipe is not None else contextlib.nullcontext():
            out = layer(inp)
        backward_with(out, grad)
    return out, inp.grad, x, layer.weight.detach(), grad


def te_autocast(te: Any, recipe: Any) -> Any:
    """te.autocast(recipe=...) in TE 2.9+, else te.fp8_autocast(fp8_recipe=...)."""
    autocast = getattr(te, "autocast", None)
    if callable(autocast):
        try:
            return autocast(enabled=True, recipe=recipe)
        except TypeError:
            pass
    return te.fp8_autocast(enabled=True, fp8_recipe=recipe)


def _te_measure(
    state: State, run: tuple[Any, Any, Any, Any, Any], note: str, *, scale: float = 1.0
) -> Measured:
    """Forward output and input grad against F.linear on the same weights, in float64."""
    torch = state.torch
    out, x_grad, x, weight, grad = run
    x64, w64 = x.to(torch.float64), weight.to(torch.float64)
    forward = out.float() * scale
    return measure(
        torch,
        [
            ("forward", forward, torch.nn.functional.linear(x64, w64)),
            ("input grad", x_grad, grad.to(torch.float64) @ w64),
        ],
        note,
    )


def check_te_plain(state: State, dtype_name: str) -> Measured:
    """te.Linear and te.LayerNormLinear in bf16 or fp16, no FP8.

    LayerNormLinear runs TE's own LayerNorm kernel, which TE 2.18+ compiles at run time with
    NVRTC: with NVTE_DISABLE_NVRTC=1 and no legacy static kernels it raises, while te.Linear
    alone still works (rule-audit FG6).
    """
    _need_te(state)
    if dtype_name == "bfloat16":
        available, reason = state.support.get("bf16", (True, ""))
        if not available:
            raise Skip(reason or "TE says BF16 is not available")
    torch = state.torch
    dtype = getattr(torch, dtype_name)
    out, x_grad, x, weight, grad = _te_linear_pass(state, dtype, None, 1)
    x64, w64 = x.to(torch.float64), weight.to(torch.float64)
    return measure(
        torch,
        [
            ("forward", out.float(), torch.nn.functional.linear(x64, w64)),
            ("input grad", x_grad, grad.to(torch.float64) @ w64),
            _te_layernorm_linear(state, dtype),
        ],
        f"te.Linear and te.LayerNormLinear {dtype_name}",
    )


def _te_layernorm_linear(state: State, dtype: Any) -> tuple[str, Any, Any]:
    """te.LayerNormLinear's forward against layer_norm then linear in float64."""
    torch, te = state.torch, state.te
    gen = generator(torch)
    layer = te.LayerNormLinear(SIZE, SIZE, eps=1e-5, bias=False, params_dtype=dtype)
    with torch.no_grad():
        layer.weight.copy_(randn(torch, gen, SIZE, SIZE).to(dtype))
    x = randn(torch, gen, SIZE, SIZE).to(device=state.cuda_device, dtype=dtype)
    out = layer(x)
    normed = torch.nn.functional.layer_norm(x.to(torch.float64), (SIZE,), eps=1e-5)
    reference = torch.nn.functional.linear(normed, layer.weight.detach().to(torch.float64))
    return "layernorm forward", out.float(), reference


def check_te_recipe(state: State, recipe_class: str, support_key: str) -> Measured:
    """te.Linear in bf16 under one FP8/FP4 recipe, forward and backward.

    Two passes: delayed scaling takes its scales from the previous pass's amax, so the
    second pass is the one a training step sees.
    """
    _need_te(state)
    recipes = import_or_none("transformer_engine.common.recipe")
    cls = getattr(recipes, recipe_class, None)
    if cls is None:
        version = state.te_version or "(version unknown)"
        raise Skip(f"Transformer Engine {version} has no {recipe_class} recipe")
    available, reason = state.support.get(support_key, (True, ""))
    if not available:
        raise Skip(reason or f"TE says {support_key} is not available")
    run = _te_linear_pass(state, state.torch.bfloat16, cls(), 2)
    note = f"recipe {recipe_class}, bf16 params"
    if state.fault:
        note += f"; fault injected: output x{FAULT_FACTOR}"
    return _te_measure(state, run, note, scale=FAULT_FACTOR if state.fault else 1.0)
