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
Warm-up steps run first and are kept apart (``warmup_s``): at least ``warmup`` of them, and on
until the last three step times agree within 5% (kernel selection, JIT, caches and, for
delayed scaling, the amax history have settled) or a cap (three times ``warmup``, at least
``warmup`` + 10, at most half the budget); the reason says when it never settled. On CUDA each
step is timed with a pair of CUDA events after a device synchronize; on the CPU with
``time.perf_counter``. When the warm-up shows that ``repeats`` steps would not fit in
``budget_s``, fewer are taken (the reason says so); no sample is dropped.
On the CPU one GEMM of 256x256x256 in the path's precision is timed first,
and a component whose predicted step exceeds the budget is reported "too-slow" unmeasured.
``rel_error`` is ``||out - ref||_F / ||ref||_F`` of the forward output against the same
module in FP32 (TF32 off, no autocast, no FP8), from the same weights and inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import tempfile
import traceback
from typing import Any

from _te_doctor_bench_measure import measure_component
from _te_doctor_bench_path import DETAIL_LIMIT, PATHS, Path, Skip

FORMAT = 1


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
