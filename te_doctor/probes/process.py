"""Which copy of each CUDA library a TE training process really uses, modelled once per run.

The usual program does ``import torch`` and then ``import transformer_engine.pytorch`` (TE's
README snippets, ``rules/paths.toml`` and te-doctor's own smoke child), so:

1. ``libtorch_cuda.so``'s DT_NEEDED libraries are bound through its own DT_RPATH/DT_RUNPATH
   (the pip ``nvidia/*/lib`` folders of a PyPI wheel), ``LD_LIBRARY_PATH``, the loader cache;
2. TE's import opens cuDNN, NVRTC, cuRAND (and, by release, the pip cuBLAS/cudart) by path
   with ``RTLD_GLOBAL`` (``te_doctor.probes.te_import``): a different file than torch's is a
   second copy in the process;
3. TE's core library binds each DT_NEEDED soname to the first object already loaded with that
   SONAME (torch's, else TE's loader's), else through the loader's search.

TE's own calls into cuDNN (``cudnnGetVersion`` in TE 2.20's import check included) resolve
through the global scope, where the copy TE's loader opened with ``RTLD_GLOBAL`` comes before
torch's (loaded ``RTLD_LOCAL`` as a dependency of ``torch._C``): that copy is "TE's cuDNN".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.libraries import version_of
from te_doctor.probes.loader import Binding, Process, loader_path, requester_for
from te_doctor.probes.packages_index import find_dists
from te_doctor.probes.te_import import TeImport, te_import, te_release
from te_doctor.snapshot.facts import Fact, Version

SOURCE = "process"
#: Where the core library of each kind of TE install lives, relative to a site directory.
TE_CORE_PATTERNS = (
    "transformer_engine/libtransformer_engine*.so",
    "transformer_engine/wheel_lib/libtransformer_engine*.so",
    "libtransformer_engine*.so",
)
#: C and C++ runtime libraries every Linux process has; not worth reporting.
BASE_RUNTIME = re.compile(
    r"^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux[-\w]*)\.so"
)


@dataclass(frozen=True, slots=True)
class Linked:
    """The libraries one binary bound, or why they could not be read (``problem``)."""

    binary: str
    bindings: tuple[Binding, ...]
    problem: str

    def of(self, prefix: str) -> Binding | None:
        """The binding of the first DT_NEEDED entry starting with ``prefix`` (``libcudnn.so.``)."""
        return next((b for b in self.bindings if b.name.startswith(prefix)), None)


@dataclass(frozen=True, slots=True)
class ProcessModel:
    """What ``import torch; import transformer_engine.pytorch`` would load, step by step."""

    torch: Linked | None
    te_import: TeImport | None
    te_core: Linked | None


def process_model(ctx: ProbeContext) -> ProcessModel:
    """The model for this run, built once and shared by the probes."""
    return ctx.cached("process-model", lambda: _build(ctx))


def te_core_paths(ctx: ProbeContext) -> list[str]:
    """Every ``libtransformer_engine.so`` in the interpreter's site directories."""
    found: list[str] = []
    for site in (p for p in ctx.python.sys_path if p.endswith("-packages")):
        for pattern in TE_CORE_PATTERNS:
            found.extend(p for p in ctx.glob(site, pattern) if p not in found)
    return found


def _build(ctx: ProbeContext) -> ProcessModel:
    process = Process(ctx, loader_path(ctx))
    torch = _link(ctx, process, _libtorch_cuda(ctx), "PyTorch (libtorch_cuda.so)")
    version = _te_version(ctx)
    cores = te_core_paths(ctx)
    if version is None and not cores:
        return ProcessModel(torch, None, None)
    release = te_release(version)
    imported = te_import(ctx, release, process) if release else None
    core = _link(ctx, process, cores[0], "Transformer Engine's core") if cores else None
    return ProcessModel(torch, imported, core)


def _libtorch_cuda(ctx: ProbeContext) -> str | None:
    dists = find_dists(ctx, "torch")
    if not dists:
        return None
    path = dists[0].location.rstrip("/") + "/torch/lib/libtorch_cuda.so"
    return path if ctx.exists(path) else None


def _te_version(ctx: ProbeContext) -> str | None:
    for name in ("transformer-engine", "transformer-engine-cu12", "transformer-engine-cu13"):
        dists = find_dists(ctx, name)
        if dists:
            return dists[0].version
    return None


def _link(ctx: ProbeContext, process: Process, binary: str | None, by: str) -> Linked | None:
    if binary is None:
        return None
    requester = requester_for(ctx, binary)
    if isinstance(requester, str):
        return Linked(binary, (), requester)
    names = [n for n in requester.info.needed if not BASE_RUNTIME.match(n)]
    return Linked(binary, process.link(requester, names, by), "")


def binding_version(ctx: ProbeContext, binding: Binding, role: str) -> Fact[Version]:
    """The version of the file a binding got, its source saying whose copy and how it came."""
    loaded = binding.loaded
    if loaded is None:
        return Fact.absent(f"{binding.name} ({role}) is not found by the loader", SOURCE)
    version = version_of(ctx, loaded.path)
    source = f"{SOURCE}:{role}, {binding.how}: {loaded.path}"
    if version.value is None:
        return Fact(version.state, None, f"{loaded.path}: {version.reason}", source)
    return Fact.of(version.value, source)


def in_use(ctx: ProbeContext, *steps: tuple[str, str]) -> Fact[Version] | None:
    """The version of the first copy found along ``steps``, or None when none is loaded.

    A step is ``("te-loader", "libnvrtc")`` (what TE's import opened), ``("te-core",
    "libcublasLt.so.")`` or ``("torch", "libcudnn.so.")`` (a DT_NEEDED entry's binding).
    """
    model = process_model(ctx)
    for where, name in steps:
        found = _found(model, where, name)
        if found is not None:
            binding, role = found
            return binding_version(ctx, binding, role)
    return None


def _found(model: ProcessModel, where: str, name: str) -> tuple[Binding, str] | None:
    if where == "te-loader" and model.te_import is not None:
        for load in model.te_import.loads:
            if load.library == name and load.binding is not None:
                return load.binding, f"TE's import-time loader ({load.how})"
        return None
    linked = {"te-core": model.te_core, "torch": model.torch}.get(where)
    binding = linked.of(name) if linked else None
    if binding is None or binding.loaded is None:
        return None
    role = "TE's core library" if where == "te-core" else "PyTorch's libtorch_cuda.so"
    return binding, role
