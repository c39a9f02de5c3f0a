"""Which copies of the CUDA and TE libraries the smoke child really mapped (/proc/self/maps)."""

from __future__ import annotations

import os
import re
from typing import Any

#: File-name prefixes of the libraries reported as loaded; the longer prefix first.
LIBRARY_PREFIXES = (
    "libcublasLt",
    "libcublas",
    "libcudnn",
    "libcudart",
    "libnccl",
    "libnvrtc",
    "libtransformer_engine",
    "libcurand",
)
_SO_VERSION = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")
_PIP_MARKERS = ("/site-packages/nvidia/", "/dist-packages/nvidia/", "/site-packages/")
_CONDA_MARKERS = ("/conda", "/miniconda", "/anaconda", "/miniforge", "/mambaforge", "/micromamba")


def loaded_libraries(maps: str = "/proc/self/maps") -> list[dict[str, Any]]:
    """One entry per distinct mapped file of the CUDA/TE library families."""
    try:
        with open(maps, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    found: dict[str, dict[str, Any]] = {}
    for line in lines:
        fields = line.split(None, 5)
        if len(fields) < 6:
            continue
        path = fields[5].strip()
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        base = os.path.basename(path)
        prefix = next((p for p in LIBRARY_PREFIXES if base.startswith(p)), None)
        if prefix is None or not path.startswith("/") or ".so" not in base or path in found:
            continue
        match = _SO_VERSION.search(base)
        found[path] = {
            "name": prefix[len("lib") :],
            "path": path,
            "version": match.group(1) if match else None,
            "origin": library_origin(path),
        }
    return list(found.values())


def library_origin(path: str) -> str:
    """pip, conda or system, from where the file lies."""
    if any(marker in path for marker in _PIP_MARKERS):
        return "pip"
    if any(marker in path for marker in _CONDA_MARKERS):
        return "conda"
    parent = os.path.dirname(path)
    while parent and parent != os.path.dirname(parent):
        if os.path.isdir(os.path.join(parent, "conda-meta")):
            return "conda"
        parent = os.path.dirname(parent)
    return "system"
