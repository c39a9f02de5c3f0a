"""Finishes gemms, then dies of SIGSEGV in mlp (a crashing kernel)."""

import os
import signal

from _common import component, write

write(running="mlp", components=[component("gemms", 0.01)])
os.kill(os.getpid(), signal.SIGSEGV)
