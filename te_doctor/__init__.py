"""te-doctor: can this machine run Transformer Engine FP8? If not, why, and what works instead."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["SelectedPath", "__version__", "select_path"]

if TYPE_CHECKING:
    from te_doctor.runtime.selection import SelectedPath, select_path


def __getattr__(name: str) -> Any:
    """The runtime API loads on first use, so ``import te_doctor`` stays light (PEP 562)."""
    if name in ("select_path", "SelectedPath"):
        from te_doctor.runtime import selection

        return getattr(selection, name)
    raise AttributeError(f"module 'te_doctor' has no attribute {name!r}")
