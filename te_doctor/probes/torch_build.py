"""Torch probe: how the installed PyTorch was built, read from ``torch/version.py`` as text,
and the CUDA libraries its ``libtorch_cuda.so`` binds (``te_doctor.probes.process``).

torch is never imported here: a broken or slow torch import must not take te-doctor with it.
"""

from __future__ import annotations

import re

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.libraries import architectures_fact
from te_doctor.probes.packages_index import find_dists
from te_doctor.probes.process import binding_version, process_model
from te_doctor.snapshot.facts import Fact, FactState, Version
from te_doctor.snapshot.model import NeededLibrary, TorchFacts

SOURCE = "torch"
_ASSIGNMENT = re.compile(r"^(\w+)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.MULTILINE)
_STRING = re.compile(r"""^(['"])(.*)\1$""")
_NO_VALUE = object()
#: The libraries whose binding is recorded: fact name -> DT_NEEDED prefix.
LINKED = {
    "cudnn_version": "libcudnn.so.",
    "cublas_version": "libcublasLt.so.",
    "runtime_version": "libcudart.so.",
    "nvrtc_version": "libnvrtc.so.",
}
_RECORDED = re.compile(r"^lib(cudart|cublas|cublasLt|cudnn[a-z_]*|nvrtc|nccl|curand)\.so")


def probe_torch(ctx: ProbeContext) -> TorchFacts:
    """Collect torch build facts."""
    dists = find_dists(ctx, "torch")
    if not dists:
        gone = "torch is not installed for this interpreter"
        return TorchFacts(
            version=Fact.absent(gone, SOURCE),
            cuda_version=Fact.absent(gone, SOURCE),
            hip_version=Fact.absent(gone, SOURCE),
            git_version=Fact.absent(gone, SOURCE),
            debug=Fact.absent(gone, SOURCE),
            cuda_arch_list=Fact.absent(gone, SOURCE),
            linked_libraries=(),
            **{name: Fact.absent(gone, SOURCE) for name in LINKED},
        )
    version_file = dists[0].location.rstrip("/") + "/torch/version.py"
    source = f"{SOURCE}:{version_file}"
    try:
        values = _parse_assignments(ctx.read_text(version_file))
    except OSError as exc:
        values = {}
        problem = f"cannot read {version_file}: {exc.strerror or exc}"
    else:
        problem = f"{version_file} does not define it"

    def field(name: str, absent_when_none: str) -> Fact[str]:
        value = values.get(name, _NO_VALUE)
        if value is _NO_VALUE:
            return Fact.unknown(problem, source)
        if value is None:
            return Fact.absent(absent_when_none, source)
        return Fact.of(str(value), source)

    cuda = field("cuda", "torch is a CPU-only or non-CUDA build (torch.version.cuda is None)")
    raw_debug = values.get("debug", _NO_VALUE)
    linked, versions = _linked(ctx, cuda)
    return TorchFacts(
        version=_as_version(field("__version__", "torch.__version__ is None")),
        cuda_version=_as_version(cuda),
        hip_version=_as_version(field("hip", "not a ROCm build (torch.version.hip is None)")),
        git_version=field("git_version", "torch.version.git_version is None"),
        debug=(
            Fact.of(raw_debug, source)
            if isinstance(raw_debug, bool)
            else Fact.unknown(problem, source)
        ),
        cuda_arch_list=(
            Fact.absent("a CPU-only build has no CUDA architectures", source)
            if cuda.state is FactState.ABSENT
            else architectures_fact(
                ctx, dists[0].location.rstrip("/") + "/torch/lib/libtorch_cuda.so", SOURCE
            )
        ),
        linked_libraries=linked,
        **versions,
    )


def _linked(
    ctx: ProbeContext, cuda: Fact[str]
) -> tuple[tuple[NeededLibrary, ...], dict[str, Fact[Version]]]:
    """libtorch_cuda.so's CUDA libraries as bound at ``import torch``, and their versions."""
    torch = process_model(ctx).torch
    if torch is None or torch.problem:
        if cuda.state is FactState.ABSENT:
            reason = "a CPU-only build links no CUDA libraries"
        else:
            reason = torch.problem if torch else "no torch/lib/libtorch_cuda.so to read"
        state = FactState.ABSENT if cuda.state is FactState.ABSENT else FactState.UNKNOWN
        return (), {name: Fact(state, None, reason, SOURCE) for name in LINKED}
    linked = tuple(
        NeededLibrary(
            name=b.name,
            resolved=(
                Fact.of(b.loaded.path, f"{SOURCE}:{b.how}")
                if b.loaded
                else Fact.absent("not found by the loader: import torch fails", SOURCE)
            ),
        )
        for b in torch.bindings
        if _RECORDED.match(b.name)
    )
    versions = {}
    for name, prefix in LINKED.items():
        binding = torch.of(prefix)
        versions[name] = (
            binding_version(ctx, binding, "PyTorch's libtorch_cuda.so")
            if binding
            else Fact.absent(f"libtorch_cuda.so does not link {prefix}N", SOURCE)
        )
    return linked, versions


def _parse_assignments(text: str) -> dict[str, object]:
    """``name = 'literal'`` lines of version.py; strings, None, True and False only (no eval)."""
    values: dict[str, object] = {}
    for name, raw in _ASSIGNMENT.findall(text):
        string = _STRING.match(raw)
        if string:
            values[name] = string.group(2)
        elif raw in ("None", "True", "False"):
            values[name] = {"None": None, "True": True, "False": False}[raw]
    return values


def _as_version(fact: Fact[str]) -> Fact[Version]:
    if fact.value is None:
        return Fact(fact.state, None, fact.reason, fact.source)
    return Fact.of(Version(fact.value), fact.source)
