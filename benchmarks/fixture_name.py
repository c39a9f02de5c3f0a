"""The file name a recorded snapshot gets as a fixture: ``real-<gpu>-<driver>-<torch>``.

``python benchmarks/fixture_name.py SNAPSHOT.json`` prints it (used by ``gpu_session.sh``), e.g.
``real-h200-580-159-03-torch-2-11-0-cu130`` or, without a GPU or driver,
``real-no-gpu-no-driver-torch-2-13-0-cpu``. Only the standard library: it runs wherever the
snapshot was taken.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any


def slug(text: str) -> str:
    """Lower case, runs of anything but letters and digits as one dash."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def value(fact: Any) -> str:
    """A snapshot fact's value as text; empty when it was absent or unknown."""
    found = fact.get("value") if isinstance(fact, Mapping) else None
    return "" if found is None else str(found)


def fixture_name(snapshot: Mapping[str, Any]) -> str:
    """``real-<first GPU>-<driver>-torch-<version>`` from a snapshot's JSON."""
    gpus = snapshot.get("gpus") or []
    gpu = value(gpus[0].get("name")) if gpus else ""
    gpu = re.sub(r"^NVIDIA\s+", "", gpu) or "no GPU"
    driver = value(snapshot.get("driver", {}).get("version")) or "no driver"
    torch = value(snapshot.get("torch", {}).get("version")) or "none"
    return "real-" + "-".join(slug(part) for part in (gpu, driver, f"torch {torch}"))


def main(argv: list[str]) -> int:
    """Print the name for the snapshot file given; exit 2 when it cannot be read."""
    if len(argv) != 1:
        print("usage: fixture_name.py SNAPSHOT.json", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as handle:
            snapshot = json.load(handle)
    except (OSError, ValueError) as exc:
        print(f"{argv[0]}: cannot read a snapshot: {exc}", file=sys.stderr)
        return 2
    print(fixture_name(snapshot))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
