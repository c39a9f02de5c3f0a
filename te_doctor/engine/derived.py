"""Facts derived from other facts: CUDA majors, the PyTorch build a driver runs, GPU code fit.

Pure functions of ``Fact`` values, shared by ``flatten`` (a live snapshot) and triage (a paste).
"""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version

from te_doctor.snapshot.facts import Fact

DERIVED = "derived"


#: PyTorch's CUDA wheel indexes (download.pytorch.org/whl/<build>), newest first, with the
#: CUDA version each needs the driver to support (minor-version compatibility within a major).
TORCH_CUDA_BUILDS = (
    ("13.0", "cu130"),
    ("12.9", "cu129"),
    ("12.8", "cu128"),
    ("12.6", "cu126"),
    ("12.4", "cu124"),
    ("12.1", "cu121"),
    ("11.8", "cu118"),
)


#: The first Linux driver of each CUDA toolkit release (CUDA Toolkit Release Notes, Table 3
#: "CUDA Toolkit and Corresponding Driver Versions", GA rows; te-facts.md §2 source B): the
#: highest CUDA a driver supports, which nvidia-smi prints as "CUDA Version", is the newest
#: release whose driver it is at least. Newest first.
DRIVER_FOR_CUDA = (
    ("13.2", "595.45.04"),
    ("13.1", "590.44.01"),
    ("13.0", "580.65.06"),
    ("12.9", "575.51.03"),
    ("12.8", "570.26"),
    ("12.6", "560.28.03"),
    ("12.5", "555.42.02"),
    ("12.4", "550.54.14"),
    ("12.3", "545.23.06"),
    ("12.2", "535.54.03"),
    ("12.1", "530.30.02"),
    ("12.0", "525.60.13"),
    ("11.8", "520.61.05"),
    ("11.7", "515.43.04"),
    ("11.6", "510.39.01"),
    ("11.5", "495.29.05"),
    ("11.4", "470.42.01"),
    ("11.3", "465.19.01"),
    ("11.2", "460.27.03"),
    ("11.1", "455.23"),
    ("11.0", "450.36.06"),
    ("10.2", "440.33"),
    ("10.1", "418.39"),
    ("10.0", "410.48"),
    ("9.2", "396.26"),
    ("9.1", "390.46"),
    ("9.0", "384.81"),
)


def driver_cuda_version(driver: str) -> str | None:
    """The highest CUDA a driver of version ``driver`` supports (None: older than CUDA 9.0's)."""
    try:
        version = Version(driver)
    except InvalidVersion:
        return None
    return next((cuda for cuda, first in DRIVER_FOR_CUDA if version >= Version(first)), None)


def torch_cuda_build(driver_cuda: Fact[Any]) -> Fact[str]:
    """The newest PyTorch CUDA build a driver supporting ``driver_cuda`` can run."""
    if driver_cuda.value is None:
        return Fact(driver_cuda.state, None, driver_cuda.reason, driver_cuda.source)
    try:
        supported = Version(str(driver_cuda.value))
    except InvalidVersion:
        return Fact.unknown(f"{driver_cuda.value!r} is not a version", DERIVED)
    for needs, build in TORCH_CUDA_BUILDS:
        if supported >= Version(needs):
            return Fact.of(build, DERIVED)
    return Fact.absent(f"a driver for CUDA {supported} runs no current PyTorch CUDA build", DERIVED)


def runs_on(
    archs: Fact[tuple[str, ...]], capability: Fact[Any], specific: bool = False
) -> Fact[bool]:
    """Whether code in ``archs`` runs on a GPU of ``capability`` (``specific``: a/f code only).

    A cubin ``sm_XY`` runs on the same major from minor Y up, and so does a family cubin
    ``sm_XYf``; an arch-specific ``sm_XYa`` runs on exactly that GPU. PTX ``compute_XY`` is
    JIT-compiled for any newer GPU, ``compute_XYa`` only for that one.
    """
    cc = capability.get()
    if archs.value is None or cc is None:
        reason = archs.reason if archs.value is None else capability.reason
        return Fact(
            archs.state if archs.value is None else capability.state,
            None,
            reason,
            DERIVED,
        )
    target = cc_key(cc)
    for arch in archs.value:
        kind, _, number = arch.partition("_")
        suffix = number[-1] if number[-1:] in ("a", "f") else ""
        if specific and not suffix:
            continue
        code = int(number.rstrip("af") or 0)
        built = divmod(code, 10)
        if suffix == "a":
            runs = built == target
        elif kind == "sm" or suffix == "f":
            runs = built[0] == target[0] and built[1] <= target[1]
        else:
            runs = kind == "compute" and built <= target
        if runs:
            return Fact.of(True, DERIVED)
    return Fact.of(False, DERIVED)


def cc_key(cc: str) -> tuple[int, int]:
    """``"12.1"`` -> ``(12, 1)``."""
    major, _, minor = cc.partition(".")
    return int(major), int(minor or 0)


#: Version facts and the major-number facts derived from them.
MAJORS = (
    ("driver.cuda_version", "driver.cuda_major"),
    ("torch.cuda_version", "torch.cuda_major"),
    ("cuda.toolkit_version", "cuda.toolkit_major"),
    ("cuda.runtime_version", "cuda.runtime_major"),
    ("cudnn.version", "cudnn.major"),
    ("driver.forward_compat_cuda_version", "driver.forward_compat_cuda_major"),
)


def add_majors(values: dict[str, Fact[Any]]) -> None:
    """Derive every ``*_major`` fact whose version fact is present and the major is not."""
    for version, major in MAJORS:
        if version in values and major not in values:
            values[major] = major_of(values[version])


def major_of(fact: Fact[Any]) -> Fact[int]:
    """The major of a version fact (``12.4`` -> 12), missing for the same reason."""
    if fact.value is None:
        return Fact(fact.state, None, fact.reason, fact.source)
    try:
        return Fact.of(Version(str(fact.value)).major, DERIVED)
    except InvalidVersion:
        return Fact.unknown(f"{fact.value!r} is not a version", DERIVED)
