"""Packages, torch-build and Transformer Engine probes, read from metadata and files only."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.probes.packages import probe_packages
from te_doctor.probes.torch_build import probe_torch
from te_doctor.probes.transformer_engine import probe_transformer_engine
from te_doctor.snapshot.facts import FactState, Version
from tests.elf_builder import elf_with_sections, fatbin
from tests.fakes import SITE, FakeMachine
from tests.machines import elf_shared_object

TORCH_VERSION_PY = """from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '2.6.0a0+ecf3bae40a'
debug = False
cuda: Optional[str] = '12.8'
git_version = 'ecf3bae40a6f2f0f3b237bf2ea2e8b7a0e2f5c11'
hip: Optional[str] = None
"""


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    return FakeMachine(tmp_path)


def names(machine: FakeMachine) -> list[str]:
    return [p.name for p in probe_packages(machine.context()).installed]


def test_reports_interesting_distributions_only(machine: FakeMachine) -> None:
    machine.add_dist("torch", "2.4.0+cu121")
    machine.add_dist("nvidia_cudnn_cu12", "9.1.0.70")
    machine.add_dist("transformer_engine", "2.20.2")
    machine.add_dist("requests", "2.32.3")
    assert names(machine) == ["nvidia-cudnn-cu12", "torch", "transformer-engine"]


def test_install_kinds(machine: FakeMachine) -> None:
    machine.add_dist(
        "transformer-engine",
        "2.3.0",
        direct_url={"url": "file:///src/TE", "dir_info": {"editable": True}},
    )
    machine.add_dist("flash-attn", "2.7.4", direct_url={"url": "file:///src/fa", "dir_info": {}})
    machine.add_dist("apex", "0.1", direct_url={"url": "git+https://x", "vcs_info": {"vcs": "git"}})
    machine.write(
        f"{SITE}/torch-2.6.0a0+ecf3bae40a.egg-info/PKG-INFO",
        "Name: torch\nVersion: 2.6.0a0+ecf3bae40a\n",
    )
    kinds = {p.name: p.install_kind for p in probe_packages(machine.context()).installed}
    assert kinds == {
        "transformer-engine": "editable",
        "flash-attn": "built from a local source directory",
        "apex": "built from a VCS checkout",
        "torch": "egg-info (setup.py install/develop or a source build)",
    }


def test_corrupt_and_truncated_metadata_become_unreadable_entries(machine: FakeMachine) -> None:
    machine.add_dist(
        "torch", "2.4.0", metadata="Metadata-Version: 2.1\nName: torch\n"
    )  # no Version
    machine.write(f"{SITE}/flash_attn-2.7.4.dist-info/METADATA", b"\xff\xfe\x00garbage")
    machine.write(f"{SITE}/broken-1.0.dist-info/RECORD", "")  # no METADATA at all
    facts = probe_packages(machine.context())
    # torch and flash-attn are installed, their versions unknown: never "not installed"
    versions = {p.name: p.version for p in facts.installed}
    assert sorted(versions) == ["flash-attn", "torch"]
    assert all(v.state is FactState.UNKNOWN for v in versions.values())
    assert "no Version field" in versions["torch"].reason
    assert len(facts.unreadable) == 3
    assert any("no Version field" in u for u in facts.unreadable)
    assert any("no METADATA" in u for u in facts.unreadable)


def test_only_the_header_block_of_metadata_is_read(machine: FakeMachine) -> None:
    """The long description after the first blank line is never decoded: bytes that are not
    UTF-8 there (a README pasted from another encoding) do not make the metadata unreadable."""
    body = b"Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.7.4\n\n# flash\xff\xfeattn\n"
    machine.write(f"{SITE}/flash_attn-2.7.4.dist-info/METADATA", body)
    machine.write(f"{SITE}/torch-2.4.0.egg-info", "Name: torch\nVersion: 2.4.0\n\nVersion: 9\n")
    facts = probe_packages(machine.context())
    assert {p.name: p.version.value for p in facts.installed} == {
        "flash-attn": Version("2.7.4"),
        "torch": Version("2.4.0"),
    }
    assert facts.unreadable == ()


def test_duplicates_and_conflicts(machine: FakeMachine) -> None:
    machine.sys_path = [SITE, "/home/alice/.local/lib/python3.12/site-packages"]
    machine.add_dist("torch", "2.4.0+cu121")
    machine.add_dist("torch", "2.1.0", site="/home/alice/.local/lib/python3.12/site-packages")
    machine.add_dist("transformer-engine", "2.20.2")
    machine.add_dist("transformer-engine-cu12", "2.20.2")
    machine.add_dist("transformer-engine-cu13", "2.19.0")
    machine.add_dist("nvidia-cudnn-cu12", "9.1.0.70")
    machine.add_dist("nvidia-cudnn-cu13", "9.13.0.50")
    facts = probe_packages(machine.context())
    assert len(facts.duplicates) == 1 and facts.duplicates[0].startswith("torch: 2.4.0+cu121 in")
    joined = "\n".join(facts.conflicts)
    assert "transformer-engine-cu12 and transformer-engine-cu13 are both installed" in joined
    assert "disagree on the version" in joined
    assert "nvidia-cudnn-cu12 and nvidia-cudnn-cu13" in joined


def test_no_conflicts_on_a_clean_install(machine: FakeMachine) -> None:
    machine.add_dist("transformer-engine", "2.20.2")
    machine.add_dist("transformer-engine-cu12", "2.20.2")
    facts = probe_packages(machine.context())
    assert facts.conflicts == () and facts.duplicates == ()


def test_missing_site_directory_is_not_an_error(machine: FakeMachine) -> None:
    machine.sys_path = ["/does/not/exist", SITE]
    machine.add_dist("torch", "2.4.0")
    assert names(machine) == ["torch"]


def test_torch_build_read_from_version_py(machine: FakeMachine) -> None:
    machine.add_dist("torch", "2.6.0a0+ecf3bae40a")
    machine.write(f"{SITE}/torch/version.py", TORCH_VERSION_PY)
    facts = probe_torch(machine.context())
    assert facts.version.value == "2.6.0a0+ecf3bae40a"
    assert facts.cuda_version.value == "12.8"
    assert facts.hip_version.state is FactState.ABSENT
    assert facts.debug.value is False
    assert facts.cuda_arch_list.state is FactState.UNKNOWN


def test_cpu_torch_has_no_cuda(machine: FakeMachine) -> None:
    machine.add_dist("torch", "2.13.0+cpu")
    machine.write(
        f"{SITE}/torch/version.py", "__version__ = '2.13.0+cpu'\ncuda = None\ndebug = False\n"
    )
    facts = probe_torch(machine.context())
    assert facts.cuda_version.state is FactState.ABSENT
    assert "CPU-only" in facts.cuda_version.reason
    assert facts.cuda_arch_list.state is FactState.ABSENT


def test_torch_missing_or_version_py_unreadable(machine: FakeMachine) -> None:
    assert probe_torch(machine.context()).version.state is FactState.ABSENT
    machine.add_dist("torch", "2.4.0")  # metadata present, torch/version.py missing
    facts = probe_torch(machine.context())
    assert facts.cuda_version.state is FactState.UNKNOWN
    assert "cannot read" in facts.cuda_version.reason


def test_version_py_is_parsed_not_executed(machine: FakeMachine, tmp_path: Path) -> None:
    machine.add_dist("torch", "2.4.0")
    marker = tmp_path / "pwned"
    machine.write(
        f"{SITE}/torch/version.py",
        f"import pathlib; pathlib.Path({str(marker)!r}).touch()\n"
        "__version__ = '2.4.0'\ncuda = __import__('os').name\n",
    )
    facts = probe_torch(machine.context())
    assert not marker.exists()
    assert facts.version.value == "2.4.0"
    assert facts.cuda_version.state is FactState.UNKNOWN  # an expression is not a literal


def test_te_not_installed(machine: FakeMachine) -> None:
    facts = probe_transformer_engine(machine.context())
    assert facts.version.state is FactState.ABSENT
    assert facts.core_library.state is FactState.ABSENT
    assert facts.needed_libraries == ()


def test_te_core_library_needs_are_resolved(machine: FakeMachine) -> None:
    """Each DT_NEEDED library is found where the loader would find it, or is absent; the C
    runtime every process has is left out."""
    machine.add_dist("transformer-engine", "2.20.2")
    machine.add_dist("transformer-engine-cu12", "2.20.2")
    core = f"{SITE}/transformer_engine/wheel_lib/libtransformer_engine.so"
    needed = ("libcudart.so.12", "libcudnn.so.9", "libc.so.6", "libm.so.6")
    machine.write(core, elf_shared_object("libtransformer_engine.so", needed))
    machine.write("/opt/cuda-libs/libcudart.so.12", "")
    machine.env["LD_LIBRARY_PATH"] = "/opt/cuda-libs"
    machine.write(f"{SITE}/transformer_engine_torch.cpython-312-x86_64-linux-gnu.so")
    facts = probe_transformer_engine(machine.context())
    assert facts.version.value == "2.20.2"
    assert facts.core_package.value == "transformer-engine-cu12"
    assert facts.core_cuda_major.value == 12
    assert facts.core_library.value == core
    assert facts.torch_extension.known
    assert facts.jax_extension.state is FactState.ABSENT
    resolved = {lib.name: lib.resolved for lib in facts.needed_libraries}
    assert list(resolved) == ["libcudart.so.12", "libcudnn.so.9"]
    assert resolved["libcudart.so.12"].value == "/opt/cuda-libs/libcudart.so.12"
    assert resolved["libcudart.so.12"].source.endswith(":LD_LIBRARY_PATH")
    assert resolved["libcudnn.so.9"].state is FactState.ABSENT


def test_te_core_library_that_is_not_elf_is_unknown(machine: FakeMachine) -> None:
    machine.add_dist("transformer-engine-cu13", "2.20.2")
    machine.write(f"{SITE}/transformer_engine/wheel_lib/libtransformer_engine.so", "not elf")
    facts = probe_transformer_engine(machine.context())
    assert facts.version.value == "2.20.2"  # from the core package alone
    assert facts.needed_libraries[0].resolved.state is FactState.UNKNOWN
    assert "not a 64-bit" in facts.needed_libraries[0].resolved.reason


def test_torch_and_te_gpu_architectures_come_from_their_binaries(machine: FakeMachine) -> None:
    machine.add_dist("torch", "2.6.0a0+ecf3bae40a")
    machine.write(f"{SITE}/torch/version.py", TORCH_VERSION_PY)
    machine.write(
        f"{SITE}/torch/lib/libtorch_cuda.so",
        elf_with_sections({".nv_fatbin": fatbin([(2, 80), (2, 90), (1, 90)])}),
    )
    machine.add_dist("transformer-engine-cu12", "2.20.2")
    machine.write(
        f"{SITE}/transformer_engine/wheel_lib/libtransformer_engine.so",
        elf_with_sections({".nv_fatbin": fatbin([(2, 89), (2, 100)])}),
    )
    context = machine.context()
    assert probe_torch(context).cuda_arch_list.value == ("sm_80", "compute_90", "sm_90")
    assert probe_transformer_engine(context).core_cuda_archs.value == ("sm_89", "sm_100")


def test_cuda_torch_without_libtorch_cuda_has_unknown_architectures(machine: FakeMachine) -> None:
    machine.add_dist("torch", "2.6.0a0+ecf3bae40a")
    machine.write(f"{SITE}/torch/version.py", TORCH_VERSION_PY)
    facts = probe_torch(machine.context())
    assert facts.cuda_arch_list.state is FactState.UNKNOWN
    assert "libtorch_cuda.so" in facts.cuda_arch_list.reason


def test_libraries_te_loads_at_import_are_resolved(machine: FakeMachine) -> None:
    machine.add_dist("transformer-engine", "2.20.2")
    machine.add_dist("transformer-engine-cu12", "2.20.2")
    machine.write(f"{SITE}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
    loaded = {
        lib.name: lib.resolved
        for lib in probe_transformer_engine(machine.context()).loaded_at_import
    }
    assert loaded["libnvrtc"].value == f"{SITE}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"
    assert loaded["libcudnn"].state is FactState.ABSENT
    assert "cudnn shared object not found" in loaded["libcudnn"].reason
    assert loaded["libcurand"].state is FactState.ABSENT
