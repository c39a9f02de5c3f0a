"""Packages probe: versions of the distributions TE depends on, read from metadata only.

Also reports how each was installed (wheel, editable, local source dir, egg-info), every
distribution installed twice on the search path, and known-conflicting combinations.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from te_doctor.probes.context import InstalledDist, ProbeContext
from te_doctor.probes.packages_index import all_dists, canonicalize_name
from te_doctor.snapshot.facts import Fact, Version
from te_doctor.snapshot.model import PackageFacts, PackagesFacts

SOURCE = "packages"

#: Distributions reported besides every ``nvidia-*`` and ``cuda-*`` one.
INTERESTING = frozenset(
    canonicalize_name(name)
    for name in (
        "torch",
        "torchvision",
        "torchaudio",
        "triton",
        "pytorch-triton",
        "transformer-engine",
        "transformer-engine-cu12",
        "transformer-engine-cu13",
        "transformer-engine-torch",
        "transformer-engine-jax",
        "flash-attn",
        "flash-attn-3",
        "flash-attn-4",
        "flashattn-hopper",
        "apex",
        "torchao",
        "jax",
        "jaxlib",
        "numpy",
        "megatron-core",
        "accelerate",
        "deepspeed",
        "nvidia-ml-py",
        "pybind11",
        "ninja",
        "cmake",
        "pynvml",
    )
)
TE_FAMILY = (
    "transformer-engine",
    "transformer-engine-cu12",
    "transformer-engine-cu13",
    "transformer-engine-torch",
    "transformer-engine-jax",
)


def is_interesting(name: str) -> bool:
    """True for the distributions te-doctor reports."""
    canonical = canonicalize_name(name)
    return canonical in INTERESTING or canonical.startswith(("nvidia-", "cuda-"))


def probe_packages(ctx: ProbeContext) -> PackagesFacts:
    """Collect package facts."""
    dists = all_dists(ctx)
    wanted = [d for d in dists if not d.error and is_interesting(d.name)]
    by_name: dict[str, list[InstalledDist]] = defaultdict(list)
    for dist in wanted:
        by_name[canonicalize_name(dist.name)].append(dist)
    unreadable = [d for d in dists if d.error and is_interesting(_named(d))]
    listed = [*map(_package, wanted), *map(_unreadable_package, unreadable)]
    return PackagesFacts(
        installed=tuple(sorted(listed, key=lambda p: p.name)),
        duplicates=tuple(
            f"{name}: " + ", ".join(f"{d.version} in {d.location}" for d in copies)
            for name, copies in sorted(by_name.items())
            if len(copies) > 1
        ),
        conflicts=tuple(_conflicts(by_name)),
        unreadable=tuple(f"{d.location}/{d.name}: {d.error}" for d in dists if d.error),
        search_path=tuple(p for p in ctx.python.sys_path if p),
    )


def _package(dist: InstalledDist) -> PackageFacts:
    return PackageFacts(
        name=canonicalize_name(dist.name),
        version=Fact.of(Version(dist.version), f"{SOURCE}:{dist.metadata_format}"),
        location=dist.location,
        install_kind=_install_kind(dist),
        installer=(
            Fact.of(dist.installer, f"{SOURCE}:INSTALLER")
            if dist.installer
            else Fact.unknown("no INSTALLER file in the metadata", SOURCE)
        ),
    )


def _named(dist: InstalledDist) -> str:
    """The distribution's name, from ``torch-2.5.1.dist-info`` when its metadata is unreadable."""
    name = dist.name
    if name.endswith((".dist-info", ".egg-info")):
        name = name.rsplit(".", 1)[0].split("-", 1)[0]
    return name


def _unreadable_package(dist: InstalledDist) -> PackageFacts:
    """Installed, version unknown: a corrupt METADATA is not "not installed"."""
    unknown: Fact[Any] = Fact.unknown(f"{dist.location}/{dist.name}: {dist.error}", SOURCE)
    return PackageFacts(
        name=canonicalize_name(_named(dist)),
        version=unknown,
        location=dist.location,
        install_kind="unreadable metadata",
        installer=unknown,
    )


def _install_kind(dist: InstalledDist) -> str:
    if dist.direct_url == "editable":
        return "editable"
    if dist.direct_url == "local-dir":
        return "built from a local source directory"
    if dist.direct_url == "vcs":
        return "built from a VCS checkout"
    if dist.metadata_format == "egg-info":
        return "egg-info (setup.py install/develop or a source build)"
    return "wheel"


def _conflicts(by_name: dict[str, list[InstalledDist]]) -> list[str]:
    found: list[str] = []
    if "transformer-engine-cu12" in by_name and "transformer-engine-cu13" in by_name:
        found.append(
            "transformer-engine-cu12 and transformer-engine-cu13 are both installed: "
            "two TE core libraries for different CUDA majors"
        )
    te_versions = {name: by_name[name][0].version for name in TE_FAMILY if name in by_name}
    if len(set(te_versions.values())) > 1:
        found.append(
            "Transformer Engine packages disagree on the version: "
            + ", ".join(f"{name} {version}" for name, version in te_versions.items())
        )
    for name in sorted(by_name):
        if name.startswith("nvidia-") and name.endswith("-cu12"):
            twin = name[: -len("-cu12")] + "-cu13"
            if twin in by_name:
                found.append(
                    f"{name} and {twin} are both installed: two CUDA majors of one library"
                )
    return found
