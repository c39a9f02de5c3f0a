"""The runtime API's per-machine decision cache: JSON files keyed by the deciding facts."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import fcntl
import functools
import hashlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from te_doctor import __version__
from te_doctor.engine.recommend import PathVerdict
from te_doctor.engine.rules import builtin_rules_dir
from te_doctor.files import cache_root, write_atomically
from te_doctor.snapshot.facts import Fact
from te_doctor.snapshot.model import Snapshot

CACHE_FORMAT = 1
#: How often a rank waiting for the cache lock tries again.
LOCK_POLL_S = 0.1


def default_cache_dir() -> Path:
    """``paths/`` in te-doctor's cache (``$TE_DOCTOR_CACHE_DIR``, else the XDG cache)."""
    return cache_root() / "paths"


def key_facts(snapshot: Snapshot, *, smoke: bool) -> dict[str, Any]:
    """The facts that decide the path, from a snapshot probed without the smoke test."""

    def shown(fact: Fact[Any]) -> Any:
        return fact.value if fact.known else f"<{fact.state.value}>"

    return {
        "te_doctor": __version__,
        "rules": _rules_digest(),
        "python": shown(snapshot.host.python_executable),
        "driver": shown(snapshot.driver.version),
        "gpus": [[shown(g.name), shown(g.compute_capability)] for g in snapshot.gpus if g.visible],
        "torch": shown(snapshot.torch.version),
        "torch_cuda": shown(snapshot.torch.cuda_version),
        "transformer_engine": shown(snapshot.transformer_engine.version),
        "cuda_runtime": shown(snapshot.cuda.runtime_version),
        "cudnn": shown(snapshot.cudnn.version),
        "smoke": smoke,
    }


def cache_key(facts: Mapping[str, Any]) -> str:
    """A stable hash of ``key_facts``."""
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


@functools.cache
def _rules_digest() -> str:
    """The shipped rules and smoke child decide too (they change without a version bump)."""
    from te_doctor.smoke.runner import CHILD

    digest = hashlib.sha256()
    for file in [*sorted(builtin_rules_dir().glob("*.toml")), CHILD]:
        with contextlib.suppress(OSError):
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def read_cache(file: Path, key: str) -> tuple[PathVerdict, ...] | None:
    """The cached ranking, or None when the file is missing, corrupt or for another key."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        if data["format"] != CACHE_FORMAT or data["key"] != key:
            return None
        return tuple(_verdict(item) for item in data["paths"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _verdict(item: Mapping[str, Any]) -> PathVerdict:
    text = ("id", "title", "verification", "evidence")
    lists = ("families", "reasons")
    if not all(isinstance(item[k], str) for k in text) or not all(
        isinstance(item[k], list) and all(isinstance(x, str) for x in item[k]) for k in lists
    ):
        raise TypeError("malformed path verdict")
    if not isinstance(item["viable"], bool) or not isinstance(item["blocked_by_rules"], bool):
        raise TypeError("malformed path verdict")
    return PathVerdict(
        id=item["id"],
        title=item["title"],
        families=tuple(item["families"]),
        viable=item["viable"],
        verification=item["verification"],
        evidence=item["evidence"],
        blocked_by_rules=item["blocked_by_rules"],
        reasons=tuple(item["reasons"]),
    )


def write_cache(
    file: Path, key: str, facts: Mapping[str, Any], verdicts: Sequence[PathVerdict]
) -> None:
    """Write the decision atomically; an unwritable cache is not an error."""
    record = {
        "format": CACHE_FORMAT,
        "key": key,
        "facts": facts,
        "decided_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "paths": [dataclasses.asdict(v) for v in verdicts],
    }
    with contextlib.suppress(OSError):
        write_atomically(file, json.dumps(record, indent=2))


@contextlib.contextmanager
def locked(file: Path, wait_s: float) -> Iterator[str]:
    """Hold ``file.lock`` so that ranks starting together run one smoke test, not eight.

    Yields ``"held"``; ``"busy"`` when another process still held it after ``wait_s`` (its
    decision should end within its smoke timeout) and this one goes on without it;
    ``"unavailable"`` when no lock can be taken here (an unwritable or lock-less filesystem).
    """
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        handle = open(file.with_suffix(".lock"), "a")  # closed by the with below
    except OSError:
        yield "unavailable"
        return
    with handle:
        yield _acquire(handle.fileno(), wait_s)


def _acquire(fd: int, wait_s: float) -> str:
    """``flock`` without blocking, retried every ``LOCK_POLL_S`` until ``wait_s`` has passed."""
    deadline = time.monotonic() + wait_s
    state = _try_lock(fd)
    while state == "busy" and (left := deadline - time.monotonic()) > 0:
        time.sleep(min(LOCK_POLL_S, left))
        state = _try_lock(fd)
    return state


def _try_lock(fd: int) -> str:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return "busy"
    except OSError:
        return "unavailable"
    return "held"
