"""Build probe: what compiling TE's framework extension from source would find here.

``transformer_engine_torch`` and ``transformer_engine_jax`` are published as sdists only, so
``pip install transformer_engine[pytorch]`` compiles C++/CUDA on this machine. This probe
records the tools and headers that build needs (nvcc itself is the cuda probe's toolkit).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial

from te_doctor.background import in_background
from te_doctor.probes.context import ProbeContext
from te_doctor.probes.cudnn import header_dirs
from te_doctor.probes.libraries import toolkit_roots
from te_doctor.snapshot.facts import Fact, Version
from te_doctor.snapshot.model import BuildFacts

SOURCE = "build"
TOOL_TIMEOUT_S = 5.0
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


def probe_build(ctx: ProbeContext) -> BuildFacts:
    """Collect build-prerequisite facts."""
    cxx_name = ctx.env.get("CXX") or next(
        (name for name in ("c++", "g++", "clang++") if ctx.which(name)), "c++"
    )
    cxx_version, cmake_version, ninja_version = _versions(ctx, (cxx_name, "cmake", "ninja"))
    return BuildFacts(
        cxx=_found(ctx, cxx_name),
        cxx_version=cxx_version,
        cmake_version=cmake_version,
        ninja_version=ninja_version,
        python_headers=_python_headers(ctx),
        cuda_headers=_header(
            ctx, "cuda_runtime_api.h", [r + "/include" for r in toolkit_roots(ctx)]
        ),
        cudnn_headers=_header(ctx, "cudnn.h", header_dirs(ctx)),
    )


def _found(ctx: ProbeContext, name: str) -> Fact[str]:
    path = name if name.startswith("/") and ctx.exists(name) else ctx.which(name)
    if path:
        return Fact.of(path, f"{SOURCE}:PATH")
    return Fact.absent(f"no {name} on PATH (set CXX or install a C++ compiler)", SOURCE)


def _versions(ctx: ProbeContext, tools: Sequence[str]) -> list[Fact[Version]]:
    """Each tool's ``--version``, asked of all at once (cmake alone takes about 20 ms)."""
    waits = [
        in_background(partial(_tool_version, ctx, tool, "--version"), f"te-doctor-{tool}")
        for tool in tools
    ]
    return [wait() for wait in waits]


def _tool_version(ctx: ProbeContext, name: str, flag: str) -> Fact[Version]:
    path = name if name.startswith("/") else ctx.which(name)
    if not path:
        return Fact.absent(f"{name} is not on PATH", SOURCE)
    result = ctx.run([path, flag], timeout=TOOL_TIMEOUT_S)
    if not result.ok:
        return Fact.unknown(result.describe(), SOURCE)
    match = _VERSION.search(result.stdout.splitlines()[0] if result.stdout else "")
    if not match:
        return Fact.unknown(f"{name} {flag}: no version in its output", SOURCE)
    return Fact.of(Version(match.group(1)), f"{SOURCE}:{name} {flag}")


def _python_headers(ctx: ProbeContext) -> Fact[bool]:
    """Python.h for the diagnosed interpreter (include/pythonX.Y under its base prefix)."""
    major_minor = ".".join(ctx.python.version.split(".")[:2])
    candidates = [
        f"{prefix.rstrip('/')}/include/python{major_minor}{suffix}/Python.h"
        for prefix in dict.fromkeys(
            (ctx.python.base_prefix, ctx.python.prefix, "/usr", "/usr/local")
        )
        for suffix in ("", "t")
    ]
    found = next((path for path in candidates if ctx.exists(path)), None)
    if found:
        return Fact.of(True, f"{SOURCE}:{found}")
    return Fact.of(False, f"{SOURCE}:no Python.h under {ctx.python.base_prefix}/include")


def _header(ctx: ProbeContext, name: str, directories: list[str]) -> Fact[bool]:
    found = next((d for d in directories if ctx.exists(f"{d}/{name}")), None)
    if found:
        return Fact.of(True, f"{SOURCE}:{found}/{name}")
    return Fact.of(False, f"{SOURCE}:no {name} in {', '.join(directories) or 'any include dir'}")
