"""Versions pinned in prose and commands: ``pip install flash-attn==2.5.2``, "it also installs
`flash-attn==2.6.3`", "I downloaded torch==2.0.1+cu118", and the NGC PyTorch container a
command or Dockerfile runs (``FROM nvcr.io/nvidia/pytorch:24.03-py3``).

A ``name==version`` (no spaces, two or more release numbers: ``x == 1`` is a comparison)
written by the reporter says which release they installed. A line where pip or a person speaks
of what something *needs* (pip's resolver: "xformers 0.0.22 depends on torch==2.0.1", "Could not
find a version that satisfies the requirement ...", a README that "recommends" a pin) states no
installed version, and gives no fact. Only lines no other parser read are looked at, and none
is owned: the sentence stays for the error signatures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from te_doctor.triage.parse_common import (
    Findings,
    Report,
    package_path,
    read_mask,
    source,
    version_or_none,
)

FORMAT = "pins-in-prose"
NGC_FORMAT = "ngc-container"
_MAX_LINE = 2_000
_PIN = re.compile(
    r"(?<![\w.\-\[/])([A-Za-z][A-Za-z0-9._-]{0,120})(?:\[[^\]\n]{0,200}\])?=="
    r"[vV]?(\d[0-9A-Za-z.+!_-]{0,80})"
)
#: Words of a line about what is needed or wanted, not what is installed.
_NOT_INSTALLED = re.compile(
    r"depends[ \t]on|requires?\b|required\b|requested|conflict|incompatible|but[ \t]you[ \t]have"
    r"|recommend|suggest|satisf(?:y|ies)[ \t]the[ \t]requirement|no[ \t]matching[ \t]distribution"
    r"|should|instead|upgrade[ \t]to|downgrade[ \t]to|works[ \t]with",
    re.IGNORECASE,
)
#: An NGC PyTorch image: its tag is the release (``24.03``), NVIDIA_PYTORCH_VERSION inside it.
_NGC_PYTORCH = re.compile(r"\bnvcr\.io/nvidia/pytorch:(\d{2}\.\d{2})-py3\b")


def parse(report: Report, skip: Iterable[tuple[int, int]] = ()) -> Findings:
    """Every ``name==version`` pin on a line outside ``skip`` that speaks of an install, and
    every NGC PyTorch image named there."""
    found = Findings()
    lines = report.lines
    read = read_mask(len(lines), skip)
    for number, line in enumerate(lines):
        if read[number] or len(line) > _MAX_LINE:
            continue
        if "nvcr.io/nvidia/pytorch:" in line:
            _ngc_images(line, found)
        if "==" not in line or _NOT_INSTALLED.search(line):
            continue
        for pin in _PIN.finditer(line):
            if pin.end() == len(line) and not report.line_is_complete(number):
                continue  # the paste may end inside this version
            name, raw = pin.groups()
            path, version = package_path(name), version_or_none(raw.rstrip(".,;:)!"), 2)
            if path is not None and version is not None:
                found.recognised(FORMAT)
                found.add(path, version, source(FORMAT, line.strip()))
    return found


def _ngc_images(line: str, found: Findings) -> None:
    """The release of every NGC PyTorch image named on ``line`` (two differ: a conflict)."""
    for image in _NGC_PYTORCH.finditer(line):
        found.recognised(NGC_FORMAT)
        found.add("host.ngc_pytorch_version", image.group(1), source(NGC_FORMAT, line.strip()))
