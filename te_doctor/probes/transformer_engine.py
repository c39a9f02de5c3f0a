"""Transformer Engine probe: which TE pieces are installed and what their binaries need.

TE ships as a metapackage, a core library built for one CUDA major (``-cu12``/``-cu13``) and
framework extensions compiled per machine. The core library's DT_NEEDED entries are resolved
the way the loader (and TE's own preloading from pip wheels) would, so a missing
``libcudnn.so.9`` shows up here before anyone imports TE.
"""

from __future__ import annotations

import re

from te_doctor.facts import Fact, Version
from te_doctor.probes.context import ProbeContext
from te_doctor.probes.elf import ElfError, read_dynamic
from te_doctor.probes.libraries import architectures_fact, library_index
from te_doctor.probes.packages_index import find_dists
from te_doctor.snapshot import NeededLibrary, TransformerEngineFacts

SOURCE = "transformer_engine"
#: Libraries TE 2.x loads by itself at import time (PyPI 2.20.2 transformer_engine/common).
DLOPENED_AT_IMPORT = ("cudnn", "nvrtc", "curand")
#: C and C++ runtime libraries every Linux process has; not worth reporting.
_BASE_RUNTIME = re.compile(
    r"^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux[-\w]*)\.so"
)


def probe_transformer_engine(ctx: ProbeContext) -> TransformerEngineFacts:
    """Collect TE facts."""
    meta = find_dists(ctx, "transformer-engine")
    cores = [
        (n, find_dists(ctx, n)) for n in ("transformer-engine-cu12", "transformer-engine-cu13")
    ]
    core_names = [name for name, dists in cores if dists]
    sites = [p for p in ctx.python.sys_path if p.endswith("-packages")]
    core_libs = _find(
        ctx,
        sites,
        (
            "transformer_engine/libtransformer_engine*.so",
            "transformer_engine/wheel_lib/libtransformer_engine*.so",
            "libtransformer_engine*.so",
        ),
    )
    needed = _needed(ctx, core_libs[0]) if core_libs else ()
    core_names = _order_cores(core_names, needed)
    not_installed = "Transformer Engine is not installed for this interpreter"
    if meta:
        version: Fact[Version] = Fact.of(Version(meta[0].version), f"{SOURCE}:transformer-engine")
    elif core_names:
        core = find_dists(ctx, core_names[0])[0]
        version = Fact.of(Version(core.version), f"{SOURCE}:{core_names[0]}")
    else:
        version = Fact.absent(not_installed, SOURCE)
    return TransformerEngineFacts(
        version=version,
        core_package=(
            Fact.of(core_names[0], SOURCE)
            if core_names
            else Fact.absent("no transformer-engine-cu12/-cu13 core package", SOURCE)
        ),
        core_cuda_major=_cuda_major(core_names, needed),
        core_library=(
            Fact.of(core_libs[0], SOURCE)
            if core_libs
            else Fact.absent("no libtransformer_engine.so in any site-packages", SOURCE)
        ),
        core_library_copies=tuple(core_libs),
        core_cuda_archs=(
            architectures_fact(ctx, core_libs[0], SOURCE)
            if core_libs
            else Fact.absent("no TE core library", SOURCE)
        ),
        torch_extension=_extension(ctx, sites, "transformer_engine_torch", "PyTorch"),
        jax_extension=_extension(ctx, sites, "transformer_engine_jax", "JAX"),
        needed_libraries=needed,
        loaded_at_import=_loaded_at_import(ctx) if (meta or core_names or core_libs) else (),
    )


def _find(ctx: ProbeContext, sites: list[str], patterns: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for site in sites:
        for pattern in patterns:
            found.extend(p for p in ctx.glob(site, pattern) if p not in found)
    return found


def _extension(ctx: ProbeContext, sites: list[str], module: str, framework: str) -> Fact[str]:
    found = _find(ctx, sites, (f"{module}*.so", f"transformer_engine/{module}*.so"))
    if found:
        return Fact.of(found[0], SOURCE)
    return Fact.absent(f"no {module}*.so: TE's {framework} extension is not installed", SOURCE)


def _needed(ctx: ProbeContext, library: str) -> tuple[NeededLibrary, ...]:
    try:
        info = read_dynamic(ctx.path(library))
    except (OSError, ElfError) as exc:
        return (
            NeededLibrary(name="?", resolved=Fact.unknown(f"cannot read {library}: {exc}", SOURCE)),
        )
    index = library_index(ctx)
    origin_dir = library.rsplit("/", 1)[0]
    result = []
    for soname in info.needed:
        if _BASE_RUNTIME.match(soname):
            continue
        local = [
            d.replace("$ORIGIN", origin_dir) + "/" + soname for d in (*info.rpath, *info.runpath)
        ]
        hit = next((p for p in local if ctx.exists(p)), None)
        found = (hit, "RUNPATH") if hit else index.resolve(soname)
        result.append(
            NeededLibrary(
                name=soname,
                resolved=(
                    Fact.of(found[0], f"{SOURCE}:{found[1]}")
                    if found
                    else Fact.absent(
                        "not found in pip nvidia-* wheels, conda, LD_LIBRARY_PATH, CUDA toolkits "
                        "or the system loader cache",
                        SOURCE,
                    )
                ),
            )
        )
    return tuple(result)


def _loaded_at_import(ctx: ProbeContext) -> tuple[NeededLibrary, ...]:
    """Libraries TE opens itself when imported (``_load_cuda_library``), not via DT_NEEDED."""
    index = library_index(ctx)
    result = []
    for family in DLOPENED_AT_IMPORT:
        copies = index.of(family)
        resolved: Fact[str] = (
            Fact.of(copies[0].path, f"{SOURCE}:{copies[0].origin}")
            if copies
            else Fact.absent(
                f"no lib{family} in CUDNN_HOME/CUDNN_PATH, pip nvidia-* wheels, conda, "
                "LD_LIBRARY_PATH, CUDA toolkits or the system loader cache: "
                f"importing TE fails with '{family} shared object not found'",
                SOURCE,
            )
        )
        result.append(NeededLibrary(name=f"lib{family}", resolved=resolved))
    return tuple(result)


def _linked_cuda_major(needed: tuple[NeededLibrary, ...]) -> int | None:
    """The CUDA major of the libcudart the core library links (what really decides)."""
    for lib in needed:
        match = re.fullmatch(r"libcudart\.so\.(\d+)", lib.name)
        if match:
            return int(match.group(1))
    return None


def _cuda_major(core_names: list[str], needed: tuple[NeededLibrary, ...]) -> Fact[int]:
    linked = _linked_cuda_major(needed)
    if linked is not None:
        return Fact.of(linked, f"{SOURCE}:core library links libcudart.so.{linked}")
    if core_names:
        return Fact.of(int(core_names[0][-2:]), f"{SOURCE}:{core_names[0]}")
    return Fact.absent("no TE core package or core library to read it from", SOURCE)


def _order_cores(core_names: list[str], needed: tuple[NeededLibrary, ...]) -> list[str]:
    """Put the core package matching the library actually on disk first."""
    linked = _linked_cuda_major(needed)
    return sorted(core_names, key=lambda name: name[-2:] != str(linked))
