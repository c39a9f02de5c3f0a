"""The te-doctor bench child: time one execution path on one transformer layer's shapes.

Started by ``te_doctor/bench/runner.py`` as ``python child.py --spec FILE --out FILE`` under
the user's interpreter, one child per path, in a process group of its own, stdout discarded,
killed at a timeout. Standalone on purpose, like the smoke child: the standard library, plus
torch and transformer_engine imported lazily, never ``te_doctor``. Valid for Python 3.8+.

Spec (written by the runner)::

    {"format": 1, "path": <path id>, "device": "cuda" | "cpu",
     "workload": {"hidden_size", "ffn_hidden_size", "num_heads", "num_kv_heads",
                  "seq_len", "batch_size", "activation"},
     "components": {"gemms" | "mlp" | "layer": <FLOPs of one step>},
     "warmup": int >= 1, "repeats": int >= 1, "budget_s": float (per component), "seed": int}

Result format 1 (``te_doctor/bench/result.py`` parses it), rewritten atomically before and
after every component (``running`` names the one in progress)::

    {"format": 1, "finished": bool, "running": str, "path": str, "device": str,
     "device_name": str, "torch": str | null, "te": str | null,
     "error": {"type", "text"} | null,
     "components": [{"name", "status": "ok" | "skipped" | "failed" | "oom" | "too-slow",
                     "reason": str, "warmup_s": [float], "samples_s": [float],
                     "memory_bytes": int | null, "memory_kind": "cuda-peak-allocated" |
                     "peak-rss", "rel_error": float | null, "error_detail": str}]}

Method. One sample is one training step of the component: forward under the path's
precision (autocast, TE recipe or FP8 casts), backward with a fixed output gradient,
parameter gradients cleared first. Casts, amax and scale computation are inside the step.
``warmup`` steps run first and are kept apart (``warmup_s``): they include kernel selection,
JIT and, for delayed scaling, the amax history. On CUDA each step is timed with a pair of
CUDA events after a device synchronize; on the CPU with ``time.perf_counter``. When the first
warm-up step shows that ``repeats`` steps would not fit in ``budget_s``, fewer are taken (the
reason says so); on the CPU one GEMM of 256x256x256 in the path's precision is timed first,
and a component whose predicted step exceeds the budget is reported "too-slow" unmeasured.
``rel_error`` is ``||out - ref||_F / ||ref||_F`` of the forward output against the same
module in FP32 (TF32 off, no autocast, no FP8), from the same weights and inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import json
import math
import os
import resource
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

FORMAT = 1
DETAIL_LIMIT = 2000
PREFLIGHT_SIZE = 256

#: path id -> (module family, parameter dtype, torch autocast dtype, TE recipe class).
PATHS = {
    "cpu": ("torch", "float32", None, None),
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


# --------------------------------------------------------------------------- timing


def time_steps(
    step: Callable[[], None],
    timed: Callable[[Callable[[], None]], float],
    *,
    warmup: int,
    repeats: int,
    budget_s: float,
) -> tuple[list[float], list[float], str]:
    """Run ``warmup`` then up to ``repeats`` timed steps: (warm-up times, samples, note).

    ``timed(step)`` runs one step and returns its duration in seconds, synchronised. The
    samples are shortened to what the budget allows after the warm-up, never below one.
    """
    warm = [timed(step)]
    if warm[0] > budget_s:
        raise TooSlow(f"one step took {warm[0]:.3g} s, over the budget of {budget_s:.3g} s")
    warm += [timed(step) for _ in range(warmup - 1)]
    left = budget_s - sum(warm)
    fit = int(left / warm[-1]) if warm[-1] > 0 else repeats
    count = min(repeats, max(1, fit))
    note = ""
    if count < repeats:
        note = f"{count} of {repeats} repeats: one step takes {warm[-1]:.3g} s"
        note += f", budget {budget_s:.3g} s"
    return warm, [timed(step) for _ in range(count)], note


def cpu_timed(step: Callable[[], None]) -> float:
    started = time.perf_counter()
    step()
    return time.perf_counter() - started


def cuda_timer(torch: Any) -> Callable[[Callable[[], None]], float]:
    """Time a step between two CUDA events, the device idle before it starts."""

    def timed(step: Callable[[], None]) -> float:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        step()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1000.0

    return timed


# --------------------------------------------------------------------------- the path


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


# --------------------------------------------------------------------------- torch FP8


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


# --------------------------------------------------------------------------- components


def activate(torch: Any, hidden: Any, activation: str) -> Any:
    functional = torch.nn.functional
    if activation == "swiglu":
        gate, value = hidden.chunk(2, dim=-1)
        return functional.silu(gate) * value
    return functional.gelu(hidden, approximate="tanh")


def native_modules(path: Path, workload: dict[str, Any]) -> tuple[Any, Any]:
    """(MLP, transformer layer) built from torch modules and ``path.linear``."""
    torch = path.torch
    hidden, ffn = workload["hidden_size"], workload["ffn_hidden_size"]
    heads, kv_heads = workload["num_heads"], workload["num_kv_heads"]
    activation = workload["activation"]
    fc1_size = ffn * (2 if activation == "swiglu" else 1)
    head_dim = hidden // heads

    module: Any = torch.nn.Module

    class Mlp(module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(hidden)
            self.fc1, self.fc2 = path.linear(hidden, fc1_size), path.linear(ffn, hidden)

        def forward(self, x: Any) -> Any:
            return self.fc2(activate(torch, self.fc1(self.norm(x)), activation))

    class Layer(module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(hidden)
            self.qkv = path.linear(hidden, hidden + 2 * kv_heads * head_dim)
            self.proj = path.linear(hidden, hidden)
            self.mlp = Mlp()

        def forward(self, x: Any) -> Any:  # x: [seq, batch, hidden]
            seq, batch, _ = x.shape
            q, k, v = self.qkv(self.norm(x)).split(
                [hidden, kv_heads * head_dim, kv_heads * head_dim], dim=-1
            )
            q = q.reshape(seq, batch, heads, head_dim).permute(1, 2, 0, 3)
            k = k.reshape(seq, batch, kv_heads, head_dim).permute(1, 2, 0, 3)
            v = v.reshape(seq, batch, kv_heads, head_dim).permute(1, 2, 0, 3)
            if kv_heads != heads:
                k = k.repeat_interleave(heads // kv_heads, dim=1)
                v = v.repeat_interleave(heads // kv_heads, dim=1)
            attention = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            x = x + self.proj(attention.permute(2, 0, 1, 3).reshape(seq, batch, hidden))
            return x + self.mlp(x)

    return Mlp().to(path.device), Layer().to(path.device)


def te_modules(path: Path, workload: dict[str, Any]) -> tuple[Any, Any]:
    """(te.LayerNormMLP, te.TransformerLayer) in the path's parameter dtype."""
    te = path.te
    common = {"params_dtype": path.params_dtype, "device": path.device}
    mlp = te.LayerNormMLP(
        workload["hidden_size"],
        workload["ffn_hidden_size"],
        bias=False,
        activation=workload["activation"],
        **common,
    )
    layer = te.TransformerLayer(
        workload["hidden_size"],
        workload["ffn_hidden_size"],
        workload["num_heads"],
        num_gqa_groups=workload["num_kv_heads"],
        hidden_dropout=0.0,
        attention_dropout=0.0,
        self_attn_mask_type="no_mask",
        activation=workload["activation"],
        **common,
    )
    return mlp, layer


class Component:
    """Modules and inputs of one component; ``step`` is one training step."""

    def __init__(self, path: Path, name: str, workload: dict[str, Any]) -> None:
        torch = path.torch
        self.path, self.name = path, name
        torch.manual_seed(0)
        tokens = workload["seq_len"] * workload["batch_size"]
        hidden, ffn = workload["hidden_size"], workload["ffn_hidden_size"]
        if name == "gemms":
            qkv = hidden + 2 * workload["num_kv_heads"] * (hidden // workload["num_heads"])
            fc1 = ffn * (2 if workload["activation"] == "swiglu" else 1)
            shapes = [(hidden, qkv), (hidden, hidden), (hidden, fc1), (ffn, hidden)]
            self.modules = [path.linear(k, n) for k, n in shapes]
            self.inputs = [self._input(tokens, k) for k, _ in shapes]
        else:
            maker = te_modules if path.family == "te" else native_modules
            mlp, layer = maker(path, workload)
            if name == "mlp":
                self.modules, self.inputs = [mlp], [self._input(tokens, hidden)]
            else:
                shape = (workload["seq_len"], workload["batch_size"], hidden)
                self.modules, self.inputs = [layer], [self._input(*shape)]
        self.grads: list[Any] = []

    def _input(self, *shape: int) -> Any:
        torch = self.path.torch
        return torch.randn(*shape, device=self.path.device, dtype=self.path.input_dtype)

    def forward(self) -> list[Any]:
        dtype = self.path.input_dtype
        inputs = [x.detach().to(dtype).requires_grad_() for x in self.inputs]
        with self.path.forward_context():
            return [module(x) for module, x in zip(self.modules, inputs)]  # noqa: B905 -- Python 3.8

    def step(self) -> None:
        for module in self.modules:
            for parameter in module.parameters():
                parameter.grad = None
        outputs = self.forward()
        if not self.grads:
            torch = self.path.torch
            self.grads = [torch.randn_like(out) for out in outputs]
        for out, grad in zip(outputs, self.grads):  # noqa: B905 -- Python 3.8
            out.backward(grad)


# --------------------------------------------------------------------------- measuring


def relative_error(component: Component) -> float | None:
    """Forward output against the same modules in FP32 (the worst of several outputs)."""
    path, torch = component.path, component.path.torch
    with torch.no_grad():
        outputs = [out.float() for out in component.forward()]
        tf32 = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        original = component.modules
        try:
            path.reference = True
            component.modules = [copy.deepcopy(m).float() for m in original]
            references = [out.float() for out in component.forward()]
        finally:
            path.reference = False
            component.modules = original
            torch.backends.cuda.matmul.allow_tf32 = tf32
    worst = 0.0
    for out, ref in zip(outputs, references):  # noqa: B905 -- Python 3.8
        if not bool(torch.isfinite(out).all()):
            return None
        worst = max(worst, float((out - ref).norm() / ref.norm()))
    return worst if math.isfinite(worst) else None


def preflight(path: Path, step_flops: float, budget_s: float) -> None:
    """On the CPU: predict one step from a small GEMM in this precision; too slow -> skip."""
    torch, size = path.torch, PREFLIGHT_SIZE
    probe = path.linear(size, size)
    x = torch.randn(size, size, device=path.device, dtype=path.input_dtype)
    with torch.no_grad(), path.forward_context():
        probe(x)
        started = time.perf_counter()
        probe(x)
        seconds = time.perf_counter() - started
    rate = 2 * size**3 / max(seconds, 1e-9)
    predicted = step_flops / rate  # the whole step at the forward GEMM's rate
    if predicted > budget_s:
        shown = f"{predicted:.0f}" if predicted >= 10 else f"{predicted:.3g}"
        raise TooSlow(
            f"a {size}x{size}x{size} GEMM in this precision runs at {rate / 1e9:.3g} GFLOP/s "
            f"here, so one step would take about {shown} s, over the budget of "
            f"{budget_s:.3g} s"
        )


def memory_used(torch: Any, device: str) -> tuple[int | None, str]:
    if device.startswith("cuda"):
        return int(torch.cuda.max_memory_allocated()), "cuda-peak-allocated"
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024, "peak-rss"


def measure_component(path: Path, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Build, time and check one component; never raises."""
    torch = path.torch
    component: Component | None = None
    entry: dict[str, Any] = {
        "name": name,
        "status": "ok",
        "reason": "",
        "warmup_s": [],
        "samples_s": [],
        "memory_bytes": None,
        "memory_kind": "",
        "rel_error": None,
        "error_detail": "",
    }
    cuda = path.device.startswith("cuda")
    try:
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        else:
            preflight(path, float(spec["components"][name]), float(spec["budget_s"]))
        component = Component(path, name, spec["workload"])
        timed = cuda_timer(torch) if cuda else cpu_timed
        warm, samples, note = time_steps(
            component.step,
            timed,
            warmup=int(spec["warmup"]),
            repeats=int(spec["repeats"]),
            budget_s=float(spec["budget_s"]),
        )
        entry.update(warmup_s=warm, samples_s=samples, reason=note)
        entry["memory_bytes"], entry["memory_kind"] = memory_used(torch, path.device)
        try:
            entry["rel_error"] = relative_error(component)
        except Exception as exc:  # noqa: BLE001 -- the timing stands without the check
            entry["error_detail"] = f"no FP32 reference: {describe(exc)}"
    except Skip as exc:
        entry.update(status="skipped", reason=str(exc))
    except TooSlow as exc:
        entry.update(status="too-slow", reason=str(exc))
    except Exception as exc:  # noqa: BLE001 -- a failing component is a result
        out_of_memory = "out of memory" in str(exc).lower()
        entry.update(status="oom" if out_of_memory else "failed", reason=describe(exc))
    finally:
        component = None  # free the modules before the next component
        if cuda:
            torch.cuda.empty_cache()
    return entry


# --------------------------------------------------------------------------- the run


def write(out: str, data: dict[str, Any]) -> None:
    """Replace ``out`` atomically with ``data``."""
    fd, temporary = tempfile.mkstemp(prefix=".bench-", suffix=".tmp", dir=os.path.dirname(out))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
        os.replace(temporary, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def setup(spec: dict[str, Any], data: dict[str, Any]) -> Path:
    """Import torch (and TE for TE paths), check the device; raises Skip when it cannot run."""
    torch = importlib.import_module("torch")
    data["torch"] = str(torch.__version__)
    te = None
    if PATHS[spec["path"]][0] == "te":
        te = importlib.import_module("transformer_engine.pytorch")
        data["te"] = str(getattr(importlib.import_module("transformer_engine"), "__version__", ""))
    if spec["device"] == "cuda":
        if not torch.cuda.is_available():
            raise Skip("torch sees no CUDA device")
        data["device_name"] = str(torch.cuda.get_device_name(0))
    else:
        data["device_name"] = "cpu"
    if spec["path"] == "torch-fp8" and not hasattr(torch, "_scaled_mm"):
        raise Skip(f"torch {torch.__version__} has no _scaled_mm")
    return Path(spec["path"], spec["device"], torch, te)


def run(spec: dict[str, Any], out: str) -> None:
    data: dict[str, Any] = {
        "format": FORMAT,
        "finished": False,
        "running": "setup",
        "path": spec["path"],
        "device": spec["device"],
        "device_name": "",
        "torch": None,
        "te": None,
        "error": None,
        "components": [],
    }
    write(out, data)
    try:
        path = setup(spec, data)
    except Skip as exc:
        data["components"] = [
            {"name": name, "status": "skipped", "reason": str(exc)} for name in spec["components"]
        ]
    except Exception as exc:  # noqa: BLE001 -- an import that fails is the result
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        data["error"] = {"type": type(exc).__name__, "text": text[-DETAIL_LIMIT:]}
    else:
        for name in spec["components"]:
            data["running"] = name
            write(out, data)
            data["components"].append(measure_component(path, name, spec))
            write(out, data)
    data["running"], data["finished"] = "", True
    write(out, data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="te-doctor bench child (run by te-doctor)")
    parser.add_argument("--spec", required=True, help="the JSON spec to run")
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    args = parser.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    with open(args.spec, encoding="utf-8") as handle:
        spec = json.load(handle)
    run(spec, os.path.abspath(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
