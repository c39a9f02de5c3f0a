"""Lookups over the installed distributions, shared by the probes that need them."""

from __future__ import annotations

import re

from te_doctor.probes.context import InstalledDist, ProbeContext

CUDA_SUFFIXES = ("", "-cu11", "-cu12", "-cu13")
_SEPARATORS = re.compile(r"[-_.]+")


def canonicalize_name(name: str) -> str:
    """A distribution's normalized name (PEP 503, as ``packaging.utils.canonicalize_name``;
    packaging's module is not imported by the probes: it pulls in ``packaging.tags``)."""
    return _SEPARATORS.sub("-", name).lower()


def all_dists(ctx: ProbeContext) -> tuple[InstalledDist, ...]:
    """Every distribution on the interpreter's search path, read once per run."""
    return ctx.cached("distributions", lambda: tuple(ctx.distributions()))


def find_dists(ctx: ProbeContext, name: str) -> list[InstalledDist]:
    """All copies of one distribution (several when it is installed twice), first on path first."""
    wanted = canonicalize_name(name)
    return [d for d in all_dists(ctx) if not d.error and canonicalize_name(d.name) == wanted]


def dist_version(
    ctx: ProbeContext, base: str, location: str, major: str = ""
) -> tuple[str, str] | None:
    """(name, version) of ``base`` or its ``-cu12``/``-cu13`` variant installed in ``location``.

    ``major`` (the library's soname major, ``12``) puts that variant first, so a CUDA 12 file is
    not given the version of the CUDA 13 wheel (``nvidia-cublas``) installed beside it.
    """
    preferred = f"-cu{major}" if major else ""
    for suffix in sorted(CUDA_SUFFIXES, key=lambda s: s != preferred):
        for dist in find_dists(ctx, base + suffix):
            if dist.location.rstrip("/") == location.rstrip("/"):
                return dist.name, dist.version
    return None
