"""A real, deliberately broken Transformer Engine install in a cached virtual environment.

torch (CPU build) and the TE 2.20.2 wheels for CUDA 13 are installed with ``--no-deps`` for TE:
no cuDNN, cuBLAS or NCCL wheels come with them, so ``import transformer_engine`` fails on a
machine without a system cuDNN. The venv is built once (in a staging directory, renamed into
place only when complete) and reused, keyed by a hash of what is installed and which Python
built it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

#: One ``pip install`` per entry, in order: TE first, so that a machine without network fails
#: (and the tests skip) in seconds. The CPU index is where pip finds the CPU build of torch when
#: no local wheel is configured.
INSTALLS: tuple[tuple[str, ...], ...] = (
    ("--no-deps", "transformer-engine==2.20.2", "transformer-engine-cu13==2.20.2"),
    # This project's machines carry the CPU build of torch 2.13.0 locally; the tests check
    # that it is the CPU build ("+cpu"), so a CUDA build from elsewhere fails loudly.
    ("torch==2.13.0",),
)
BUILD_TIMEOUT_S = 1800
#: pip output meaning a package index could not be reached at all.
_OFFLINE_MARKERS = (
    "NewConnectionError",
    "ConnectTimeoutError",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "ProxyError",
)


class OfflineError(RuntimeError):
    """pip failed while a package index was unreachable."""


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/te-doctor-tests``, or ``~/.cache/te-doctor-tests``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "te-doctor-tests"


def venv_dir(installs: tuple[tuple[str, ...], ...] = INSTALLS, name: str = "broken-te") -> Path:
    """Where the venv for ``installs`` and the running Python lives, built or not."""
    key = repr((installs, sys.version, sys.base_prefix)).encode()
    return cache_root() / f"{name}-{hashlib.sha256(key).hexdigest()[:16]}"


def venv_python(venv: Path) -> Path:
    """The interpreter of a venv."""
    return venv / "bin" / "python"


def ensure_venv(installs: tuple[tuple[str, ...], ...] = INSTALLS, name: str = "broken-te") -> Path:
    """The venv's interpreter, building the venv first if needed (may raise ``OfflineError``)."""
    target = venv_dir(installs, name)
    if venv_python(target).exists():
        return venv_python(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        _build(staging, installs)
        shutil.rmtree(target, ignore_errors=True)  # left over, its base interpreter gone
        try:
            staging.rename(target)
        except OSError:
            if not venv_python(target).exists():  # else a concurrent build got there first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return venv_python(target)


def _build(venv: Path, installs: tuple[tuple[str, ...], ...]) -> None:
    run_install([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--no-input", "--progress-bar", "off"]
    for args in installs:
        run_install([*pip, *args])


def run_install(argv: Sequence[str]) -> None:
    """Run an install command; ``OfflineError`` when it failed for want of a package index."""
    result = subprocess.run(
        argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
    )
    if result.returncode == 0:
        return
    output = result.stdout + result.stderr
    if any(marker in output for marker in _OFFLINE_MARKERS):
        errors = [line for line in output.splitlines() if line.startswith("ERROR:")]
        raise OfflineError(errors[-1] if errors else f"{argv[-1]}: pip exited {result.returncode}")
    raise RuntimeError(f"{' '.join(argv)} exited {result.returncode}:\n{output[-3000:]}")
