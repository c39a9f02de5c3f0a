"""Stand-in smoke child: torch works, importing TE fails (the real failure on a CPU box)."""

import json
import sys

out = sys.argv[sys.argv.index("--out") + 1]
json.dump(
    {
        "format": 1,
        "finished": True,
        "stage": "done",
        "torch": {"cuda_available": False, "capability": None, "cudnn": None},
        "checks": [
            {
                "name": "cpu",
                "device": "cpu",
                "status": "ok",
                "max_abs_error": 0.0,
                "rel_error": 0.0,
                "tolerance": 1e-5,
                "detail": "",
                "duration_ms": 1.0,
            }
        ],
        "error": {
            "stage": "import-te",
            "type": "RuntimeError",
            "text": "Traceback ...\nRuntimeError: cudnn shared object not found.",
        },
    },
    open(out, "w"),
)
