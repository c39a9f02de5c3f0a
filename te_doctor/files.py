"""Small file helpers shared by the caches, the bench store, node reports and child results."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

#: Overrides where te-doctor keeps its caches (the path cache and the bench store).
CACHE_DIR_VARIABLE = "TE_DOCTOR_CACHE_DIR"


def cache_root() -> Path:
    """``$TE_DOCTOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/te-doctor``, else ``~/.cache/te-doctor``."""
    override = os.environ.get(CACHE_DIR_VARIABLE, "")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "te-doctor"


def write_atomically(target: Path, text: str) -> None:
    """Replace ``target`` with ``text`` so that a reader sees the old file or the new, never half.

    The temporary file is a dot-file in the same directory (never ``*.json``), removed on failure.
    The file gets the mode a plain ``open()`` would give it (0666 less the umask), not
    ``mkstemp``'s 0600, so that a group sharing the directory can read it.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def current_umask() -> int:
    """The process umask, read without changing it where Linux shows it (``/proc/self/status``)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere the only way to read it is to set it, and set it back
    os.umask(mask)
    return mask


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
