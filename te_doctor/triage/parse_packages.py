"""Installed packages: ``pip list`` (also grepped), ``conda list``, ``pip freeze``, ``pip show``.

``pip list`` prints aligned columns; people often paste it through ``grep``, losing the header,
so a table is recognised by three or more ``name  version`` rows whose version column lines up
(or by its ``Package  Version`` header). ``pip freeze`` needs three ``name==version`` lines in a
row; ``name @ file:///...`` lines say nothing about the version and give no fact.
"""

from __future__ import annotations

import re

from te_doctor.triage.parse_common import (
    Findings,
    Report,
    package_path,
    source,
    version_or_none,
)

PIP_LIST = "pip-list"
CONDA_LIST = "conda-list"
PIP_FREEZE = "pip-freeze"
PIP_SHOW = "pip-show"

_ROW = re.compile(
    r"[ \t]{0,8}([A-Za-z0-9_][A-Za-z0-9._-]{0,120})([ \t]{1,80})(\d[0-9A-Za-z.+!_-]{0,80})"
    r"(?:[ \t]{1,80}(\S.{0,600}))?"
)
_HEADER = re.compile(r"(?:#[ \t]{0,4}Name|Package)[ \t]{1,80}(Version)\b.{0,200}")
_DASHES = re.compile(r"-{3,200}(?:[ \t]{1,20}-{3,200}){0,4}")
_CONDA_BUILD = re.compile(r"(?:pypi_0|[a-z0-9]{0,30}_\d{1,4}|[a-z]?[0-9a-f]{7})")
_FREEZE = re.compile(
    r"[ \t]{0,8}([A-Za-z0-9_][A-Za-z0-9._-]{0,120})(?:\[[^\]\n]{0,200}\])?[ \t]{0,4}==[ \t]{0,4}"
    r"([^\s;#,=]{1,100})[ \t]{0,4}(?:[;#].{0,300})?"
)
#: Lines that may sit inside a freeze listing without a version: editable installs, direct
#: references, and the wrapped tail of a long ``name @ file:///...whl`` line.
_FREEZE_OTHER = re.compile(
    r"[ \t]{0,8}(?:-e[ \t]|[A-Za-z0-9_][A-Za-z0-9._-]{0,120}[ \t]{1,4}@[ \t]"
    r"|[^\s=]{1,400}\.whl(?:#sha256=[0-9a-f]{64})?[ \t]*$)"
)
_SHOW_NAME = re.compile(r"Name:[ \t]{0,10}([A-Za-z0-9_][A-Za-z0-9._-]{0,120})")
_SHOW_VERSION = re.compile(r"Version:[ \t]{0,10}(\S{1,100})")
_MIN_ROWS = 3


def parse(report: Report) -> Findings:
    """Package versions from every listing in the text."""
    found = Findings()
    lines = report.complete_lines()  # a row cut short could show a cut version
    _tables(lines, found)
    if "==" in report.text:
        _freeze(lines, found)
    if "Name:" in report.text and "Version:" in report.text:
        _show(lines, found)
    return found


def _tables(lines: tuple[str, ...], found: Findings) -> None:
    block: list[tuple[str, str, str, int]] = []  # (name, version, rest, gap) in one column
    column = -1
    header = False
    for number, line in enumerate([*lines, ""]):
        row = _ROW.fullmatch(line) if len(line) < 800 else None
        if row and (not block or row.start(3) == column):
            column = row.start(3)
            block.append((row.group(1), row.group(3), row.group(4) or "", len(row.group(2))))
            continue
        if _flush_table(block, header, found):
            found.own(number - len(block), number)
        block, column = [], -1
        stripped = line.strip()
        head = _HEADER.fullmatch(stripped) if len(line) < 800 else None
        header = head is not None or (header and bool(_DASHES.fullmatch(stripped)))
        if row:  # a row in another column starts a new table
            column = row.start(3)
            block.append((row.group(1), row.group(3), row.group(4) or "", len(row.group(2))))


def _flush_table(rows: list[tuple[str, str, str, int]], header: bool, found: Findings) -> bool:
    """Record one table's rows if it really looks like ``pip list`` / ``conda list`` output."""
    if not header and (len(rows) < _MIN_ROWS or max(gap for *_, gap in rows) < 2):
        return False
    names = [name.lower() for name, *_ in rows]
    if len(set(names)) < len(names):
        return False  # pip and conda never list a name twice: some other table (ls -l, ...)
    good = [(n, v, rest) for n, raw, rest, _ in rows if (v := version_or_none(raw)) is not None]
    if not good or len(good) * 2 < len(rows):
        return False  # mostly not versions: some other aligned table
    conda = sum(bool(_CONDA_BUILD.fullmatch(rest.split()[0])) for _, _, rest in good if rest)
    fmt = CONDA_LIST if conda * 2 > len(good) else PIP_LIST
    for name, version, _rest in good:
        path = package_path(name)
        if path is not None:
            found.recognised(fmt)
            found.add(path, version, source(fmt, f"{name} {version}"))
    return True


def _freeze(lines: tuple[str, ...], found: Findings) -> None:
    block: list[tuple[str, str]] = []
    start = 0
    for number, line in enumerate([*lines, ""]):
        if len(line) < 800:
            pin = _FREEZE.fullmatch(line)
            if pin:
                start = start if block else number
                block.append((pin.group(1), pin.group(2)))
                continue
            if block and _FREEZE_OTHER.match(line):
                continue
        if len(block) >= _MIN_ROWS:
            found.own(start, number)
            for name, raw in block:
                path, version = package_path(name), version_or_none(raw)
                if path is not None and version is not None:
                    found.recognised(PIP_FREEZE)
                    found.add(path, version, source(PIP_FREEZE, f"{name}=={version}"))
        block = []


def _show(lines: tuple[str, ...], found: Findings) -> None:
    for i, line in enumerate(lines[:-1]):
        name = _SHOW_NAME.fullmatch(line.strip()) if line.startswith("Name:") else None
        if name is None:
            continue
        shown = _SHOW_VERSION.fullmatch(lines[i + 1].strip())
        version = version_or_none(shown.group(1)) if shown else None
        path = package_path(name.group(1))
        if version is not None and path is not None:
            found.own(i, i + 2)
            found.recognised(PIP_SHOW)
            found.add(path, version, source(PIP_SHOW, f"Name: {name.group(1)} Version: {version}"))
