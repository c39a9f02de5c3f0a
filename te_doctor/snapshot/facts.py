"""One fact: a value, or the reason it is absent or unknown, plus which probe said so.

``absent`` means the probe looked and the thing is not there (no NVIDIA driver, torch not
installed). ``unknown`` means the probe could not tell (a tool hung, a file was corrupt).
Rules treat the two differently, so they are never folded together.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, NewType, TypeVar

T = TypeVar("T")

#: A version string, compared with ``packaging`` (``"12.4"``, ``"2.6.0a0+ecf3bae40a"``).
Version = NewType("Version", str)
#: A CUDA compute capability ``"major.minor"``, compared as an integer tuple (``"12.0" > "9.0"``).
ComputeCapability = NewType("ComputeCapability", str)


class FactState(str, enum.Enum):
    """Whether a fact holds a value, is known not to exist, or could not be determined."""

    KNOWN = "known"
    ABSENT = "absent"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Fact(Generic[T]):
    """A single observed fact. Build it with :meth:`of`, :meth:`absent` or :meth:`unknown`."""

    state: FactState
    value: T | None
    reason: str
    source: str

    @classmethod
    def of(cls, value: T, source: str) -> Fact[T]:
        """A fact with a value, found by ``source`` (``"probe:method"``)."""
        return cls(FactState.KNOWN, value, "", source)

    @classmethod
    def absent(cls, reason: str, source: str) -> Fact[T]:
        """The probe looked, and the thing does not exist here; ``reason`` says how it knows."""
        return cls(FactState.ABSENT, None, reason, source)

    @classmethod
    def unknown(cls, reason: str, source: str) -> Fact[T]:
        """The probe could not tell; ``reason`` says why."""
        return cls(FactState.UNKNOWN, None, reason, source)

    @property
    def known(self) -> bool:
        """True when the fact holds a value."""
        return self.state is FactState.KNOWN

    def get(self) -> T | None:
        """The value, or None when absent or unknown."""
        return self.value if self.state is FactState.KNOWN else None
