"""Finishes gemms, then hangs in mlp (a wedged GPU kernel)."""

import time

from _common import component, write

write(running="mlp", components=[component("gemms", 0.01)])
time.sleep(600)
