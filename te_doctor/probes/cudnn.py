"""cuDNN probe: every libcudnn copy (pip wheel, conda, system), the one in use, the header.

Several copies with different versions are a classic cause of
``CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED``, so all of them are reported. ``version`` is the copy
Transformer Engine's cuDNN calls resolve to (``te_doctor.probes.process``).
"""

from __future__ import annotations

import re

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.libraries import first_copy_version, library_index, toolkit_roots
from te_doctor.probes.process import in_use
from te_doctor.snapshot.facts import Fact, Version
from te_doctor.snapshot.model import CudnnFacts

SOURCE = "cudnn"
_DEFINE = re.compile(r"#define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)")


def probe_cudnn(ctx: ProbeContext) -> CudnnFacts:
    """Collect cuDNN facts."""
    copies = library_index(ctx).of("cudnn")
    versions = sorted({c.version.value for c in copies if c.version.value is not None})
    used = in_use(
        ctx, ("te-loader", "libcudnn"), ("te-core", "libcudnn.so."), ("torch", "libcudnn.so.")
    )
    return CudnnFacts(
        version=used or first_copy_version(copies, "cuDNN (libcudnn)"),
        header_version=_header_version(ctx),
        copies=copies,
        distinct_versions=tuple(versions),
    )


def header_dirs(ctx: ProbeContext) -> list[str]:
    """Include directories that may hold ``cudnn_version.h``, most specific first."""
    dirs = [ctx.env.get(var, "").rstrip("/") + "/include" for var in ("CUDNN_PATH", "CUDNN_HOME")]
    dirs += [root + "/include" for root in toolkit_roots(ctx)]
    dirs += ["/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu"]
    for site in ctx.python.sys_path:
        if site.endswith("-packages"):
            dirs += ctx.glob(site, "nvidia/cudnn/include") + ctx.glob(site, "nvidia/cu*/include")
    return [d for d in dirs if d != "/include"]


def _header_version(ctx: ProbeContext) -> Fact[Version]:
    for directory in header_dirs(ctx):
        path = directory + "/cudnn_version.h"
        try:
            text = ctx.read_text(path)
        except OSError:
            continue
        parts = dict(_DEFINE.findall(text))
        if {"MAJOR", "MINOR", "PATCHLEVEL"} <= parts.keys():
            version = f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCHLEVEL']}"
            return Fact.of(Version(version), f"{SOURCE}:{path}")
        return Fact.unknown(f"{path} has no CUDNN_MAJOR/MINOR/PATCHLEVEL defines", SOURCE)
    return Fact.absent(
        "no cudnn_version.h in CUDNN_PATH, CUDA toolkits, /usr/include or pip wheels", SOURCE
    )
