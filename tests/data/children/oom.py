"""Stand-in smoke child: the GEMM stage ran out of GPU memory and says so."""

import json
import sys

out = sys.argv[sys.argv.index("--out") + 1]
json.dump(
    {
        "format": 1,
        "finished": True,
        "stage": "gemm",
        "error": {
            "stage": "gemm",
            "type": "OutOfMemoryError",
            "text": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
        },
    },
    open(out, "w"),
)
