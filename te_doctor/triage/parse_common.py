"""What every triage parser shares: the cleaned-up text, what a parser found, and value checks.

Pasted text is untrusted and can be huge, so :func:`prepare` keeps only the first and last
few megabytes, undoes Markdown quoting, ``<details>`` wrappers and code fences, and splits it
into lines once. Every regular expression in the triage package is bounded (no unbounded
repetition inside a repetition) so scanning stays linear in the size of that text.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

#: How much of a huge paste is scanned: its head and its tail.
SCAN_HEAD = 2_000_000
SCAN_TAIL = 2_000_000
#: ``Windows 11 Pro 10.0.26200``, ``Microsoft Windows 10 Home``, ``Windows-10-10.0.19045-SP0``.
WINDOWS = re.compile(r"(?:Microsoft[ \t])?Windows\b[^\n|]{0,80}", re.IGNORECASE)
#: Lines longer than this are cut (a reflowed collect_env paragraph is well under it; the
#: line-based parsers bound the lines they look at much more tightly).
MAX_LINE = 100_000
#: The longest snippet of pasted text quoted in a fact's source.
MAX_SNIPPET = 160
#: The most observations one parser keeps (a real report has a few thousand at most).
MAX_OBSERVATIONS = 20_000

_QUOTE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?){1,16}")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
#: A syslog/journald prefix (``Aug 12 10:38:34 host unit[4073]: ``): taken off each line, so a
#: message a service logged reads as the program printed it (continuation lines included).
_SYSLOG = re.compile(
    rf"^(?:{'|'.join(_MONTHS)}) [ \d]\d \d\d:\d\d:\d\d "  # the time stamp, then host and unit
    r"[\w.-]{1,64} [\w.@/:-]{1,80}(?:\[\d{1,10}\])?: "
)
_FENCE = re.compile(r"^[ \t]{0,12}(?:`{3,12}|~{3,12})[ \t]{0,4}[\w+.#-]{0,30}[ \t]{0,4}$")
_TAG = re.compile(
    r"</?(?:details|summary|code|pre|br|p|b|i|kbd|sub|sup|tt)\b[^<>\n]{0,200}>", re.IGNORECASE
)
_VERSION = re.compile(
    r"\d{1,9}(?:\.\d{1,9}){0,6}(?:(?:a|b|rc|\.?post|\.?dev)\d{0,12}){0,3}"
    r"(?:\+[A-Za-z0-9]{1,40}(?:[._][A-Za-z0-9]{1,40}){0,8})?"
)
_PACKAGE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,120}")


@dataclass(frozen=True, slots=True)
class Report:
    """The pasted text after clean-up, whole and as lines (each at most ``MAX_LINE`` long).

    ``last_line_complete`` says whether the paste's last line visibly ended (a newline or a
    closing code fence followed it); when it did not, its last word may be cut short, and
    ``cut_from`` is where that word starts (past the end of the text when nothing is cut).
    """

    text: str
    lines: tuple[str, ...]
    last_line_complete: bool = True
    cut_from: int = 1 << 62
    starts: tuple[int, ...] = ()  # where each line starts in ``text``

    def line_is_complete(self, number: int) -> bool:
        """False only for a last line that may have been cut short."""
        return number < len(self.lines) - 1 or self.last_line_complete

    def complete_lines(self) -> tuple[str, ...]:
        """The lines, without a last one that may have been cut short."""
        return self.lines if self.last_line_complete else self.lines[:-1]

    def cut_at(self, end: int) -> bool:
        """True when a value ending at offset ``end`` may be a cut-short last word."""
        return end > self.cut_from

    def line_at(self, offset: int) -> int:
        """The number of the line that holds character ``offset`` of ``text``."""
        if not self.starts:  # a Report built by hand, not by prepare()
            return self.text.count("\n", 0, offset)
        return max(bisect.bisect_right(self.starts, offset) - 1, 0)


@dataclass(frozen=True, slots=True)
class Observation:
    """One value one parser read: the fact path, the value, and where in the text it was."""

    path: str
    value: object
    source: str


@dataclass
class Findings:
    """What one parser found: observations, the report formats it recognised, the lines it
    owns (a te-doctor snapshot's own error text is not a new error), errors it read that are
    not lines of the paste (a smoke test's error inside a pasted te-doctor report), and facts
    the text says are not there (``(path, source)``: a report's "NVIDIA driver: not installed")."""

    observations: list[Observation] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    owned_lines: list[tuple[int, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    absent: list[tuple[str, str]] = field(default_factory=list)

    def add(self, path: str, value: object, source: str) -> None:
        """Record ``value`` for ``path``, read from ``source`` (beyond the cap: dropped)."""
        if len(self.observations) < MAX_OBSERVATIONS:
            self.observations.append(Observation(path, value, source))

    def own(self, start: int, end: int) -> None:
        """Mark lines ``start`` to ``end - 1`` as read by this parser (an environment listing)."""
        if self.owned_lines and self.owned_lines[-1][1] == start:
            self.owned_lines[-1] = (self.owned_lines[-1][0], end)
        else:
            self.owned_lines.append((start, end))

    def recognised(self, fmt: str) -> None:
        """Note that a report of kind ``fmt`` was found."""
        if fmt not in self.formats:
            self.formats.append(fmt)


def prepare(raw: str) -> Report:
    """Cap, normalise line endings, and strip Markdown quoting, HTML wrappers and fences."""
    if len(raw) > SCAN_HEAD + SCAN_TAIL:
        raw = raw[:SCAN_HEAD] + "\n" + raw[-SCAN_TAIL:]
    text = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").replace("\ufeff", "")
    complete = text.endswith("\n")
    if complete:  # no empty last "line": a blank line after a list is a sign it is complete
        text = text[:-1]
    lines = []
    for line in text.split("\n"):
        line = line[:MAX_LINE]
        if ">" in line[:40]:
            line = _QUOTE.sub("", line, count=1)
        if line[:3] in _MONTHS:
            line = _SYSLOG.sub("", line, count=1)
        if "<" in line:
            line = _TAG.sub("", line)
        fence = ("```" in line or "~~~" in line) and bool(_FENCE.match(line))
        lines.append("" if fence else line.rstrip())
    joined = "\n".join(lines)
    starts = tuple(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    if complete or fence:
        return Report(joined, tuple(lines), starts=starts)
    stripped = joined.rstrip()
    last_word = max(stripped.rfind(" "), stripped.rfind("\t"), stripped.rfind("\n")) + 1
    return Report(joined, tuple(lines), last_line_complete=False, cut_from=last_word, starts=starts)


@functools.lru_cache(maxsize=4096)
def version_or_none(text: str, min_parts: int = 1) -> str | None:
    """``text`` if it is a PEP 440 version with at least ``min_parts`` release numbers."""
    if not 0 < len(text) <= 100 or not _VERSION.fullmatch(text):
        return None
    try:
        parsed = Version(text)
    except InvalidVersion:
        return None
    return text if len(parsed.release) >= min_parts else None


@functools.lru_cache(maxsize=4096)
def package_path(name: str) -> str | None:
    """The fact path of distribution ``name`` (``packages.transformer_engine``), or None."""
    if not _PACKAGE_NAME.fullmatch(name):
        return None
    return "packages." + canonicalize_name(name).replace("-", "_")


def read_mask(count: int, spans: Iterable[tuple[int, int]]) -> bytearray:
    """One byte per line of ``count``: non-zero for the lines inside ``spans`` (``(start, end)``
    pairs, end excluded, clipped to the lines there are)."""
    read = bytearray(count)
    for start, end in spans:
        start, end = max(start, 0), min(end, count)
        read[start:end] = b"\x01" * max(end - start, 0)
    return read


def snippet(text: str) -> str:
    """``text`` with runs of whitespace collapsed, cut to ``MAX_SNIPPET`` characters."""
    collapsed = " ".join(text[: MAX_SNIPPET * 4].split())
    if len(collapsed) > MAX_SNIPPET:
        collapsed = collapsed[: MAX_SNIPPET - 3] + "..."
    return collapsed


def source(fmt: str, text: str) -> str:
    """A fact's source: the report kind and the text it was read from."""
    return f"{fmt}: {snippet(text)!r}"
