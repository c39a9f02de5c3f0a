"""Stand-in smoke child: records that it entered the GEMM stage, then dies of SIGSEGV."""

import json
import os
import signal
import sys

out = sys.argv[sys.argv.index("--out") + 1]
json.dump(
    {
        "format": 1,
        "finished": False,
        "stage": "gemm",
        "running_check": "te-fp8-current",
        "torch": {"cuda_available": True, "capability": "9.0", "cudnn": "9.1.0"},
    },
    open(out, "w"),
)
os.kill(os.getpid(), signal.SIGSEGV)
