"""The pure-Python ELF reader: libraries a binary needs, and the GPU code it carries."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from te_doctor.probes.elf import ElfError, device_architectures, read_dynamic
from tests.elf_builder import elf_with_sections, fatbin
from tests.machines import elf_shared_object


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "lib.so"
    path.write_bytes(data)
    return path


def test_cubins_and_ptx_across_several_fatbins(tmp_path: Path) -> None:
    section = fatbin([(2, 90), (2, 80), (1, 90)]) + fatbin([(2, 120), (2, 80)])
    path = write(tmp_path, elf_with_sections({".text": b"\x90" * 16, ".nv_fatbin": section}))
    assert device_architectures(path) == ("sm_80", "compute_90", "sm_90", "sm_120")


def test_no_gpu_code_and_not_elf(tmp_path: Path) -> None:
    assert device_architectures(write(tmp_path, elf_with_sections({".text": b"\0" * 8}))) == ()
    with pytest.raises(ElfError):
        device_architectures(write(tmp_path, b"MZ not an ELF file at all"))


def test_garbage_inside_the_section_is_skipped(tmp_path: Path) -> None:
    section = b"\0" * 24 + fatbin([(2, 89)])
    path = write(tmp_path, elf_with_sections({".nv_fatbin": section}))
    assert device_architectures(path) == ("sm_89",)


def test_needed_libraries_of_a_real_shared_object(tmp_path: Path) -> None:
    library = next(Path("/usr/lib/x86_64-linux-gnu").glob("libz.so.1*"), None)
    if library is None:
        pytest.skip("no libz.so.1 on this machine")
    info = read_dynamic(library)
    assert "libc.so.6" in info.needed


def test_a_statically_linked_or_truncated_file(tmp_path: Path) -> None:
    with pytest.raises(ElfError, match="no dynamic section"):
        read_dynamic(write(tmp_path, elf_with_sections({".text": b"\0"})))
    real = Path(sys.executable).resolve()
    truncated = tmp_path / "cut.so"
    shutil.copy(real, truncated)
    with truncated.open("r+b") as handle:
        handle.truncate(80)
    with pytest.raises(ElfError, match="truncated or corrupt"):
        read_dynamic(truncated)
    with pytest.raises(ElfError, match="truncated or corrupt"):
        device_architectures(truncated)


def test_stripped_object_without_section_headers_has_no_readable_gpu_code(tmp_path: Path) -> None:
    data = bytearray(elf_with_sections({".nv_fatbin": fatbin([(2, 90)])}))
    data[0x28:0x30] = b"\0" * 8  # e_shoff = 0: no section header table
    data[0x3C:0x40] = b"\0" * 4  # e_shnum = e_shstrndx = 0
    assert device_architectures(write(tmp_path, bytes(data))) == ()


REAL_FATBIN = Path(__file__).parent / "data" / "elf" / "libarchs.so"


def test_real_nvcc_fatbin_keeps_arch_and_family_suffixes() -> None:
    """nvcc 13.0 output: what cuobjdump lists, plus the ``f`` it prints as a plain arch."""
    listed = (REAL_FATBIN.parent / "libarchs.list-elf.txt").read_text().split()
    cubins = {word.rsplit(".", 2)[1] for word in listed if word.endswith(".cubin")}
    assert cubins == {"sm_80", "sm_90a", "sm_100", "sm_100a", "sm_120"}
    found = device_architectures(REAL_FATBIN)
    assert set(found) == {"sm_80", "sm_90a", "sm_100a", "sm_100f", "sm_120", "compute_90a"}
    assert {a.rstrip("f") for a in found if a.startswith("sm_")} == cubins


def test_rpath_and_runpath_are_kept_apart(tmp_path: Path) -> None:
    """glibc searches DT_RPATH before LD_LIBRARY_PATH and DT_RUNPATH after: never merge them."""
    both = write(
        tmp_path,
        elf_shared_object(
            "libx.so.1", ("libdep.so.2",), rpath="$ORIGIN/r1:/r2", runpath="$ORIGIN/../lib"
        ),
    )
    info = read_dynamic(both)
    assert info.needed == ("libdep.so.2",)
    assert info.soname == "libx.so.1"
    assert info.rpath == ("$ORIGIN/r1", "/r2")
    assert info.runpath == ("$ORIGIN/../lib",)
    plain = read_dynamic(write(tmp_path, elf_shared_object("liby.so", ("libz.so.1",))))
    assert (plain.rpath, plain.runpath) == ((), ())


@pytest.mark.parametrize(
    ("name", "rpath", "runpath"),
    [
        ("librpath.so", ("$ORIGIN/first", "/opt/second"), ()),
        ("librunpath.so", (), ("$ORIGIN/first", "/opt/second")),
    ],
)
def test_real_linker_output_matches_readelf(
    name: str, rpath: tuple[str, ...], runpath: tuple[str, ...]
) -> None:
    """gcc/ld 2.40 output, written with --disable-new-dtags and --enable-new-dtags."""
    library = REAL_FATBIN.parent / name
    listed = (library.parent / name.replace(".so", ".readelf-d.txt")).read_text()
    tag = "RPATH" if rpath else "RUNPATH"
    assert f"({tag})" in listed and "$ORIGIN/first:/opt/second" in listed
    info = read_dynamic(library)
    assert (info.rpath, info.runpath) == (rpath, runpath)
    assert info.needed == ("libdep.so.1",)
    assert info.soname == name
