"""Read the DT_NEEDED and RUNPATH entries of an ELF shared object, in pure Python.

This tells which libraries a TE binary will ask the loader for, without loading it (``ldd``
would run the dynamic loader; ``dlopen`` could crash or hang the process).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 15, 29


class ElfError(ValueError):
    """The file is not a 64-bit little-endian ELF shared object we can read."""


@dataclass(frozen=True, slots=True)
class DynamicInfo:
    """The dynamic-linking entries of one shared object."""

    needed: tuple[str, ...]
    runpath: tuple[str, ...]


def read_dynamic(path: Path) -> DynamicInfo:
    """Parse ``path``; raises ``OSError`` or ``ElfError``."""
    with path.open("rb") as handle:
        header = handle.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
            raise ElfError(f"{path.name}: not a 64-bit little-endian ELF file")
        phoff, phentsize, phnum = (
            struct.unpack_from("<Q", header, 32)[0],
            *struct.unpack_from("<HH", header, 54),
        )
        handle.seek(phoff)
        table = handle.read(phentsize * phnum)
        segments = [struct.unpack_from("<IIQQQQ", table, i * phentsize) for i in range(phnum)]
        loads = [(s[3], s[2], s[5]) for s in segments if s[0] == _PT_LOAD]  # vaddr, offset, filesz
        dynamic = next((s for s in segments if s[0] == _PT_DYNAMIC), None)
        if dynamic is None:
            raise ElfError(f"{path.name}: no dynamic section (statically linked?)")
        handle.seek(dynamic[2])
        raw = handle.read(dynamic[5])
        entries = [struct.unpack_from("<qQ", raw, i) for i in range(0, len(raw) - 15, 16)]
        strtab_vaddr = next((value for tag, value in entries if tag == _DT_STRTAB), None)
        if strtab_vaddr is None:
            raise ElfError(f"{path.name}: dynamic section has no string table")
        strtab = _file_offset(strtab_vaddr, loads, path)

        def string(offset: int) -> str:
            handle.seek(strtab + offset)
            return handle.read(4096).split(b"\0", 1)[0].decode("utf-8", errors="replace")

        needed: list[str] = []
        runpath: list[str] = []
        for tag, value in entries:
            if tag == _DT_NULL:
                break
            if tag == _DT_NEEDED:
                needed.append(string(value))
            elif tag in (_DT_RPATH, _DT_RUNPATH):
                runpath.extend(p for p in string(value).split(":") if p)
    return DynamicInfo(tuple(needed), tuple(runpath))


def _file_offset(vaddr: int, loads: list[tuple[int, int, int]], path: Path) -> int:
    for start, offset, size in loads:
        if start <= vaddr < start + size:
            return offset + (vaddr - start)
    raise ElfError(f"{path.name}: string table outside every loadable segment")
