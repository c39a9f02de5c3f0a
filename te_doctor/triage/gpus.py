"""Compute capability from a GPU's marketing name, for reports that name the GPU but not its cc.

The table follows NVIDIA's "CUDA GPUs - Compute Capability" page
(https://developer.nvidia.com/cuda-gpus). It covers the datacenter and GeForce/RTX/workstation
parts that show up in Transformer Engine bug reports; a name it does not know gets no compute
capability rather than a guess. Patterns are tried in order, most specific first, and match
whole words (``A10`` never matches ``A100``); GeForce model numbers match with or without the space
people often drop (``RTX4090``).

``nvidia-smi`` cuts long names to its column width and ends them with ``...``. A cut name is
only matched when the matched model number is followed by a visible character: ``NVIDIA
A100-PCI...`` is an A100, but ``NVIDIA L4...`` could be an L4 or an L40 and gets nothing.
"""

from __future__ import annotations

import re

#: (pattern, compute capability), first match wins.
_TABLE: tuple[tuple[str, str], ...] = (
    # Blackwell
    (r"\bDGX Spark\b", "12.1"),
    (r"\bGB10\b", "12.1"),
    (r"\bG?B300\b", "10.3"),
    (r"\bG?B[12]00\b", "10.0"),
    (r"\bRTX PRO [2-6][05]00\b", "12.0"),
    (r"\bRTX ?50[5-9]0\b", "12.0"),
    # Hopper
    (r"\bG?H(?:100|200|800|20)\b", "9.0"),
    # Ada Lovelace
    (r"\bL(?:4|20|40S?|40G)\b", "8.9"),
    (r"\bRTX [2-6][05]00(?: SFF)? Ada\b", "8.9"),
    (r"\bRTX ?40[5-9]0D?\b", "8.9"),  # the 4090 D sold in China
    # Ampere
    (r"\bA(?:100|800|30)\b", "8.0"),
    (r"\bA(?:10G?|40|16|2)\b", "8.6"),
    (r"\b(?:RTX )?A[1-6][05]00\b", "8.6"),  # people drop the "RTX": "NVIDIA A6000"
    (r"\bRTX ?30[5-9]0\b", "8.6"),
    # Turing
    (r"\bT4\b", "7.5"),
    (r"\bT(?:400|600|1000|1200)\b", "7.5"),
    (r"\b(?:Quadro RTX [3-8]000|TITAN RTX)\b", "7.5"),
    (r"\bRTX ?20[6-8]0\b", "7.5"),
    (r"\bGTX ?16[5-6]0\b", "7.5"),
    # Volta
    (r"\b(?:V100|TITAN V)\b", "7.0"),
    # Pascal
    (r"\bP100\b", "6.0"),
    (r"\b(?:Tesla P(?:4|6|40)|Quadro P\d{3,4}|TITAN Xp|GTX 10[5-8]0)\b", "6.1"),
)
_COMPILED = tuple((re.compile(pattern, re.IGNORECASE), cc) for pattern, cc in _TABLE)
_ELLIPSES = ("...", "\u2026")
_MAX_NAME = 200


def is_truncated(name: str) -> bool:
    """True when ``name`` was cut short by nvidia-smi (it ends with an ellipsis)."""
    return name.rstrip().endswith(_ELLIPSES)


def compute_capability(name: str) -> str | None:
    """The compute capability ``"major.minor"`` of the GPU called ``name``, or None if unknown."""
    text = name.strip()[:_MAX_NAME]
    truncated = is_truncated(text)
    if truncated:
        for ellipsis in _ELLIPSES:
            if text.endswith(ellipsis):
                text = text[: -len(ellipsis)]
                break
    for pattern, cc in _COMPILED:
        match = pattern.search(text)
        if match is None:
            continue
        if truncated and match.end() >= len(text):
            return None  # the model number itself may have been cut: L4... could be L40
        return cc
    return None
