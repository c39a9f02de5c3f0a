"""How one path runs in the bench child: dtypes, forward context, linear layers (FP8 too)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any

DETAIL_LIMIT = 2000
#: path id -> (module family, parameter dtype, torch autocast dtype, TE recipe class).
PATHS = {
    "cpu": ("torch", "float32", None, None),
    "cpu-bf16": ("torch", "float32", "bfloat16", None),
    "torch-fp32": ("torch", "float32", None, None),
    "torch-amp-bf16": ("torch", "float32", "bfloat16", None),
    "torch-amp-fp16": ("torch", "float32", "float16", None),
    "torch-fp8": ("torch-fp8", "float32", "bfloat16", None),
    "te-bf16": ("te", "bfloat16", None, None),
    "te-fp16": ("te", "float16", None, None),
    "te-fp8-delayed": ("te", "bfloat16", None, "DelayedScaling"),
    "te-fp8-current": ("te", "bfloat16", None, "Float8CurrentScaling"),
    "te-fp8-block": ("te", "bfloat16", None, "Float8BlockScaling"),
    "te-mxfp8": ("te", "bfloat16", None, "MXFP8BlockScaling"),
    "te-nvfp4": ("te", "bfloat16", None, "NVFP4BlockScaling"),
}


class Skip(Exception):
    """The component cannot run here; the message says why."""


class TooSlow(Exception):
    """The component would not fit in its time budget; the message says by how much."""


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return (f"{type(exc).__name__}: {text}" if text else type(exc).__name__)[:DETAIL_LIMIT]


class Path:
    """How one execution path runs: modules, dtypes, the context the forward runs in."""

    def __init__(self, path_id: str, device: str, torch: Any, te: Any) -> None:
        family, params, autocast, recipe = PATHS[path_id]
        self.id, self.family, self.torch, self.te = path_id, family, torch, te
        self.device = "cuda:0" if device == "cuda" else "cpu"
        self.params_dtype = getattr(torch, params)
        self.autocast_dtype = getattr(torch, autocast) if autocast else None
        self.recipe = self._recipe(recipe) if recipe else None
        self.reference = False  # True while the FP32 reference runs
        if path_id == "torch-fp32":  # the path as rules/paths.toml enables it: TF32 on
            torch.backends.cuda.matmul.allow_tf32 = True

    def _recipe(self, name: str) -> Any:
        recipes = importlib.import_module("transformer_engine.common.recipe")
        cls = getattr(recipes, name, None)
        if cls is None:
            raise Skip(f"this Transformer Engine has no {name} recipe")
        if name == "DelayedScaling":
            return cls(
                fp8_format=recipes.Format.HYBRID, amax_history_len=16, amax_compute_algo="max"
            )
        return cls()

    @property
    def input_dtype(self) -> Any:
        return self.torch.float32 if self.reference else self.params_dtype

    @contextlib.contextmanager
    def forward_context(self) -> Iterator[None]:
        """Autocast or the TE recipe; plain FP32 while the reference runs."""
        torch = self.torch
        if self.reference:
            yield
        elif self.recipe is not None:
            with te_autocast(self.te, self.recipe):
                yield
        elif self.autocast_dtype is not None:
            with torch.autocast(self.device.split(":")[0], dtype=self.autocast_dtype):
                yield
        else:
            yield

    def linear(self, in_features: int, out_features: int) -> Any:
        if self.family == "te":
            return self.te.Linear(
                in_features,
                out_features,
                bias=False,
                params_dtype=self.params_dtype,
                device=self.device,
            )
        if self.family == "torch-fp8":
            return Fp8Linear(self, in_features, out_features).to(self.device)
        return self.torch.nn.Linear(in_features, out_features, bias=False).to(self.device)


def te_autocast(te: Any, recipe: Any) -> Any:
    """te.autocast(recipe=...) in TE 2.9+, else te.fp8_autocast(fp8_recipe=...)."""
    if hasattr(te, "autocast"):
        try:
            return te.autocast(enabled=True, recipe=recipe)
        except TypeError:  # an older autocast without ``recipe``
            pass
    return te.fp8_autocast(enabled=True, fp8_recipe=recipe)


def quantize(torch: Any, tensor: Any, dtype: Any) -> tuple[Any, Any]:
    """Per-tensor dynamic scaling: (fp8 tensor, float32 dequantisation scale)."""
    fp8_max = float(torch.finfo(dtype).max)
    scale = (tensor.detach().abs().max().float() / fp8_max).clamp(min=1e-12)
    return (tensor / scale).clamp(-fp8_max, fp8_max).to(dtype), scale


def make_fp8_matmul(torch: Any) -> Any:
    """An autograd function: e4m3 forward, e5m2 gradients, bf16 outputs, via _scaled_mm."""
    e4m3, e5m2 = torch.float8_e4m3fn, torch.float8_e5m2

    def scaled_mm(a: Any, b: Any, scale_a: Any, scale_b: Any) -> Any:
        out = torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
        return out[0] if isinstance(out, tuple) else out  # torch < 2.5 returned (out, amax)

    class Fp8Matmul(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, weight: Any) -> Any:
            rows = x.reshape(-1, x.shape[-1])
            x8, sx = quantize(torch, rows, e4m3)
            w8, sw = quantize(torch, weight, e4m3)
            ctx.save_for_backward(x8, sx, w8, sw)
            ctx.shape, ctx.weight_dtype = x.shape, weight.dtype
            out = scaled_mm(x8, w8.t(), sx, sw)  # the second operand column-major
            return out.reshape(*x.shape[:-1], weight.shape[0])

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            x8, sx, w8, sw = ctx.saved_tensors
            g8, sg = quantize(torch, grad.reshape(-1, grad.shape[-1]), e5m2)
            grad_input = scaled_mm(g8, w8.t().contiguous().t(), sg, sw)
            grad_weight = scaled_mm(g8.t().contiguous(), x8.t().contiguous().t(), sg, sx)
            return grad_input.reshape(ctx.shape), grad_weight.to(ctx.weight_dtype)

    return Fp8Matmul


def Fp8Linear(path: Path, in_features: int, out_features: int) -> Any:  # noqa: N802
    """nn.Linear whose matmul runs in FP8 (FP32 while the reference runs)."""
    torch = path.torch
    matmul = make_fp8_matmul(torch)

    linear: Any = torch.nn.Linear

    class _Fp8Linear(linear):
        def forward(self, x: Any) -> Any:
            if path.reference:
                return torch.nn.functional.linear(x, self.weight)
            return matmul.apply(x, self.weight)

    return _Fp8Linear(in_features, out_features, bias=False)
