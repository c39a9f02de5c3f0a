"""Stand-in smoke child: an FP8 GEMM ran but its numbers are wrong (a bad scale)."""

import json
import sys

out = sys.argv[sys.argv.index("--out") + 1]
json.dump(
    {
        "format": 1,
        "finished": True,
        "stage": "done",
        "checks": [
            {
                "name": "torch-fp8",
                "device": "cpu",
                "status": "numerics",
                "max_abs_error": 3.1,
                "rel_error": 0.5,
                "tolerance": 0.08,
                "detail": "relative error 0.5 > tolerance 0.08",
                "duration_ms": 2.0,
            }
        ],
        "error": None,
    },
    open(out, "w"),
)
