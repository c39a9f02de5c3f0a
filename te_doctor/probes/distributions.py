"""Find installed Python distributions by reading ``*.dist-info`` / ``*.egg-info`` metadata.

Nothing is imported, so a broken torch or TE install cannot crash or slow te-doctor down.
A corrupt or truncated METADATA becomes an ``InstalledDist`` with ``error`` set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from te_doctor.probes.context import InstalledDist

_METADATA_FILES = ("METADATA", "PKG-INFO")


def scan_distributions(root: Path, search_path: Iterable[str]) -> list[InstalledDist]:
    """Every distribution found in the directories of ``search_path`` (machine paths)."""
    found: list[InstalledDist] = []
    seen: set[str] = set()
    for entry in search_path:
        if not entry or entry in seen:
            continue
        seen.add(entry)
        directory = root / entry.lstrip("/")
        try:
            names = sorted(p.name for p in directory.iterdir())
        except OSError:
            continue
        found.extend(
            _read_dist(directory / name, entry)
            for name in names
            if name.endswith((".dist-info", ".egg-info"))
        )
    return found


def _read_dist(meta_dir: Path, location: str) -> InstalledDist:
    try:
        headers = _read_headers(meta_dir)
    except (OSError, ValueError) as exc:
        return InstalledDist(meta_dir.name, "", location, "", "", f"unreadable metadata: {exc}")
    name, version = headers.get("name", ""), headers.get("version", "")
    if not name or not version:
        missing = "Name" if not name else "Version"
        return InstalledDist(  # named by its directory, like any unreadable metadata
            meta_dir.name, version, location, "", "", f"metadata has no {missing} field"
        )
    installer = _read_optional(meta_dir / "INSTALLER").strip()
    direct_url = _direct_url_kind(_read_optional(meta_dir / "direct_url.json"))
    metadata_format = "egg-info" if meta_dir.name.endswith(".egg-info") else "dist-info"
    return InstalledDist(name, version, location, installer, direct_url, "", metadata_format)


def _read_headers(meta_dir: Path) -> dict[str, str]:
    """The RFC 822 header block of METADATA (or PKG-INFO; or an egg-info *file*), up to its
    first blank line. Only that block is decoded: the long description after it can be large,
    and bytes there that are not UTF-8 say nothing about the package."""
    headers: dict[str, str] = {}
    for raw in _metadata_file(meta_dir).read_bytes().splitlines():
        if not raw.strip():
            break
        key, sep, value = raw.decode("utf-8").partition(":")
        if sep and not key.startswith((" ", "\t")):
            headers.setdefault(key.strip().lower(), value.strip())
    return headers


def _metadata_file(meta_dir: Path) -> Path:
    """The file holding a distribution's metadata headers; ValueError when there is none."""
    if meta_dir.is_file():  # an egg-info file
        return meta_dir
    found = next((meta_dir / name for name in _METADATA_FILES if (meta_dir / name).is_file()), None)
    if found is None:
        raise ValueError("no METADATA or PKG-INFO file")
    return found


def _read_optional(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _direct_url_kind(text: str) -> str:
    """``editable``, ``local-dir``, ``vcs`` or ``archive`` from PEP 610 direct_url.json."""
    if not text:
        return ""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return "unreadable"
    if not isinstance(data, dict):
        return "unreadable"
    dir_info = data.get("dir_info")
    if isinstance(dir_info, dict):
        return "editable" if dir_info.get("editable") else "local-dir"
    if "vcs_info" in data:
        return "vcs"
    return "archive" if "archive_info" in data else ""
