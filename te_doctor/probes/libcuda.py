"""Which ``libcuda.so.1`` (the user-space CUDA driver) a process would load, and its version.

The CUDA runtime dlopens ``libcuda.so.1``; the loader searches ``LD_LIBRARY_PATH`` before its
cache, so a CUDA forward-compatibility copy (``cuda-compat-X-Y`` installs
``/usr/local/cuda-X.Y/compat/libcuda.so.<driver version>``; NGC containers put that directory on
``LD_LIBRARY_PATH``) wins over the driver's own. The version is the driver release the file was
built from, read from its real file name (``libcuda.so.580.65.06``).
"""

from __future__ import annotations

import re

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.loader import loader_path, search
from te_doctor.snapshot.facts import Fact, Version

SOURCE = "libcuda"
_DRIVER_VERSION = re.compile(r"^libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$")


def probe_libcuda(ctx: ProbeContext) -> tuple[Fact[str], Fact[Version]]:
    """(path, version) of the ``libcuda.so.1`` the loader picks; absent when there is none."""
    found = search(ctx, "libcuda.so.1", None, loader_path(ctx))
    if found is None:
        none = "no libcuda.so.1 on LD_LIBRARY_PATH, in the loader cache or the default directories"
        return Fact.absent(none, SOURCE), Fact.absent(none, SOURCE)
    path = Fact.of(found.path, f"{SOURCE}:{found.how}")
    real = ctx.realpath(found.path).rsplit("/", 1)[1]
    match = _DRIVER_VERSION.match(real)
    if match is None:
        return path, Fact.unknown(f"no driver version in the file name {real}", SOURCE)
    return path, Fact.of(Version(match.group(1)), f"{SOURCE}:{found.path} -> {real}")
