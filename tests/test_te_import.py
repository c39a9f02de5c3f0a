"""TE's own library loading at import, era by era, read from transformer_engine/common/__init__.py.

Each test lays out a machine where the eras disagree (a pip cuDNN and a toolkit cuDNN, NVRTC only
in the wheel, ...) and checks which file each release opens, or the error its import raises.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.probes.loader import LoaderPath, Process
from te_doctor.probes.te_import import TeImport, te_import, te_release
from tests.fakes import FakeMachine
from tests.machines import PY

SITE = f"/opt/venv/lib/{PY}/site-packages"
TOOLKIT = "/usr/local/cuda-12.8/targets/x86_64-linux/lib"


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    m = FakeMachine(tmp_path)
    m.sys_path = [SITE]
    for part in ("", "_graph", "_ops"):
        m.write(f"{SITE}/nvidia/cudnn/lib/libcudnn{part}.so.9")
    for folder, name in (("cuda_nvrtc", "libnvrtc.so.12"), ("curand", "libcurand.so.10")):
        m.write(f"{SITE}/nvidia/{folder}/lib/{name}")
    m.write(f"{SITE}/nvidia/cublas/lib/libcublas.so.12")
    m.write(f"{SITE}/nvidia/cuda_runtime/lib/libcudart.so.12")
    return m


def toolkit(m: FakeMachine, *, cudnn: str = "9.1.0", nvrtc: bool = True) -> None:
    """/usr/local/cuda with a cuDNN copied in (the tarball install) and its NVRTC/cuRAND."""
    m.write(f"{TOOLKIT}/libcudnn.so.{cudnn}")
    m.link(f"{TOOLKIT}/libcudnn.so.9", f"libcudnn.so.{cudnn}")
    if nvrtc:
        m.write(f"{TOOLKIT}/libnvrtc.so.12.8.61")
        m.write(f"{TOOLKIT}/stubs/libnvrtc.so")
        m.write(f"{TOOLKIT}/libcurand.so.10.3.9.55")
    m.link("/usr/local/cuda-12.8/lib64", "targets/x86_64-linux/lib")
    m.link("/usr/local/cuda", "cuda-12.8")


def replay(m: FakeMachine, version: str, cache: tuple[tuple[str, str], ...] = ()) -> TeImport:
    ctx = m.context()
    release = te_release(version)
    assert release is not None
    return te_import(ctx, release, Process(ctx, LoaderPath((), cache)))


def opened(result: TeImport) -> dict[str, str]:
    """Library -> the real file of its first load (TE 2.11+ may load cuDNN twice)."""
    found: dict[str, str] = {}
    for load in result.loads:
        loaded = load.binding.loaded if load.binding else None
        found.setdefault(load.library, loaded.real if loaded else "")
    return found


def test_before_1_9_te_loads_nothing_itself(machine: FakeMachine) -> None:
    assert replay(machine, "1.8.0") == TeImport((), None)


def test_1_9_to_2_3_take_the_pip_cudnn_first(machine: FakeMachine) -> None:
    toolkit(machine)
    result = replay(machine, "2.3.0")
    assert opened(result)["libcudnn"] == f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9"
    assert opened(result)["libnvrtc"] == f"{TOOLKIT}/libnvrtc.so.12.8.61"  # stubs skipped
    assert result.preloads_pip is None and "libcurand" not in opened(result)


def test_1_9_and_1_10_search_cuda_home_only_when_set(machine: FakeMachine) -> None:
    toolkit(machine)
    cache = (("libnvrtc.so.12", f"{SITE}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),)
    assert opened(replay(machine, "1.10.0", cache))["libnvrtc"].endswith(
        "cuda_nvrtc/lib/libnvrtc.so.12"
    )
    assert opened(replay(machine, "1.11.0", cache))["libnvrtc"].startswith("/usr/local/cuda")
    machine.env["CUDA_HOME"] = "/usr/local/cuda"
    assert opened(replay(machine, "1.10.0", cache))["libnvrtc"].startswith("/usr/local/cuda")


def test_1_9_to_2_3_never_look_for_nvrtc_in_the_wheel(machine: FakeMachine) -> None:
    """No toolkit, no NVRTC in ldconfig: the import fails though the wheel has NVRTC.

    ``ldconfig -p | grep 'libnvrtc'`` finds nothing and check_output raises before the final
    dlopen (the error of ArcInstitute/evo2#99)."""
    (load,) = [x for x in replay(machine, "1.13.0").loads if x.library == "libnvrtc"]
    assert load.binding is None
    assert load.failure.startswith("subprocess.CalledProcessError: Command 'ldconfig -p | grep")


def test_the_shell_grep_fails_the_import_until_2_10(machine: FakeMachine) -> None:
    for part in ("", "_graph", "_ops"):
        (machine.root / SITE.lstrip("/") / f"nvidia/cudnn/lib/libcudnn{part}.so.9").unlink()
    assert "grep 'libcudnn.so'" in replay(machine, "2.9.0").loads[0].failure
    assert replay(machine, "2.10.0").loads[0].failure.startswith("OSError: libcudnn.so: cannot")


def test_2_4_to_2_10_take_the_system_first(machine: FakeMachine) -> None:
    toolkit(machine)
    result = replay(machine, "2.5.0")
    assert opened(result)["libcudnn"] == f"{TOOLKIT}/libcudnn.so.9.1.0"
    assert result.preloads_pip is True
    assert opened(result)["libcublas"] == f"{SITE}/nvidia/cublas/lib/libcublas.so.12"
    assert opened(result)["libcudart"] == f"{SITE}/nvidia/cuda_runtime/lib/libcudart.so.12"
    machine.env["CUDNN_HOME"] = f"{SITE}/nvidia/cudnn"  # TE >= 2.4 searches it first
    assert opened(replay(machine, "2.5.0"))["libcudnn"] == f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9"


def test_2_4_to_2_10_open_every_file_of_the_pip_cudnn(machine: FakeMachine) -> None:
    ctx = machine.context()
    process = Process(ctx, LoaderPath((), ()))
    te_import(ctx, (2, 7), process)
    sonames = {o.soname for o in process.objects}
    assert {"libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9"} <= sonames


def test_curand_from_2_8_and_ldconfig_for_cudnn_from_2_6(machine: FakeMachine) -> None:
    assert "libcurand" not in opened(replay(machine, "2.7.0"))
    assert opened(replay(machine, "2.8.0"))["libcurand"].endswith("curand/lib/libcurand.so.10")
    for part in ("", "_graph", "_ops"):
        (machine.root / SITE.lstrip("/") / f"nvidia/cudnn/lib/libcudnn{part}.so.9").unlink()
    machine.write("/usr/lib/x86_64-linux-gnu/libcudnn.so.9")
    cache = (("libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"),)
    assert opened(replay(machine, "2.6.0", cache))["libcudnn"] == cache[0][1]
    assert "cannot open" in replay(machine, "2.5.0", cache).loads[0].failure


def test_from_2_11_a_system_nvrtc_skips_the_pip_preload(machine: FakeMachine) -> None:
    toolkit(machine)
    result = replay(machine, "2.20.2")
    assert opened(result)["libcudnn"] == f"{TOOLKIT}/libcudnn.so.9.1.0"
    assert result.preloads_pip is False
    assert "libcublas" not in opened(result) and "libcudart" not in opened(result)
    machine.env["CUDNN_HOME"] = f"{SITE}/nvidia/cudnn"
    assert opened(replay(machine, "2.20.2"))["libcudnn"].startswith(f"{SITE}/nvidia/cudnn")


def test_from_2_11_without_a_system_nvrtc_the_pip_preload_is_strict(machine: FakeMachine) -> None:
    """The four pip layouts TE knows have no nvidia/cuda_runtime: cu12 wheels miss cudart."""
    result = replay(machine, "2.11.0")
    assert result.preloads_pip is True
    loads = {load.library: load for load in result.loads}
    assert opened(result)["libcublas"] == f"{SITE}/nvidia/cublas/lib/libcublas.so.12"
    assert loads["libcudart"].binding is None
    assert loads["libcudart"].failure == "RuntimeError: cudart shared object not found."
    machine.write(f"{SITE}/nvidia/cu13/lib/libcudart.so.13")  # the CUDA 13 wheels' layout
    assert opened(replay(machine, "2.11.0"))["libcudart"].endswith("cu13/lib/libcudart.so.13")


def test_from_2_11_nothing_anywhere_is_tes_own_error(machine: FakeMachine) -> None:
    for part in ("", "_graph", "_ops"):
        (machine.root / SITE.lstrip("/") / f"nvidia/cudnn/lib/libcudnn{part}.so.9").unlink()
    load = replay(machine, "2.20.2").loads[0]
    assert (load.library, load.binding) == ("libcudnn", None)
    assert load.failure == "RuntimeError: cudnn shared object not found."


def test_the_copy_with_the_greatest_file_name_wins_a_directory_search(machine: FakeMachine) -> None:
    """TE sorts by file name, last first: 9.7.0 beats 9.10.2 (strings, not versions)."""
    machine.write("/opt/cudnn/a/libcudnn.so.9.10.2")
    machine.write("/opt/cudnn/b/libcudnn.so.9.7.0")
    machine.env["CUDNN_PATH"] = "/opt/cudnn"
    assert opened(replay(machine, "2.20.2"))["libcudnn"] == "/opt/cudnn/b/libcudnn.so.9.7.0"


def test_release_of_odd_versions() -> None:
    assert te_release("2.20.0.dev0") == (2, 20)
    assert te_release("1.14.0+5f1fa3f") == (1, 14)
    assert te_release("not a version") is None
