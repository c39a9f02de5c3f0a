"""Synthetic fleets for the fleet benchmark and tests: copies of one node, a few odd ones out."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any


def write_fleet(template: Path, directory: Path, nodes: int, odd_every: int = 50) -> list[str]:
    """Write ``nodes`` snapshots derived from ``template``; returns the odd nodes' names.

    Every ``odd_every``-th node has an older driver, as the one stale node in a cluster would.
    """
    base: dict[str, Any] = json.loads(template.read_text(encoding="utf-8"))
    directory.mkdir(parents=True, exist_ok=True)
    odd = []
    for index in range(nodes):
        data = copy.deepcopy(base)
        name = f"node{index:05d}"
        data["host"]["hostname"] = {"value": name, "source": "host:gethostname"}
        for number, gpu in enumerate(data["gpus"]):
            gpu["uuid"] = {"value": f"GPU-{index:08x}-0000-0000-0000-{number:012x}", "source": "x"}
        if odd_every and index % odd_every == odd_every - 1:
            data["driver"]["version"] = {"value": "535.104.05", "source": "nvidia:nvml"}
            data["driver"]["kernel_module_version"] = {"value": "535.104.05", "source": "proc"}
            data["driver"]["cuda_version"] = {"value": "12.2", "source": "nvidia:nvml"}
            odd.append(name)
        (directory / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    return odd
