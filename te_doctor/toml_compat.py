"""``tomllib`` on Python 3.11+, the ``tomli`` backport on 3.10: one place for the shim."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

__all__ = ["tomllib"]
