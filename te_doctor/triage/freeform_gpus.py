"""GPUs as people type them in environment lists: ``2x A10 24GB``, ``GPU 0,1: H100``, ``sm_90``."""

from __future__ import annotations

import re

from te_doctor.triage.gpus import compute_capability, is_truncated
from te_doctor.triage.parse_common import Findings

_COUNT_BEFORE = re.compile(r"(\d{1,3})[ \t]{0,2}[x\u00d7*][ \t]{0,2}(?=\S)", re.IGNORECASE)
_COUNT_AFTER = re.compile(r"[ \t]{0,2}[x\u00d7*][ \t]{0,2}(\d{1,3})[ \t]*$", re.IGNORECASE)
_SM = re.compile(r"\bsm_?(\d{1,2})(\d)[af]?\b|compute capability[ \t:]{1,4}(\d{1,2}\.\d)", re.I)


def gpu(key: str, value: str, found: Findings, where: str) -> None:
    """``2x A10 24GB``, ``8x NVIDIA H100 80GB SXM5 (cloud)``, ``A100 * 6``, ``RTX 4090``."""
    count = None
    before = _COUNT_BEFORE.match(value)
    if before:
        count, value = int(before.group(1)), value[before.end() :]
    else:
        after = _COUNT_AFTER.search(value)
        if after:
            count, value = int(after.group(1)), value[: after.start()]
    if gpu_name(value, found, where) and count:
        found.add("gpus.count", count, where)


def indexed_gpus(key: str, value: str, found: Findings, where: str) -> None:
    """sglang's ``GPU 0,1,2,3: NVIDIA H100 80GB HBM3`` and ``GPU 0,1 Compute Capability: 9.0``.

    A single index is one line of a list (collect_env's ``GPU 1: ...``): only GPU 0 is read,
    the first GPU every other parser reports too, and the list's length is left to them.
    """
    indices = re.findall(r"\d{1,3}", key)
    if indices[0] != "0":
        return
    if key.endswith("compute capability"):
        capability(key, value, found, where)
    elif gpu_name(value, found, where) and len(indices) > 1:
        found.add("gpus.count", len(indices), where)


def gpu_name(value: str, found: Findings, where: str) -> bool:
    """Record the GPU a value names; False when it names none this table knows.

    ComfyUI's ``Device: cuda:0 NVIDIA GeForce RTX 3090 : cudaMallocAsync`` names it between the
    device and the allocator."""
    value = re.sub(r"^GPU[ \t]{1,4}\d{1,3}[ \t]{0,4}:[ \t]{0,4}|^cuda:\d{1,3}[ \t]{1,4}", "", value)
    name = re.split(r"[(,;]| with | \| | : ", value, maxsplit=1)[0].strip()
    cc = compute_capability(name)
    explicit = _SM.search(value)
    if explicit:
        cc = explicit.group(3) or f"{explicit.group(1)}.{explicit.group(2)}"
    if cc is None:
        return False
    if not is_truncated(name) and compute_capability(name) is not None:
        found.add("gpu.name", name, where)
    found.add("gpu.compute_capability", cc, where)
    return True


def capability(key: str, value: str, found: Findings, where: str) -> None:
    match = re.match(r"(\d{1,2})\.(\d)\b", value)
    if match:
        found.add("gpu.compute_capability", f"{match.group(1)}.{match.group(2)}", where)
