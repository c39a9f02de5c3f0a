"""te-doctor: can this machine run Transformer Engine FP8? If not, why, and what works instead."""

from __future__ import annotations

__version__ = "0.1.0"
