"""Build minimal ELF files with a ``.nv_fatbin`` section, to test the fatbin reader honestly."""

from __future__ import annotations

import struct

FATBIN_MAGIC = 0xBA55ED50


def fatbin(entries: list[tuple[int, int]], payload: int = 40) -> bytes:
    """One fatbin holding ``(kind, arch)`` entries (kind 1 = PTX, 2 = cubin)."""
    body = b""
    for kind, arch in entries:
        header = struct.pack("<HHIQ", kind, 0x0101, 64, payload)
        header += b"\0" * 12 + struct.pack("<I", arch)
        header = header.ljust(64, b"\0")
        body += header + b"\xab" * payload
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def elf_with_sections(sections: dict[str, bytes]) -> bytes:
    """A 64-bit little-endian ELF whose only content is the given sections."""
    names = b"\0.shstrtab\0" + b"".join(name.encode() + b"\0" for name in sections)
    blobs = [names, *sections.values()]
    offsets, data = [], b""
    for blob in blobs:
        offsets.append(64 + len(data))
        data += blob + b"\0" * (-len(blob) % 8)
    shoff = 64 + len(data)
    name_offsets = [1] + [names.index(name.encode() + b"\0") for name in sections]
    headers = b"\0" * 64  # the null section
    for name_offset, offset, blob in zip(name_offsets, offsets, blobs, strict=True):
        headers += struct.pack("<IIQQQQIIQQ", name_offset, 1, 0, 0, offset, len(blob), 0, 0, 1, 0)
    ident = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    header = ident + struct.pack(
        "<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64, len(blobs) + 1, 1
    )
    return header + data + headers
