"""Stand-in smoke child: a complete, successful run (prints junk to stdout too)."""

import json
import sys

out = sys.argv[sys.argv.index("--out") + 1]
print("NCCL INFO junk that a real CUDA library prints on stdout")
json.dump(
    {
        "format": 1,
        "finished": True,
        "stage": "done",
        "torch": {"cuda_available": False, "capability": None, "cudnn": None},
        "te_support": [],
        "checks": [
            {
                "name": "cpu",
                "device": "cpu",
                "status": "ok",
                "max_abs_error": 1e-7,
                "rel_error": 2e-8,
                "tolerance": 1e-5,
                "detail": "",
                "duration_ms": 1.0,
            },
            {
                "name": "torch-fp8",
                "device": "cpu",
                "status": "ok",
                "max_abs_error": 0.05,
                "rel_error": 0.021,
                "tolerance": 0.08,
                "detail": "",
                "duration_ms": 2.0,
            },
            {
                "name": "te-bf16",
                "device": "",
                "status": "skipped",
                "max_abs_error": None,
                "rel_error": None,
                "tolerance": 0.02,
                "detail": "no CUDA device",
                "duration_ms": 0,
            },
        ],
        "loaded_libraries": [],
        "error": None,
    },
    open(out, "w"),
)
