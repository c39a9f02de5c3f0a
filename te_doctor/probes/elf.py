"""Read an ELF shared object in pure Python: its dynamic-linking entries and its GPU code.

This tells which libraries a TE binary will ask the loader for, and which GPU architectures
torch or TE were compiled for, without loading anything (``ldd`` would run the dynamic loader;
``dlopen`` could crash or hang the process). Only headers are read, so even a 500 MB
``libtorch_cuda.so`` takes milliseconds.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_PT_LOAD, _PT_DYNAMIC = 1, 2
_FATBIN_MAGIC = 0xBA55ED50
_FATBIN_PTX, _FATBIN_CUBIN = 1, 2
#: Bits of the fatbin entry's flags word (offset 40) that mark arch-specific and
#: family-specific code: nvcc's ``sm_90a`` / ``sm_100f`` (checked against real nvcc 13.0 output,
#: tests/data/elf/README.md).
_ARCH_SPECIFIC, _FAMILY_SPECIFIC = 0x100000, 0x200000
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 14, 15, 29


class ElfError(ValueError):
    """The file is not a 64-bit little-endian ELF shared object we can read."""


@dataclass(frozen=True, slots=True)
class DynamicInfo:
    """The dynamic-linking entries of one shared object.

    ``rpath`` (DT_RPATH) and ``runpath`` (DT_RUNPATH) are kept apart because glibc treats them
    differently: DT_RPATH is searched before LD_LIBRARY_PATH, and only when the object has no
    DT_RUNPATH; DT_RUNPATH is searched after LD_LIBRARY_PATH (``ld.so(8)``).
    """

    needed: tuple[str, ...]
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    soname: str = ""


def read_dynamic(path: Path) -> DynamicInfo:
    """Parse ``path``; raises ``OSError`` or ``ElfError``."""
    try:
        return _read_dynamic(path)
    except struct.error as exc:
        raise ElfError(f"{path.name}: truncated or corrupt ELF file ({exc})") from None


def _read_dynamic(path: Path) -> DynamicInfo:
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
        paths: dict[int, list[str]] = {_DT_RPATH: [], _DT_RUNPATH: []}
        soname = ""
        for tag, value in entries:
            if tag == _DT_NULL:
                break
            if tag == _DT_NEEDED:
                needed.append(string(value))
            elif tag == _DT_SONAME:
                soname = string(value)
            elif tag in paths:
                paths[tag].extend(p for p in string(value).split(":") if p)
    return DynamicInfo(tuple(needed), tuple(paths[_DT_RPATH]), tuple(paths[_DT_RUNPATH]), soname)


def _file_offset(vaddr: int, loads: list[tuple[int, int, int]], path: Path) -> int:
    for start, offset, size in loads:
        if start <= vaddr < start + size:
            return offset + (vaddr - start)
    raise ElfError(f"{path.name}: string table outside every loadable segment")


def device_architectures(path: Path) -> tuple[str, ...]:
    """GPU code in the ``.nv_fatbin`` section: ``sm_90`` for cubins, ``compute_90`` for PTX.

    Arch-specific code keeps nvcc's suffix: ``sm_90a`` (runs on exactly that GPU) and
    ``sm_100f`` (runs on its family); ``cuobjdump --list-elf`` shows the latter as ``sm_100``.

    Raises ``OSError`` or ``ElfError``; an empty tuple means the binary holds no GPU code.
    """
    try:
        return _device_architectures(path)
    except struct.error as exc:
        raise ElfError(f"{path.name}: truncated or corrupt ELF file ({exc})") from None


def _device_architectures(path: Path) -> tuple[str, ...]:
    found: set[tuple[int, str]] = set()
    with path.open("rb") as handle:
        header = handle.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
            raise ElfError(f"{path.name}: not a 64-bit little-endian ELF file")
        section = _section(handle, header, ".nv_fatbin")
        if section is None:
            return ()
        position, end = section
        while position + 16 <= end:
            handle.seek(position)
            magic, _version, header_size, size = struct.unpack("<IHHQ", handle.read(16))
            if magic != _FATBIN_MAGIC:
                position += 8  # fatbins are 8-byte aligned inside the section
                continue
            entry, entries_end = position + header_size, position + header_size + size
            while entry + 32 <= entries_end:
                handle.seek(entry)
                raw = handle.read(48)
                kind, _, entry_header, payload = struct.unpack_from("<HHIQ", raw)
                arch = struct.unpack_from("<I", raw, 28)[0]
                has_flags = entry_header >= 44 and len(raw) >= 44
                flags = struct.unpack_from("<I", raw, 40)[0] if has_flags else 0
                if kind in (_FATBIN_PTX, _FATBIN_CUBIN) and arch:
                    prefix = "compute_" if kind == _FATBIN_PTX else "sm_"
                    found.add((arch, prefix + str(arch) + _suffix(flags)))
                if entry_header == 0:
                    break
                entry += entry_header + payload
            position = entries_end
    return tuple(name for _, name in sorted(found))


def _suffix(flags: int) -> str:
    if flags & _ARCH_SPECIFIC:
        return "a"
    return "f" if flags & _FAMILY_SPECIFIC else ""


def _section(handle: BinaryIO, header: bytes, wanted: str) -> tuple[int, int] | None:
    """(file offset, end) of the named section, or None."""
    shoff = struct.unpack_from("<Q", header, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", header, 0x3A)
    if shoff == 0 or entsize == 0:
        return None  # no section header table (a stripped object): nothing to find
    handle.seek(shoff)
    first = struct.unpack_from("<IIQQQQIIQQ", handle.read(entsize))
    if count == 0:
        count = first[5]  # more than 0xff00 sections: the count lives in section 0
    if names_index == 0xFFFF:
        names_index = first[6]  # SHN_XINDEX: the index lives in section 0's sh_link
    handle.seek(shoff)
    table = handle.read(entsize * count)
    sections = [struct.unpack_from("<IIQQQQ", table, i * entsize) for i in range(count)]
    if not 0 < names_index < len(sections):
        return None  # no section names: the .nv_fatbin section cannot be identified
    handle.seek(sections[names_index][4])
    names = handle.read(sections[names_index][5])
    for name_offset, *_rest, offset, size in sections:
        if names[name_offset:].split(b"\0", 1)[0].decode("ascii", "replace") == wanted:
            return offset, offset + size
    return None
