"""What makes two nodes the same configuration, and the few facts a fleet compares by eye.

Nodes of one fleet are mostly identical, so the rules run once per configuration: the
snapshot without its per-node identity (hostname, GPU UUIDs, timestamps, probe timings) and
without the environment variables that differ between the tasks of one job.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: Environment variables that differ between the tasks of one job (no rule reads them).
PER_TASK_PREFIXES = ("SLURM_", "OMPI_", "PMIX_")
PER_TASK_NAMES = frozenset({"RANK", "LOCAL_RANK"})
#: What makes a node "odd" when it differs from the majority.
SUMMARY = ("driver", "CUDA (driver)", "GPUs", "GPU", "torch", "cuDNN", "Transformer Engine")


def configuration_key(data: Mapping[str, Any]) -> str:
    """A hash of the snapshot without its per-node fields (identity, timing, evidence text)."""
    config = {key: value for key, value in data.items() if key not in ("meta", "probes")}
    config["probes"] = [(p.get("name"), p.get("state"), p.get("detail")) for p in data["probes"]]
    config["host"] = _without(data["host"], ("hostname", "user", "slurm_job_id"))
    config["driver"] = _without(data["driver"], ("visible_devices", "evidence"))
    config["gpus"] = [_without(gpu, ("uuid", "serial", "pci_bus_id")) for gpu in data["gpus"]]
    if isinstance(data.get("smoke"), dict):
        config["smoke"] = _without(data["smoke"], ("duration_ms",))
    variables = data.get("environment", {}).get("variables", {})
    config["environment"] = {
        name: value
        for name, value in variables.items()
        if not name.startswith(PER_TASK_PREFIXES) and name not in PER_TASK_NAMES
    }
    return hashlib.sha256(json.dumps(config).encode()).hexdigest()


def _without(table: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in table.items() if key not in keys}


def node_summary(data: Mapping[str, Any]) -> dict[str, str]:
    def value(section: str, name: str) -> str:
        fact = data.get(section, {}).get(name, {})
        return str(fact.get("value", "-")) if isinstance(fact, dict) else "-"

    gpus = [g for g in data.get("gpus", []) if g.get("visible")]
    return {
        "driver": value("driver", "version"),
        "CUDA (driver)": value("driver", "cuda_version"),
        "GPUs": str(len(gpus)),
        "GPU": str(gpus[0].get("name", {}).get("value", "-")) if gpus else "-",
        "torch": value("torch", "version"),
        "cuDNN": value("cudnn", "version"),
        "Transformer Engine": value("transformer_engine", "version"),
    }
