"""Helpers for the stand-in bench children: parse the runner's arguments, write a result."""

from __future__ import annotations

import json
import sys
from typing import Any


def out_file() -> str:
    return sys.argv[sys.argv.index("--out") + 1]


def spec() -> dict[str, Any]:
    with open(sys.argv[sys.argv.index("--spec") + 1], encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def write(**fields: Any) -> None:
    data = {
        "format": 1,
        "finished": False,
        "running": "",
        "path": spec()["path"],
        "device": "cpu",
        "device_name": "cpu",
        "torch": "2.13.0",
        "te": None,
        "error": None,
        "components": [],
    }
    data.update(fields)
    with open(out_file(), "w", encoding="utf-8") as handle:
        json.dump(data, handle)


def component(name: str, seconds: float) -> dict[str, Any]:
    return {
        "name": name,
        "status": "ok",
        "reason": "",
        "warmup_s": [seconds * 5],
        "samples_s": [seconds] * 3,
        "memory_bytes": 1,
        "memory_kind": "peak-rss",
        "rel_error": 0.0,
        "error_detail": "",
    }
