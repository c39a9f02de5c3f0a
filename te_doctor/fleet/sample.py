"""Synthetic fleets for the fleet benchmark and tests: node reports copied from one recorded
machine, with the few odd nodes a real cluster has."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from te_doctor import __version__
from te_doctor.fleet.node_report import NODE_REPORT_SCHEMA, NodeIdentity

OLD_DRIVER = ("535.104.05", "12.2")


@dataclass(frozen=True, slots=True)
class OddNodes:
    """The names of the nodes written with each variation."""

    old_driver: list[str] = field(default_factory=list)
    no_cudnn: list[str] = field(default_factory=list)
    fewer_gpus: list[str] = field(default_factory=list)


def write_fleet(
    template: Path,
    directory: Path,
    nodes: int,
    *,
    old_driver_every: int = 50,
    no_cudnn_every: int = 0,
    fewer_gpus_every: int = 0,
) -> OddNodes:
    """Write ``nodes`` node reports (``node00000``..., job 4242, task = index) from ``template``.

    Every ``old_driver_every``-th node has an older driver (the stale node of a cluster), every
    ``no_cudnn_every``-th lost its cuDNN, every ``fewer_gpus_every``-th shows two GPUs fewer
    (0: never).
    """
    base: dict[str, Any] = json.loads(template.read_text(encoding="utf-8"))
    directory.mkdir(parents=True, exist_ok=True)
    odd = OddNodes()
    for index in range(nodes):
        data = copy.deepcopy(base)
        name = f"node{index:05d}"
        data["host"]["hostname"] = {"value": name, "source": "host:gethostname"}
        for number, gpu in enumerate(data["gpus"]):
            gpu["uuid"] = {"value": f"GPU-{index:08x}-0000-0000-0000-{number:012x}", "source": "x"}
        if _every(index, old_driver_every):
            _old_driver(data)
            odd.old_driver.append(name)
        if _every(index, no_cudnn_every):
            _no_cudnn(data)
            odd.no_cudnn.append(name)
        if _every(index, fewer_gpus_every):
            _fewer_gpus(data, 2)
            odd.fewer_gpus.append(name)
        identity = NodeIdentity(name, "4242", str(index))
        report = node_report(identity, data)
        (directory / identity.file_name()).write_text(json.dumps(report), encoding="utf-8")
    return odd


def node_report(
    identity: NodeIdentity, snapshot: dict[str, Any], status: str = "ok"
) -> dict[str, Any]:
    """A node report as ``te-doctor fleet node`` writes it."""
    return {
        "schema": NODE_REPORT_SCHEMA,
        "node": identity.node,
        "job_id": identity.job_id,
        "task_id": identity.task_id,
        "created_at": "2026-11-30T00:00:00+00:00",
        "te_doctor_version": __version__,
        "status": status,
        "detail": "" if status == "ok" else "the probe did not finish within 300 s",
        "duration_s": 0.3,
        "snapshot": snapshot if status == "ok" else None,
    }


def _every(index: int, every: int) -> bool:
    return bool(every) and index % every == every - 1


def _old_driver(data: dict[str, Any]) -> None:
    version, cuda = OLD_DRIVER
    data["driver"]["version"] = {"value": version, "source": "nvidia:nvml"}
    data["driver"]["kernel_module_version"] = {"value": version, "source": "proc"}
    data["driver"]["cuda_version"] = {"value": cuda, "source": "nvidia:nvml"}


def _no_cudnn(data: dict[str, Any]) -> None:
    reason = "no libcudnn.so found in the pip, conda, LD_LIBRARY_PATH or system locations"
    data["cudnn"] = {
        "version": {"absent": reason, "source": "cudnn"},
        "header_version": {"absent": "no cudnn_version.h found", "source": "cudnn"},
        "copies": [],
        "distinct_versions": [],
    }


def _fewer_gpus(data: dict[str, Any], lost: int) -> None:
    data["gpus"] = data["gpus"][:-lost]
    count = {"value": len(data["gpus"]), "source": "nvidia:nvml"}
    data["driver"]["gpu_count"] = data["driver"]["visible_gpu_count"] = count
