"""A probe command for the Slurm fleet test: task 2 wedges (like a node whose NVML call never
returns); every other task runs the real probe."""

import os
import sys
import time

if os.environ.get("SLURM_PROCID") == "2" or os.environ.get("SLURM_ARRAY_TASK_ID") == "2":
    time.sleep(600)
os.execv(sys.executable, [sys.executable, "-m", "te_doctor", "probe", "--format", "json"])
