"""Transformer Engine probe: which TE pieces are installed and what their binaries need.

TE ships as a metapackage, a core library built for one CUDA major (``-cu12``/``-cu13``) and
framework extensions compiled per machine. What TE's import opens itself, and the core
library's DT_NEEDED entries, are resolved as ``import torch; import transformer_engine`` would
(``te_doctor.probes.process``), so a missing ``libcudnn.so.9`` shows up before anyone imports TE.
"""

from __future__ import annotations

import re

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.libraries import architectures_fact
from te_doctor.probes.packages_index import find_dists
from te_doctor.probes.process import ProcessModel, process_model, te_core_paths
from te_doctor.snapshot.facts import Fact, Version
from te_doctor.snapshot.model import NeededLibrary, TransformerEngineFacts

SOURCE = "transformer_engine"


def probe_transformer_engine(ctx: ProbeContext) -> TransformerEngineFacts:
    """Collect TE facts."""
    meta = find_dists(ctx, "transformer-engine")
    cores = [
        (n, find_dists(ctx, n)) for n in ("transformer-engine-cu12", "transformer-engine-cu13")
    ]
    core_names = [name for name, dists in cores if dists]
    sites = [p for p in ctx.python.sys_path if p.endswith("-packages")]
    core_libs = te_core_paths(ctx)
    model = process_model(ctx)
    needed = _needed(model)
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
        loaded_at_import=_loaded_at_import(model),
        preloads_pip_cuda=_preloads_pip(model, version),
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


def _needed(model: ProcessModel) -> tuple[NeededLibrary, ...]:
    """The core's DT_NEEDED entries, bound after ``import torch`` and TE's own loads."""
    core = model.te_core
    if core is None:
        return ()
    if core.problem:
        return (NeededLibrary(name="?", resolved=Fact.unknown(core.problem, SOURCE)),)
    return tuple(
        NeededLibrary(
            name=b.name,
            resolved=(
                Fact.of(b.loaded.path, f"{SOURCE}:{b.how}")
                if b.loaded
                else Fact.absent(
                    f"not found by the loader (DT_RPATH/DT_RUNPATH of the core, LD_LIBRARY_PATH, "
                    f"the loader cache, the default directories) and not loaded before it: "
                    f"importing TE fails with '{b.name}: cannot open shared object file'",
                    SOURCE,
                )
            ),
        )
        for b in core.bindings
    )


def _loaded_at_import(model: ProcessModel) -> tuple[NeededLibrary, ...]:
    """What TE's import opens itself (``transformer_engine/common``), in its order."""
    imported = model.te_import
    return tuple(
        NeededLibrary(
            name=load.library,
            resolved=(
                Fact.of(load.binding.loaded.path, f"{SOURCE}:{load.how}")
                if load.binding and load.binding.loaded
                else Fact.absent(f"importing TE fails: {load.failure}", SOURCE)
            ),
        )
        for load in (imported.loads if imported else ())
    )


def _preloads_pip(model: ProcessModel, version: Fact[Version]) -> Fact[bool]:
    imported = model.te_import
    if imported is None:
        if version.value is None:
            return Fact(version.state, None, version.reason, SOURCE)
        return Fact.unknown(f"cannot tell the TE release from {version.value!r}", SOURCE)
    if imported.preloads_pip is None:
        return Fact.absent(
            f"TE {version.value} has no step that preloads the pip cuBLAS/cudart (TE 2.4 added it)",
            SOURCE,
        )
    if imported.preloads_pip:
        return Fact.of(True, SOURCE)
    return Fact.of(False, f"{SOURCE}:NVRTC or cuRAND came from the system, not from pip")


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
