"""The te-doctor smoke child: run the real thing, in whatever Python the user will train with.

Started by ``te_doctor/smoke/runner.py`` as ``python child.py --out FILE`` under the user's
interpreter, in a process group of its own, stdout discarded, stderr kept, killed at a
timeout. It is standalone on purpose: only the standard library, plus torch and
transformer_engine imported lazily, never ``te_doctor`` (which that interpreter may not have).
Its source must stay valid for Python 3.8 and later.

Stages, in order (``stage`` in the result names the one in progress):

``import-torch``
    ``import torch``; records version, CUDA build, ``cuda_available``, device count, name and
    compute capability of device 0, and the cuDNN version torch reports (decoded like TE's
    ``decode_cudnn_version``).
``device``
    A tiny tensor operation on ``cuda:0`` and a synchronize; skipped without CUDA.
``import-te``
    ``import transformer_engine`` and ``transformer_engine.pytorch``, only if a TE
    distribution is installed; otherwise the stage (and ``te-support``) is "skipped", which is
    not an error.
``te-support``
    TE's own verdicts (``te.is_fp8_available(return_reason=True)`` ... in TE 2.9+, else the
    ``check_*_support()`` functions of ``transformer_engine.pytorch.quantization`` or ``.fp8``).
``gemm``
    The checks below, cheapest and least likely to crash first, the result file rewritten after
    each one (``running_check`` names the one in progress).
``done``
    ``finished`` is true.

A failure in ``import-torch``, ``device`` or ``import-te`` stops what depends on it and sets
``error`` (the first failure only): ``{"stage", "type": exception class name, "text":
formatted traceback, last 4000 characters}``. A GEMM check that fails sets no ``error``; it has
a status of its own. The result is written atomically (temporary file, ``os.replace``) before
and after every stage, so a child that crashes or is killed leaves the stage it died in.

Result format 1 (``te_doctor/smoke/result.py`` parses it; keys beyond these are informational):

    {"format": 1, "finished": bool, "stage": str,
     "torch": {"version", "cuda", "cuda_available", "device_count", "device_name",
               "capability": "9.0" | null, "cudnn": "9.1.0" | null, "warnings": [str]},
     "te": {"distributions": {name: version}, "version": str | null},
     "te_support": [{"recipe": "fp8" | "mxfp8" | "fp8-block" | "nvfp4" | "bf16",
                     "available": bool, "reason": str, "source": str}],
     "checks": [{"name": <path id from rules/paths.toml>, "device": "cuda:0" | "cpu",
                 "status": "ok" | "failed" | "numerics" | "skipped",
                 "max_abs_error": float | null, "rel_error": float | null,
                 "tolerance": float, "detail": str, "duration_ms": float}],
     "stages": [{"name", "status": "ok" | "failed" | "skipped", "detail", "duration_ms"}],
     "loaded_libraries": [{"name": "cudnn" | "cublas" | ..., "path", "version", "origin"}],
     "error": {"stage", "type", "text"} | null}

Checks. Inputs come from a fixed seed, all dimensions are 128 (multiples of 16 for
``_scaled_mm``, of 32 for MXFP8 and of 128 for FP8 block scaling and NVFP4). Every result is
compared with a float64 reference computed on the CPU (at least as exact as FP32) from the
same inputs, dequantized where the check quantizes them itself. ``rel_error`` is
``||out - ref||_F / ||ref||_F`` (the worst of forward output and input gradient where both are
checked); status "ok" when it is within the tolerance, "numerics" when above it or when the
output is not finite, "failed" when the check raised (``detail`` is the exception),
"skipped" when the path cannot run here (``detail`` says why).

=================  =========  =================================================================
check              tolerance  why
=================  =========  =================================================================
cpu                1e-5       FP32 on the CPU: ~1e-7 relative for K=128 sums
torch-fp32         0.01       TF32 may be on (10 mantissa bits: ~1e-3 relative)
torch-amp-bf16     0.02       bf16 inputs and output (8 significant bits: ~0.4 %)
torch-amp-fp16     0.01       fp16 inputs and output (11 significant bits: ~0.05 %)
torch-fp8          0.08       e4m3 has 3 mantissa bits: one rounding step is up to 6.25 %;
                              the reference uses the dequantized inputs, so only the GEMM is
                              measured (bf16 output rounding, ~0.2 %), far below what a wrong
                              scale or operand layout gives (tens of per cent)
te-bf16, te-fp16   0.02, 0.01 as for autocast
te-fp8-*, mxfp8    0.1        TE quantizes internally, so the reference is unquantized: e4m3
                              inputs give ~4 % forward; the HYBRID format's e5m2 gradients
                              (2 mantissa bits) ~6 % on the input gradient
te-nvfp4           0.25       e2m1 (1 mantissa bit) in 16-value blocks: ~13 % forward, ~17 % on
                              the input gradient with stochastic rounding
=================  =========  =================================================================

The TE FP8/NVFP4 error figures are estimates from emulating the formats on the CPU (M=N=K=128,
Gaussian data), not GPU measurements. The TE recipe checks run forward and backward twice and
measure the second pass: delayed scaling takes its scales from the previous pass's amax.

The torch-fp8 check runs on ``cuda:0`` when its compute capability is 8.9 or higher, else on
the CPU (torch 2.13 has a CPU ``_scaled_mm``; a torch without one gets "skipped" there).
TE checks need TE imported and a working CUDA device, and are skipped with TE's own reason when
its support check says no, or when the installed TE has no such recipe class.

Fault injection (tests only): with ``TE_DOCTOR_SMOKE_FAULT=wrong-scale`` in the environment,
torch-fp8 hands ``_scaled_mm`` a ``scale_a`` 1.5 times too large and the TE FP8/NVFP4 checks
scale their forward output by 1.5, so their status must come out "numerics"; this proves the
error check can fail.

Loaded libraries: at the end (also after a failure) ``/proc/self/maps`` lists which copies of
cuDNN, cuBLAS(Lt), cudart, NCCL, NVRTC, cuRAND and libtransformer_engine the process mapped.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import re
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

FORMAT = 1
FAULT_ENV = "TE_DOCTOR_SMOKE_FAULT"
WRONG_SCALE = "wrong-scale"
#: How far off the injected fault makes the scale (or the output).
FAULT_FACTOR = 1.5
TRACEBACK_TAIL = 4000
DETAIL_LIMIT = 2000
SEED = 0
#: M = K = N of every GEMM.
SIZE = 128

TE_NAME = "transformer-engine"
TE_DISTRIBUTIONS = (
    "transformer-engine",
    "transformer_engine",
    "transformer-engine-cu12",
    "transformer-engine-cu13",
    "transformer_engine_torch",
)
#: recipe -> (public function in TE 2.9+, check function in quantization.py / fp8.py).
SUPPORT_FUNCTIONS = (
    ("fp8", "is_fp8_available", "check_fp8_support"),
    ("mxfp8", "is_mxfp8_available", "check_mxfp8_support"),
    ("fp8-block", "is_fp8_block_scaling_available", "check_fp8_block_scaling_support"),
    ("nvfp4", "is_nvfp4_available", "check_nvfp4_support"),
    ("bf16", "is_bf16_available", ""),
)
SUPPORT_MODULES = ("transformer_engine.pytorch.quantization", "transformer_engine.pytorch.fp8")

TOL_CPU = 1e-5
TOL_FP32 = 0.01
TOL_BF16 = 0.02
TOL_FP16 = 0.01
TOL_TORCH_FP8 = 0.08
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

#: File-name prefixes of the libraries reported as loaded; the longer prefix first.
LIBRARY_PREFIXES = (
    "libcublasLt",
    "libcublas",
    "libcudnn",
    "libcudart",
    "libnccl",
    "libnvrtc",
    "libtransformer_engine",
    "libcurand",
)
_SO_VERSION = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")
_PIP_MARKERS = ("/site-packages/nvidia/", "/dist-packages/nvidia/", "/site-packages/")
_CONDA_MARKERS = ("/conda", "/miniconda", "/anaconda", "/miniforge", "/mambaforge", "/micromamba")


# --------------------------------------------------------------------------- result file


class Result:
    """The result document, and its atomic writes to ``--out``."""

    def __init__(self, out: str) -> None:
        self.out = os.path.abspath(out)
        self.started = time.perf_counter()
        self.data: dict[str, Any] = {
            "format": FORMAT,
            "finished": False,
            "stage": "",
            "python": sys.executable,
            "python_version": sys.version.split()[0],
            "torch": {},
            "te": {"distributions": {}, "version": None},
            "te_support": [],
            "checks": [],
            "stages": [],
            "loaded_libraries": [],
            "error": None,
            "duration_ms": 0.0,
        }

    @property
    def stage(self) -> str:
        return str(self.data["stage"])

    def write(self) -> None:
        """Replace ``--out`` with the document as it is now."""
        self.data["duration_ms"] = _ms_since(self.started)
        text = json.dumps(self.data, indent=1, default=str)
        fd, temporary = tempfile.mkstemp(
            prefix=".smoke-", suffix=".tmp", dir=os.path.dirname(self.out)
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, self.out)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    @contextlib.contextmanager
    def stage_run(self, name: str) -> Iterator[StageLog]:
        """Write with ``stage`` = name before the stage and again after it."""
        self.data["stage"] = name
        self.write()
        log = StageLog(name)
        started = time.perf_counter()
        try:
            yield log
        finally:
            self.data["stages"].append(
                {
                    "name": name,
                    "status": log.status,
                    "detail": log.detail,
                    "duration_ms": _ms_since(started),
                }
            )
            self.write()

    def fail(self, stage: str, exc: BaseException) -> None:
        """Record ``exc`` as the error, unless an earlier failure already is."""
        if self.data["error"] is None:
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            self.data["error"] = {
                "stage": stage,
                "type": type(exc).__name__,
                "text": text[-TRACEBACK_TAIL:],
            }


@dataclass
class StageLog:
    """What a stage reports about itself."""

    name: str
    status: str = "ok"
    detail: str = ""

    def skip(self, reason: str) -> None:
        self.status, self.detail = "skipped", reason

    def failed(self, exc: BaseException) -> None:
        self.status, self.detail = "failed", _describe(exc)


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}"[:DETAIL_LIMIT] if text else type(exc).__name__


# --------------------------------------------------------------------------- stages


@dataclass
class State:
    """What the stages learned that later stages depend on."""

    torch: Any = None
    te: Any = None
    cuda_ok: bool = False
    capability: tuple[int, int] | None = None
    #: Why the CUDA checks cannot run (empty when they can).
    no_cuda: str = "no CUDA device"
    #: Why the TE checks cannot run (empty when they can).
    no_te: str = "Transformer Engine is not installed"
    te_version: str = ""
    #: Where the GPU checks run (tests point it at the CPU to exercise the plumbing).
    cuda_device: str = "cuda:0"
    support: dict[str, tuple[bool, str]] = field(default_factory=dict)
    fault: bool = False


def run_stages(result: Result, state: State) -> None:
    """All stages in order; failures that stop later stages are recorded, not raised."""
    with result.stage_run("import-torch") as log:
        stage_import_torch(result, state, log)
    if state.torch is None:
        return
    with result.stage_run("device") as log:
        stage_device(result, state, log)
    with result.stage_run("import-te") as log:
        stage_import_te(result, state, log)
    with result.stage_run("te-support") as log:
        stage_te_support(result, state, log)
    with result.stage_run("gemm") as log:
        stage_gemm(result, state, log)


def stage_import_torch(result: Result, state: State, log: StageLog) -> None:
    try:
        torch = importlib.import_module("torch")
    except Exception as exc:  # noqa: BLE001 -- any import failure is the finding
        result.fail("import-torch", exc)
        log.failed(exc)
        return
    state.torch = torch
    info = torch_info(torch)
    result.data["torch"] = info
    state.cuda_ok = bool(info["cuda_available"])
    if info["capability"]:
        major, minor = str(info["capability"]).split(".")
        state.capability = (int(major), int(minor))


def torch_info(torch: Any) -> dict[str, Any]:
    """What torch reports about its build and device 0; None for what it cannot tell."""
    version = getattr(torch, "version", None)
    info: dict[str, Any] = {
        "version": str(getattr(torch, "__version__", "")),
        "cuda": getattr(version, "cuda", None),
        "hip": getattr(version, "hip", None),
        "cuda_available": False,
        "device_count": None,
        "device_name": None,
        "capability": None,
        "cudnn": None,
        "warnings": [],
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info["cuda_available"] = bool(_quietly(torch.cuda.is_available, False))
        if info["cuda_available"]:
            info["device_count"] = _quietly(torch.cuda.device_count, None)
            info["device_name"] = _quietly(lambda: torch.cuda.get_device_name(0), None)
            capability = _quietly(lambda: torch.cuda.get_device_capability(0), None)
            if capability:
                info["capability"] = f"{capability[0]}.{capability[1]}"
        raw = _quietly(torch.backends.cudnn.version, None)
        info["cudnn"] = decode_cudnn_version(raw) if isinstance(raw, int) and raw > 0 else None
    info["warnings"] = [str(item.message)[:500] for item in caught][:5]
    for message in info["warnings"]:
        print(f"te-doctor smoke: torch warned: {message}", file=sys.stderr)
    return info


def _quietly(call: Callable[[], Any], default: Any) -> Any:
    try:
        return call()
    except Exception:  # noqa: BLE001 -- a query that fails reports nothing; the device stage tells why
        return default


def decode_cudnn_version(value: int) -> str:
    """cudnnGetVersion() as TE decodes it: 8902 -> 8.9.2, 90100 -> 9.1.0."""
    major, rest = divmod(value, 1000) if value < 90000 else divmod(value, 10000)
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}"


def stage_device(result: Result, state: State, log: StageLog) -> None:
    torch = state.torch
    if not state.cuda_ok:
        build = result.data["torch"].get("cuda")
        state.no_cuda = "no CUDA device" if build else "torch is a CPU-only build (no CUDA device)"
        log.skip(f"torch.cuda.is_available() is False; {state.no_cuda}")
        return
    try:
        values = torch.arange(16, dtype=torch.float32, device="cuda:0")
        total = float((values * 2).sum().item())
        torch.cuda.synchronize()
        if total != 240.0:
            raise RuntimeError(f"a tiny tensor op on cuda:0 returned {total}, expected 240.0")
    except Exception as exc:  # noqa: BLE001 -- recorded as the stage's error
        result.fail("device", exc)
        log.failed(exc)
        state.cuda_ok = False
        state.no_cuda = f"the device stage failed: {_describe(exc)}"
        return
    state.no_cuda = ""


def stage_import_te(result: Result, state: State, log: StageLog) -> None:
    found = te_distributions()
    result.data["te"]["distributions"] = found
    result.data["te"]["version"] = next(
        (version for name, version in found.items() if name.replace("_", "-") == TE_NAME), None
    )
    if not found:
        log.skip("Transformer Engine is not installed")
        return
    try:
        package = importlib.import_module("transformer_engine")
        te = importlib.import_module("transformer_engine.pytorch")
    except Exception as exc:  # noqa: BLE001 -- any import failure is the finding
        result.fail("import-te", exc)
        log.failed(exc)
        state.no_te = f"import transformer_engine failed: {_describe(exc)}"
        return
    state.te_version = str(getattr(package, "__version__", "") or result.data["te"]["version"])
    result.data["te"]["version"] = state.te_version or None
    state.te = te
    state.no_te = ""


def te_distributions() -> dict[str, str]:
    """Installed TE distributions: name -> version."""
    from importlib import metadata

    found: dict[str, str] = {}
    for name in TE_DISTRIBUTIONS:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[str(dist.metadata["Name"] or name)] = str(dist.version)
    return found


def stage_te_support(result: Result, state: State, log: StageLog) -> None:
    if state.te is None:
        log.skip(state.no_te)
        return
    for recipe, public, legacy in SUPPORT_FUNCTIONS:
        function, source = support_function(state.te, public, legacy)
        if function is None:
            continue
        available, reason = call_support(function, public_api=source.startswith("te."))
        state.support[recipe] = (available, reason)
        result.data["te_support"].append(
            {"recipe": recipe, "available": available, "reason": reason, "source": source}
        )


def support_function(te: Any, public: str, legacy: str) -> tuple[Any, str]:
    """(function, where it came from), the public API first; (None, "") when TE has neither."""
    function = getattr(te, public, None)
    if callable(function):
        return function, f"te.{public}"
    if not legacy:
        utils = _import_or_none("transformer_engine.pytorch.utils")
        function = getattr(utils, "is_bf16_compatible", None)
        return (
            (function, "transformer_engine.pytorch.utils.is_bf16_compatible")
            if callable(function)
            else (None, "")
        )
    for module_name in SUPPORT_MODULES:
        function = getattr(_import_or_none(module_name), legacy, None)
        if callable(function):
            return function, f"{module_name}.{legacy}"
    return None, ""


def _import_or_none(name: str) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fp8.py is a shim in TE 2.9+
            return importlib.import_module(name)
    except Exception:  # noqa: BLE001 -- a module this TE does not have
        return None


def call_support(function: Any, *, public_api: bool) -> tuple[bool, str]:
    """TE's verdict as (available, reason); an exception is a "no" with its text as reason."""
    try:
        verdict = function(return_reason=True) if public_api else function()
    except Exception as exc:  # noqa: BLE001 -- the check itself failing is a "no"
        return False, _describe(exc)
    if isinstance(verdict, tuple):
        return bool(verdict[0]), str(verdict[1] if len(verdict) > 1 else "")
    return bool(verdict), ""


# --------------------------------------------------------------------------- GEMM checks


class Skip(Exception):
    """The check does not apply here; the message says why."""


@dataclass
class Measured:
    """How far a check's outputs were from their references."""

    max_abs_error: float | None
    rel_error: float | None
    detail: str


@dataclass
class Check:
    """One GEMM check: its path id, tolerance, device and body."""

    name: str
    tolerance: float
    device: str
    body: Callable[[], Measured]


def stage_gemm(result: Result, state: State, log: StageLog) -> None:
    state.torch.manual_seed(SEED)
    for check in gemm_checks(state):
        result.data["running_check"] = check.name
        result.write()
        result.data["checks"].append(run_check(check, state))
    result.data.pop("running_check", None)
    statuses = [str(check["status"]) for check in result.data["checks"]]
    log.detail = ", ".join(f"{statuses.count(s)} {s}" for s in sorted(set(statuses)))


def run_check(check: Check, state: State) -> dict[str, Any]:
    """Run one check and turn what happened into its result entry."""
    started = time.perf_counter()
    entry: dict[str, Any] = {
        "name": check.name,
        "device": check.device,
        "status": "failed",
        "max_abs_error": None,
        "rel_error": None,
        "tolerance": check.tolerance,
        "detail": "",
    }
    try:
        measured = check.body()
        if check.device.startswith("cuda"):
            state.torch.cuda.synchronize()  # an asynchronous kernel error belongs to this check
    except Skip as skip:
        entry.update(status="skipped", detail=str(skip))
    except Exception as exc:  # noqa: BLE001 -- a failing GEMM is a result, not a crash
        entry.update(status="failed", detail=_describe(exc))
    else:
        rel = measured.rel_error
        within = rel is not None and rel <= check.tolerance
        entry.update(
            status="ok" if within else "numerics",
            max_abs_error=measured.max_abs_error,
            rel_error=rel,
            detail=measured.detail[:DETAIL_LIMIT],
        )
    entry["duration_ms"] = _ms_since(started)
    return entry


def gemm_checks(state: State) -> list[Check]:
    """All checks, least likely to crash the process first."""
    cuda = state.cuda_device
    fp8_device = cuda if state.cuda_ok and (state.capability or (0, 0)) >= (8, 9) else "cpu"
    checks = [
        Check("cpu", TOL_CPU, "cpu", lambda: check_cpu(state)),
        Check("torch-fp32", TOL_FP32, cuda, lambda: check_torch_fp32(state)),
        Check("torch-amp-bf16", TOL_BF16, cuda, lambda: check_amp(state, "bfloat16")),
        Check("torch-amp-fp16", TOL_FP16, cuda, lambda: check_amp(state, "float16")),
        Check("torch-fp8", TOL_TORCH_FP8, fp8_device, lambda: check_torch_fp8(state, fp8_device)),
        Check("te-bf16", TOL_BF16, cuda, lambda: check_te_plain(state, "bfloat16")),
        Check("te-fp16", TOL_FP16, cuda, lambda: check_te_plain(state, "float16")),
    ]
    for name, recipe_class, support_key, tolerance in TE_RECIPES:
        checks.append(
            Check(
                name,
                tolerance,
                cuda,
                _te_recipe_body(state, recipe_class, support_key),
            )
        )
    return checks


def _te_recipe_body(state: State, recipe_class: str, support_key: str) -> Callable[[], Measured]:
    return lambda: check_te_recipe(state, recipe_class, support_key)


def _generator(torch: Any) -> Any:
    return torch.Generator().manual_seed(SEED)


def _randn(torch: Any, generator: Any, *shape: int) -> Any:
    return torch.randn(*shape, generator=generator, dtype=torch.float32)


def measure(torch: Any, parts: list[tuple[str, Any, Any]], note: str = "") -> Measured:
    """Compare each (label, output, reference) in float64 on the CPU; the worst one counts.

    A non-finite output gives ``rel_error`` None (status "numerics").
    """
    worst_abs: float | None = 0.0
    worst_rel: float | None = 0.0
    texts = []
    for label, output, reference in parts:
        out = output.detach().to(device="cpu", dtype=torch.float64)
        ref = reference.detach().to(device="cpu", dtype=torch.float64)
        if not bool(torch.isfinite(out).all()):
            worst_abs = worst_rel = None
            texts.append(f"{label}: non-finite values")
            continue
        diff = out - ref
        max_abs = float(diff.abs().max())
        rel = float(diff.norm() / ref.norm())
        texts.append(f"{label}: rel {rel:.3g}, max abs {max_abs:.3g}")
        if worst_abs is not None and worst_rel is not None:
            worst_abs, worst_rel = max(worst_abs, max_abs), max(worst_rel, rel)
    if worst_rel is not None and not math.isfinite(worst_rel):
        worst_abs = worst_rel = None
    detail = "; ".join(texts) + (f" ({note})" if note else "")
    return Measured(worst_abs, worst_rel, detail)


def _need_cuda(state: State) -> None:
    if not state.cuda_ok:
        raise Skip(state.no_cuda or "no CUDA device")


def _need_capability(state: State, minimum: tuple[int, int], what: str) -> None:
    capability = state.capability or (0, 0)
    if capability < minimum:
        raise Skip(
            f"{what} needs compute capability {minimum[0]}.{minimum[1]} or higher; "
            f"cuda:0 is {capability[0]}.{capability[1]}"
        )


def check_cpu(state: State) -> Measured:
    """FP32 matmul and an nn.Linear forward and backward on the CPU."""
    torch = state.torch
    gen = _generator(torch)
    a, b = _randn(torch, gen, SIZE, SIZE), _randn(torch, gen, SIZE, SIZE)
    layer = torch.nn.Linear(SIZE, SIZE)
    with torch.no_grad():
        layer.weight.copy_(_randn(torch, gen, SIZE, SIZE))
        layer.bias.copy_(_randn(torch, gen, SIZE))
    x = _randn(torch, gen, SIZE, SIZE).requires_grad_()
    grad = _randn(torch, gen, SIZE, SIZE)
    y = layer(x)
    y.backward(grad)
    w64, b64 = layer.weight.detach().double(), layer.bias.detach().double()
    return measure(
        torch,
        [
            ("matmul", a @ b, a.double() @ b.double()),
            ("linear forward", y, x.detach().double() @ w64.t() + b64),
            ("linear input grad", x.grad, grad.double() @ w64),
        ],
    )


def check_torch_fp32(state: State) -> Measured:
    """FP32 matmul on cuda:0, TF32 as the user's settings have it."""
    _need_cuda(state)
    torch = state.torch
    gen = _generator(torch)
    a, b = _randn(torch, gen, SIZE, SIZE), _randn(torch, gen, SIZE, SIZE)
    out = a.to(state.cuda_device) @ b.to(state.cuda_device)
    tf32 = bool(getattr(torch.backends.cuda.matmul, "allow_tf32", False))
    return measure(torch, [("matmul", out, a.double() @ b.double())], f"allow_tf32={tf32}")


def check_amp(state: State, dtype_name: str) -> Measured:
    """An FP32 matmul under torch.autocast("cuda", dtype)."""
    _need_cuda(state)
    if dtype_name == "bfloat16":
        _need_capability(state, (8, 0), "BF16")
    torch = state.torch
    gen = _generator(torch)
    a, b = _randn(torch, gen, SIZE, SIZE), _randn(torch, gen, SIZE, SIZE)
    with torch.autocast(state.cuda_device.split(":")[0], dtype=getattr(torch, dtype_name)):
        out = a.to(state.cuda_device) @ b.to(state.cuda_device)
    return measure(torch, [("matmul", out, a.double() @ b.double())], f"output {out.dtype}")


def check_torch_fp8(state: State, device: str) -> Measured:
    """torch._scaled_mm on e4m3 inputs with per-tensor (amax) float32 scales, bf16 output."""
    torch = state.torch
    e4m3 = torch.float8_e4m3fn  # AttributeError on torch < 2.1: the check fails with it
    scaled_mm = torch._scaled_mm
    gen = _generator(torch)
    a, w = _randn(torch, gen, SIZE, SIZE), _randn(torch, gen, SIZE, SIZE)
    fp8_max = float(torch.finfo(e4m3).max)
    scale_a, scale_w = float(a.abs().max()) / fp8_max, float(w.abs().max()) / fp8_max
    a8, w8 = (a / scale_a).to(e4m3), (w / scale_w).to(e4m3)
    given_a = scale_a * (FAULT_FACTOR if state.fault else 1.0)
    try:
        out = scaled_mm(
            a8.to(device),
            w8.to(device).t(),  # b must be column-major: the transpose of a contiguous (N, K)
            scale_a=torch.tensor(given_a, dtype=torch.float32, device=device),
            scale_b=torch.tensor(scale_w, dtype=torch.float32, device=device),
            out_dtype=torch.bfloat16,
        )
    except NotImplementedError as exc:
        if device == "cpu":
            raise Skip(f"this torch has no CPU kernel for _scaled_mm: {_describe(exc)}") from exc
        raise
    if isinstance(out, tuple):  # torch < 2.5 returned (out, amax)
        out = out[0]
    a_deq = a8.to(torch.float64) * scale_a
    w_deq = w8.to(torch.float64) * scale_w
    exact = a.double() @ w.double().t()
    quantized = a_deq @ w_deq.t()
    input_error = float((quantized - exact).norm() / exact.norm())
    note = f"e4m3 per-tensor scales, bf16 out; input quantization alone: rel {input_error:.3g}"
    if device == "cpu" and state.cuda_ok:
        note += "; cuda:0 is below compute capability 8.9, ran on the CPU"
    if state.fault:
        note += f"; fault injected: scale_a x{FAULT_FACTOR}"
    return measure(torch, [("scaled_mm", out, quantized)], note)


def _need_te(state: State) -> Any:
    if state.te is None:
        raise Skip(state.no_te or "Transformer Engine is not importable")
    _need_cuda(state)
    return state.te


def _te_linear_pass(
    state: State, dtype: Any, recipe: Any, passes: int
) -> tuple[Any, Any, Any, Any, Any]:
    """te.Linear forward and backward (under the recipe when given); the last pass's
    (output, input grad, input, weight, output grad), all on cuda:0."""
    torch, te = state.torch, state.te
    gen = _generator(torch)
    layer = te.Linear(SIZE, SIZE, bias=False, params_dtype=dtype)
    with torch.no_grad():
        layer.weight.copy_(_randn(torch, gen, SIZE, SIZE).to(dtype))
    x = _randn(torch, gen, SIZE, SIZE).to(device=state.cuda_device, dtype=dtype)
    grad = _randn(torch, gen, SIZE, SIZE).to(device=state.cuda_device, dtype=dtype)
    for _ in range(passes):
        inp = x.detach().clone().requires_grad_()
        with te_autocast(te, recipe) if recipe is not None else contextlib.nullcontext():
            out = layer(inp)
        out.backward(grad)
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
    gen = _generator(torch)
    layer = te.LayerNormLinear(SIZE, SIZE, eps=1e-5, bias=False, params_dtype=dtype)
    with torch.no_grad():
        layer.weight.copy_(_randn(torch, gen, SIZE, SIZE).to(dtype))
    x = _randn(torch, gen, SIZE, SIZE).to(device=state.cuda_device, dtype=dtype)
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
    recipes = _import_or_none("transformer_engine.common.recipe")
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


# --------------------------------------------------------------------------- loaded libraries


def loaded_libraries(maps: str = "/proc/self/maps") -> list[dict[str, Any]]:
    """One entry per distinct mapped file of the CUDA/TE library families."""
    try:
        with open(maps, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    found: dict[str, dict[str, Any]] = {}
    for line in lines:
        fields = line.split(None, 5)
        if len(fields) < 6:
            continue
        path = fields[5].strip()
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        base = os.path.basename(path)
        prefix = next((p for p in LIBRARY_PREFIXES if base.startswith(p)), None)
        if prefix is None or not path.startswith("/") or ".so" not in base or path in found:
            continue
        match = _SO_VERSION.search(base)
        found[path] = {
            "name": prefix[len("lib") :],
            "path": path,
            "version": match.group(1) if match else None,
            "origin": library_origin(path),
        }
    return list(found.values())


def library_origin(path: str) -> str:
    """pip, conda or system, from where the file lies."""
    if any(marker in path for marker in _PIP_MARKERS):
        return "pip"
    if any(marker in path for marker in _CONDA_MARKERS):
        return "conda"
    parent = os.path.dirname(path)
    while parent and parent != os.path.dirname(parent):
        if os.path.isdir(os.path.join(parent, "conda-meta")):
            return "conda"
        parent = os.path.dirname(parent)
    return "system"


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="te-doctor smoke test (run by te-doctor)")
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    args = parser.parse_args(argv)
    result = Result(args.out)
    state = State(fault=os.environ.get(FAULT_ENV, "") == WRONG_SCALE)
    completed = False
    try:
        run_stages(result, state)
        completed = True
    except Exception as exc:  # noqa: BLE001 -- a bug here still leaves a readable result
        result.fail(result.stage or "import-torch", exc)
        traceback.print_exc()
    finally:
        result.data["loaded_libraries"] = loaded_libraries()
        if completed:
            result.data["stage"], result.data["finished"] = "done", True
        result.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
