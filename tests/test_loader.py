"""The glibc loader model: search order, SONAME reuse, one object per file, and real glibc."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from te_doctor.probes.elf import DynamicInfo
from te_doctor.probes.loader import (
    LoaderPath,
    Process,
    Requester,
    requester_for,
    search,
    soname_of,
)
from te_doctor.probes.real import real_context
from tests.fakes import FakeMachine
from tests.machines import elf_shared_object

USER = "/opt/app/lib/libuser.so"


def _user(rpath: str = "", runpath: str = "") -> Requester:
    rp = tuple(p for p in rpath.split(":") if p)
    run = tuple(p for p in runpath.split(":") if p)
    return Requester(USER, DynamicInfo(("libdep.so.1",), rp, run, "libuser.so"))


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    m = FakeMachine(tmp_path)
    for directory in ("/opt/app/rpath", "/opt/ld", "/opt/app/runpath", "/cached", "/usr/lib64"):
        m.write(f"{directory}/libdep.so.1")
    return m


CACHE = (("libdep.so.1", "/cached/libdep.so.1"),)


@pytest.mark.parametrize(
    ("rpath", "runpath", "ld_path", "expected", "how"),
    [
        ("$ORIGIN/../rpath", "", ("/opt/ld",), "/opt/app/rpath", "DT_RPATH of libuser.so"),
        ("", "$ORIGIN/../runpath", ("/opt/ld",), "/opt/ld", "LD_LIBRARY_PATH"),
        ("", "$ORIGIN/../runpath", (), "/opt/app/runpath", "DT_RUNPATH of libuser.so"),
        # DT_RPATH is ignored when the object also has DT_RUNPATH
        ("$ORIGIN/../rpath", "/nowhere", (), "/cached", "the loader cache (ldconfig)"),
        ("", "", (), "/cached", "the loader cache (ldconfig)"),
    ],
)
def test_search_order(
    machine: FakeMachine,
    rpath: str,
    runpath: str,
    ld_path: tuple[str, ...],
    expected: str,
    how: str,
) -> None:
    found = search(
        machine.context(), "libdep.so.1", _user(rpath, runpath), LoaderPath(ld_path, CACHE)
    )
    assert found is not None
    assert (found.path, found.how) == (f"{expected}/libdep.so.1", how)


def test_default_directories_come_last_and_nothing_is_none(machine: FakeMachine) -> None:
    ctx = machine.context()
    found = search(ctx, "libdep.so.1", None, LoaderPath((), ()))
    assert found is not None and found.path == "/usr/lib64/libdep.so.1"
    assert search(ctx, "libother.so.3", None, LoaderPath(("/opt/ld",), CACHE)) is None


def test_a_loaded_soname_is_reused_and_a_file_is_one_object(machine: FakeMachine) -> None:
    machine.write("/opt/other/libdep.so.1.2.3", elf_shared_object("libdep.so.1", ()))
    machine.link("/opt/other/libdep.so.1", "libdep.so.1.2.3")
    process = Process(machine.context(), LoaderPath(("/opt/ld",), CACHE))
    first = process.request("/opt/other/libdep.so.1", None, "a dlopen by path")
    assert first.loaded is not None and first.loaded.soname == "libdep.so.1"
    again = process.request("/opt/other/libdep.so.1.2.3", None, "the same file")
    assert again.loaded is first.loaded  # same real file: one object
    reused = process.request("libdep.so.1", _user("$ORIGIN/../rpath"), "libuser.so")
    assert reused.loaded is first.loaded
    assert reused.how == "already loaded (a dlopen by path)"
    second = process.request("/opt/app/rpath/libdep.so.1", None, "another file")
    assert second.loaded is not first.loaded and len(process.objects) == 2


def test_soname_comes_from_the_elf_else_from_the_real_file_name(machine: FakeMachine) -> None:
    ctx = machine.context()
    machine.write("/x/libcudnn.so.9.1.0")
    machine.link("/x/libcudnn.so", "libcudnn.so.9.1.0")
    assert soname_of(ctx, "/x/libcudnn.so") == "libcudnn.so.9"
    machine.write("/x/libodd.so", elf_shared_object("libodd.so.7", ()))
    assert soname_of(ctx, "/x/libodd.so") == "libodd.so.7"


# --- the same questions asked of the real glibc -------------------------------------------------

_PROBE = """
import ctypes, sys
for path in sys.argv[1:]:
    ctypes.CDLL(path)
print(next(l.split()[-1] for l in open("/proc/self/maps") if "libdep.so.1" in l))
"""


def _build(tmp_path: Path) -> dict[str, Path]:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the shared objects glibc is asked about")
    (tmp_path / "dep.c").write_text("int dep_value(void) { return 1; }\n")
    (tmp_path / "user.c").write_text("int dep_value(void);\nint f(void) { return dep_value(); }\n")
    for folder in ("first", "second"):
        (tmp_path / folder).mkdir()
        _cc(
            cc,
            "-Wl,-soname,libdep.so.1",
            "-o",
            tmp_path / folder / "libdep.so.1",
            tmp_path / "dep.c",
        )
    built = {}
    for name, tags in (("rpath", "--disable-new-dtags"), ("runpath", "--enable-new-dtags")):
        built[name] = tmp_path / f"libuser_{name}.so"
        _cc(
            cc,
            f"-Wl,{tags}",
            "-Wl,-rpath,$ORIGIN/first",
            "-o",
            built[name],
            tmp_path / "user.c",
            tmp_path / "first" / "libdep.so.1",
        )
    return built


def _cc(cc: str, *args: object) -> None:
    subprocess.run([cc, "-shared", "-fPIC", *map(str, args)], check=True, timeout=60)


def _real_glibc(paths: list[Path], ld_library_path: str) -> str:
    env = {"LD_LIBRARY_PATH": ld_library_path} if ld_library_path else {}
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **env},
        check=True,
    )
    return result.stdout.strip()


@pytest.mark.parametrize("kind", ["rpath", "runpath"])
@pytest.mark.parametrize("ld_library_path", [True, False])
@pytest.mark.parametrize("preload_second", [True, False])
def test_the_model_agrees_with_glibc(
    tmp_path: Path, kind: str, ld_library_path: bool, preload_second: bool
) -> None:
    """Real gcc output loaded by the real glibc: which libdep.so.1 it maps is what we model."""
    user = _build(tmp_path)[kind]
    second = tmp_path / "second" / "libdep.so.1"
    ld_path = str(tmp_path / "second") if ld_library_path else ""
    preload = [second] if preload_second else []
    actual = _real_glibc([*preload, user], ld_path)

    ctx = real_context()
    process = Process(ctx, LoaderPath(tuple(p for p in [ld_path] if p), ()))
    for path in preload:
        process.request(str(path), None, "preload")
    requester = requester_for(ctx, str(user))
    assert isinstance(requester, Requester)
    assert bool(requester.info.rpath) is (kind == "rpath")
    (binding,) = process.link(requester, ["libdep.so.1"], "libuser")
    assert binding.loaded is not None
    assert binding.loaded.real == str(Path(actual).resolve())
