"""CUDA forward compatibility: a newer user-space driver (cuda-compat) on an older kernel one.

NVIDIA's CUDA Compatibility guide, "Forward Compatibility": the ``cuda-compat-<major>-<minor>``
package holds the ``libcuda.so`` of the driver branch that shipped with that CUDA release
(cuda-compat-12-8 is built from R570), and lets applications built with that CUDA run on an older
driver of another major family, on NVIDIA data-center GPUs, select NGC Server Ready RTX SKUs and
Jetson boards only; elsewhere CUDA initialisation fails with error 804
(``cudaErrorCompatNotSupportedOnDevice``).

https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from packaging.version import InvalidVersion, Version

from te_doctor.snapshot.facts import Fact

SOURCE = "derived"

#: Driver branch -> the CUDA version its libcuda supports (CUDA Toolkit release notes, "CUDA
#: Toolkit and Corresponding Driver Versions"; the GA driver of each release).
BRANCH_CUDA = {
    450: "11.0",
    455: "11.1",
    460: "11.2",
    465: "11.3",
    470: "11.4",
    495: "11.5",
    510: "11.6",
    515: "11.7",
    520: "11.8",
    525: "12.0",
    530: "12.1",
    535: "12.2",
    545: "12.3",
    550: "12.4",
    555: "12.5",
    560: "12.6",
    565: "12.7",
    570: "12.8",
    575: "12.9",
    580: "13.0",
    590: "13.1",
}
#: Names of GPUs the guide's scope covers: data-center GPUs (Tesla and the A/H/B/L/T series,
#: Grace superchips) and Jetson boards.
_DATA_CENTER = re.compile(
    r"\b(Tesla|A100|A800|A40|A30|A16|A10G?|A2|H100|H800|H200|H20|GH200|B100|B200|B300|GB200"
    r"|GB300|L40S?|L20|L4|L2|T4|V100|P100|P40|P4|Jetson|Orin|Xavier|Thor)\b"
)
_NOT_COVERED = re.compile(r"\b(GeForce|TITAN)\b", re.IGNORECASE)


def gpu_supports_forward_compat(name: Fact[Any]) -> Fact[bool]:
    """Whether NVIDIA's forward-compatibility scope covers a GPU, from its name.

    GeForce and TITAN are outside it; data-center and Jetson names are inside; other RTX and
    Quadro boards are unknown (only "select NGC Server Ready SKUs" qualify).
    """
    if name.value is None:
        return Fact(name.state, None, name.reason, SOURCE)
    text = str(name.value)
    if _NOT_COVERED.search(text):
        return Fact.of(False, SOURCE)
    if _DATA_CENTER.search(text):
        return Fact.of(True, SOURCE)
    return Fact.unknown(
        f"{text}: forward compatibility covers data-center GPUs, Jetson and only select NGC "
        "Server Ready RTX SKUs; which one this is cannot be told from its name",
        SOURCE,
    )


def branch_cuda(version: Fact[Any]) -> str | None:
    """The CUDA version a driver release (``580.65.06``) supports, or None when unknown."""
    try:
        branch = Version(str(version.value)).major if version.value is not None else None
    except InvalidVersion:
        return None
    return BRANCH_CUDA.get(branch) if branch is not None else None


def forward_compat_cuda(
    libcuda: Fact[Any], driver: Fact[Any], gpus_supported: Sequence[Fact[bool]]
) -> Fact[str]:
    """The CUDA version a forward-compatibility libcuda gives this process, or absent.

    Present only when the libcuda.so.1 the loader picks is newer than the kernel driver, its
    branch's CUDA is known, and every visible GPU is in the guide's scope. Anything that cannot
    be told reads as no forward compatibility, so the driver-too-old errors stay errors.
    """
    why_not = _why_not(libcuda, driver, gpus_supported)
    if why_not:
        return Fact.absent(why_not, SOURCE)
    cuda = branch_cuda(libcuda)
    if cuda is None:
        return Fact.absent(
            f"libcuda {libcuda.value}: its driver branch is not in the table", SOURCE
        )
    return Fact.of(cuda, SOURCE)


def _why_not(libcuda: Fact[Any], driver: Fact[Any], gpus_supported: Sequence[Fact[bool]]) -> str:
    if libcuda.value is None or driver.value is None:
        missing = libcuda if libcuda.value is None else driver
        return f"no forward-compatibility libcuda known ({missing.reason})"
    try:
        newer = Version(str(libcuda.value)) > Version(str(driver.value))
    except InvalidVersion:
        return f"cannot compare libcuda {libcuda.value} with driver {driver.value}"
    if not newer:
        return f"the libcuda.so.1 loaded ({libcuda.value}) is the driver's own"
    if not gpus_supported:
        return "no visible GPU"
    refused = [g for g in gpus_supported if g.value is not True]
    if refused:
        detail = refused[0].reason or "a GeForce or TITAN GPU is outside its scope"
        return f"not every visible GPU supports forward compatibility: {detail}"
    return ""
