"""How the runtime API turns each execution path on: a table of pure data, and the object
a training script uses (``autocast()``, ``linear()``, ``grad_scaler()``, ``step()``,
``prepare()``). torch, TE and torchao are imported when those methods are called, never when
te_doctor is imported.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Enabler:
    """How the runtime API turns one execution path on: pure data, no torch, no TE."""

    #: class in ``transformer_engine.common.recipe``, entered with ``te.autocast`` (TE 2.9+)
    #: or ``te.fp8_autocast`` (older); None: no TE quantization recipe.
    te_recipe: str | None
    #: ``torch.autocast(<the path's device>, dtype=torch.<amp_dtype>)``; None: no autocast.
    amp_dtype: str | None
    #: ``"te"``: ``te.Linear`` on the GPU; ``"torch"``: ``torch.nn.Linear`` on the device.
    linear: str
    #: the parameters' dtype. FP16 paths keep FP32 parameters: GradScaler cannot unscale
    #: FP16 gradients.
    params_dtype: str
    #: ``grad_scaler()`` is enabled (FP16 loss scaling).
    grad_scaling: bool = False
    #: ``prepare()`` applies torchao's ``convert_to_float8_training``.
    float8_training: bool = False
    #: top-level modules that must be importable; the probes do not check these.
    needs: tuple[str, ...] = ()


def _te_fp8(recipe: str) -> Enabler:
    return Enabler(te_recipe=recipe, amp_dtype="bfloat16", linear="te", params_dtype="bfloat16")


#: Path id (``rules/paths.toml``) -> how to enable it. The recipes are built with their
#: defaults, exactly as the smoke child verifies them.
ENABLERS: Mapping[str, Enabler] = {
    "te-nvfp4": _te_fp8("NVFP4BlockScaling"),
    "te-mxfp8": _te_fp8("MXFP8BlockScaling"),
    "te-fp8-block": _te_fp8("Float8BlockScaling"),
    "te-fp8-current": _te_fp8("Float8CurrentScaling"),
    "te-fp8-delayed": _te_fp8("DelayedScaling"),
    "torch-fp8": Enabler(
        None, "bfloat16", "torch", "float32", float8_training=True, needs=("torchao",)
    ),
    "te-bf16": Enabler(None, "bfloat16", "te", "bfloat16"),
    "torch-amp-bf16": Enabler(None, "bfloat16", "torch", "float32"),
    "te-fp16": Enabler(None, "float16", "te", "float32", grad_scaling=True),
    "torch-amp-fp16": Enabler(None, "float16", "torch", "float32", grad_scaling=True),
    "torch-fp32": Enabler(None, None, "torch", "float32"),
    "cpu-bf16": Enabler(None, "bfloat16", "torch", "float32"),
    "cpu": Enabler(None, None, "torch", "float32"),
}


def te_autocast_api(names: Sequence[str] | set[str]) -> tuple[str, str]:
    """(function, recipe keyword) of TE's autocast, given the names ``te`` exports.

    TE 2.9+ has ``te.autocast(enabled=, recipe=)``; older releases only
    ``te.fp8_autocast(enabled=, fp8_recipe=)``.
    """
    return ("autocast", "recipe") if "autocast" in names else ("fp8_autocast", "fp8_recipe")


@dataclass(frozen=True, slots=True)
class SelectedPath:
    """The execution path chosen for this machine, and how to turn it on."""

    id: str
    title: str
    verification: str
    evidence: str
    #: ``"path: why"`` for every better path that was ruled out.
    reasons_skipped: tuple[str, ...]
    device: str
    #: True when the decision came from the cache (the smoke test did not run).
    from_cache: bool = field(default=False, compare=False)

    @property
    def enabler(self) -> Enabler:
        """How this path is enabled (``ENABLERS[id]``)."""
        return ENABLERS[self.id]

    def autocast(self) -> contextlib.AbstractContextManager[None]:
        """A context manager for the forward pass: TE recipe and/or torch autocast, or nothing."""
        how = self.enabler
        if how.te_recipe is None and how.amp_dtype is None:
            return contextlib.nullcontext()
        return _autocast(how, "cpu" if self.device == "cpu" else "cuda")

    def linear(self, in_features: int, out_features: int, bias: bool = True) -> Any:
        """``te.Linear`` on the GPU for TE paths, else ``torch.nn.Linear`` on ``device``."""
        torch = _module("torch")
        how = self.enabler
        dtype = getattr(torch, how.params_dtype)
        if how.linear == "te":
            te = _module("transformer_engine.pytorch")
            return te.Linear(in_features, out_features, bias=bias, params_dtype=dtype)
        return torch.nn.Linear(
            in_features, out_features, bias=bias, device=self.device, dtype=dtype
        )

    def grad_scaler(self) -> Any:
        """``torch.amp.GradScaler``: enabled for FP16 paths, a pass-through otherwise."""
        torch = _module("torch")
        return torch.amp.GradScaler(self.device, enabled=self.enabler.grad_scaling)

    def step(self, loss: Any, optimizer: Any) -> None:
        """Backward, optimizer step and zero_grad, with loss scaling where FP16 needs it.

        The ``GradScaler`` lives as long as ``optimizer`` (its scale adapts across steps).
        """
        scaler = _SCALERS.get(optimizer)
        if scaler is None:
            scaler = _SCALERS[optimizer] = self.grad_scaler()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

    def prepare(self, model: Any) -> Any:
        """``model`` on ``device``; for torch-fp8, converted to torchao float8 training."""
        model = model.to(self.device)
        if self.enabler.float8_training:
            _module("torchao.float8").convert_to_float8_training(model)
        return model


#: One GradScaler per optimizer, for ``SelectedPath.step``.
_SCALERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def _autocast(how: Enabler, device: str) -> Iterator[None]:
    torch = _module("torch")
    with contextlib.ExitStack() as stack:
        if how.amp_dtype is not None:
            stack.enter_context(torch.autocast(device, dtype=getattr(torch, how.amp_dtype)))
        if how.te_recipe is not None:
            te = _module("transformer_engine.pytorch")
            function, keyword = te_autocast_api(set(dir(te)))
            recipe = _recipe(how.te_recipe)
            stack.enter_context(getattr(te, function)(enabled=True, **{keyword: recipe}))
        yield


@functools.cache
def _recipe(name: str) -> Any:
    """One recipe object per class and process, shared by every ``autocast()``."""
    return getattr(_module("transformer_engine.common.recipe"), name)()


def _module(name: str) -> Any:
    """Import torch, TE or torchao at call time (never when te_doctor is imported)."""
    return importlib.import_module(name)


def importable(module: str) -> bool:
    """Whether a top-level module can be imported, without importing it."""
    return importlib.util.find_spec(module) is not None


def cannot_enable(path_id: str, is_importable: Callable[[str], bool] = importable) -> str:
    """Why the runtime API cannot enable a viable path here, or "" when it can."""
    how = ENABLERS.get(path_id)
    if how is None:
        return "the runtime API does not know how to enable this path"
    missing = [m for m in how.needs if not is_importable(m)]
    if missing:
        return (
            f"needs {', '.join(missing)}, which is not importable here (pip install {missing[0]})"
        )
    return ""
