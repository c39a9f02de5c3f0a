"""Stand-in smoke child: records that it entered the GEMM stage, then dies of SIGSEGV."""

import json
import os
import signal
import sys

out = sys.argv[sys.argv.index("--out") + 1]
json.dump({"format": 1, "finished": False, "stage": "gemm"}, open(out, "w"))
os.kill(os.getpid(), signal.SIGSEGV)
