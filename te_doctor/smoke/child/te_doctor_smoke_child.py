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

Fault injection (tests only): with ``TE_DOCTOR_SMOKE_FAULT=wrong-scale`` in the environment,
torch-fp8 hands ``_scaled_mm`` a ``scale_a`` 1.5 times too large and the TE FP8/NVFP4 checks
scale their forward output by 1.5, so their status must come out "numerics"; this proves the
error check can fail.

Loaded libraries: at the end (also after a failure) ``/proc/self/maps`` lists which copies of
cuDNN, cuBLAS(Lt), cudart, NCCL, NVRTC, cuRAND and libtransformer_engine the process mapped.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import sys
import traceback

from _te_doctor_smoke_gemm import stage_gemm
from _te_doctor_smoke_libraries import loaded_libraries
from _te_doctor_smoke_record import Result, State
from _te_doctor_smoke_stages import (
    stage_device,
    stage_import_te,
    stage_import_torch,
    stage_te_support,
)

FAULT_ENV = "TE_DOCTOR_SMOKE_FAULT"
WRONG_SCALE = "wrong-scale"


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="te-doctor smoke test (run by te-doctor)")
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    args = parser.parse_args(argv)
    faulthandler.enable()  # a segfault in torch or TE prints the Python stack it happened in
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
    CODE = main()  # the result file is written and closed by now
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip the interpreter's teardown: with torch loaded it takes about 0.4 s and changes
    # nothing the parent reads.
    os._exit(CODE)
