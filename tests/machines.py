"""Recorded machines: realistic GPU machines we do not have, laid out on a ``FakeMachine``.

Each scenario function configures a fresh ``FakeMachine`` the way a real machine of that kind
looks to the probes: the GPUs and driver NVML reports, ``/proc/driver/nvidia/version``, the
loader cache, CUDA toolkits, the pip ``nvidia-*`` wheels of a given PyTorch build (with their
real version numbers and library file names), ``torch/version.py`` and the Transformer Engine
pieces. The TE core library is a tiny synthetic ELF file whose DT_NEEDED entries are the ones
the real library has, so the probe's dependency resolution runs for real.

``tests/fixtures/<slug>.json`` is the snapshot of each machine with the volatile fields fixed.
Regenerate them all with ``python -m tests.machines`` (or name slugs to rewrite only those).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import struct
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pynvml

from te_doctor.probes.collect import collect_snapshot
from te_doctor.probes.commands import TIMED_OUT, CommandResult
from te_doctor.probes.context import SystemInfo
from te_doctor.smoke.result import from_child
from te_doctor.snapshot.file import dumps
from tests.elf_builder import fatbin
from tests.fakes import FakeGpu, FakeMachine, FakeNvml, ok
from tests.smoke_results import GPU_CHECKS, check, child_result, te_support

FIXTURE_DIR = Path(__file__).parent / "fixtures"
#: The fixed values that replace the fields that change from one run to the next.
FIXED_CREATED_AT = "2026-11-30T00:00:00+00:00"
FIXED_TE_DOCTOR_VERSION = "0.0.0+fixture"

PY = "python3.12"
STDLIB_PATH = ("/usr/lib/python312.zip", "/usr/lib/python3.12", "/usr/lib/python3.12/lib-dynload")
UBUNTU_LIBDIR = "/usr/lib/x86_64-linux-gnu"
UBUNTU_LDCACHE_DIR = "/lib/x86_64-linux-gnu"
TORCH_EXT = "transformer_engine_torch.cpython-312-x86_64-linux-gnu.so"


# --------------------------------------------------------------------------------------------
# A minimal ELF shared object, so that the TE probe reads real DT_NEEDED entries.


def _align8(size: int) -> int:
    return size + (-size % 8)


def elf_shared_object(
    soname: str,
    needed: Sequence[str],
    *,
    cubins: Sequence[int] = (),
    ptx: Sequence[int] = (),
    runpath: str = "",
    rpath: str = "",
) -> bytes:
    """A valid 64-bit little-endian x86-64 ELF ``.so`` holding only what te-doctor reads.

    Program headers: one PT_LOAD covering the file (virtual address == file offset) and a
    PT_DYNAMIC with DT_NEEDED, DT_SONAME, optional DT_RPATH and DT_RUNPATH, DT_STRTAB and
    DT_STRSZ. Section
    headers: ``.dynamic``, ``.dynstr``, ``.nv_fatbin`` (when there is GPU code: one cubin per
    ``cubins`` architecture and one PTX per ``ptx`` one, as nvcc's fatbins hold them) and
    ``.shstrtab``. ``readelf -d`` and ``readelf -S`` read it like any other shared object.
    """
    dynstr = bytearray(b"\0")
    offsets: dict[str, int] = {}
    for text in (soname, *needed, *(p for p in (rpath, runpath) if p)):
        if text not in offsets:
            offsets[text] = len(dynstr)
            dynstr += text.encode() + b"\0"
    entries = [(1, offsets[name]) for name in needed]  # DT_NEEDED
    entries.append((14, offsets[soname]))  # DT_SONAME
    if rpath:
        entries.append((15, offsets[rpath]))  # DT_RPATH
    if runpath:
        entries.append((29, offsets[runpath]))  # DT_RUNPATH
    dynamic_offset = 64 + 2 * 56
    dynamic_size = (len(entries) + 3) * 16  # + DT_STRTAB, DT_STRSZ, DT_NULL
    dynstr_offset = dynamic_offset + dynamic_size
    entries += [(5, dynstr_offset), (10, len(dynstr)), (0, 0)]
    dynamic = b"".join(struct.pack("<qQ", tag, value) for tag, value in entries)
    code = [(2, arch) for arch in cubins] + [(1, arch) for arch in ptx]
    fat = fatbin(code) if code else b""
    fat_offset = _align8(dynstr_offset + len(dynstr))
    shstrtab = b"\0.dynamic\0.dynstr\0.nv_fatbin\0.shstrtab\0"
    shstrtab_offset = fat_offset + len(fat)
    section_offset = _align8(shstrtab_offset + len(shstrtab))
    sections = [
        # name, type, flags, address, offset, size, link, entry size
        (0, 0, 0, 0, 0, 0, 0, 0),
        (shstrtab.index(b".dynamic"), 6, 3, dynamic_offset, dynamic_offset, dynamic_size, 2, 16),
        (shstrtab.index(b".dynstr"), 3, 2, dynstr_offset, dynstr_offset, len(dynstr), 0, 0),
        *(
            [(shstrtab.index(b".nv_fatbin"), 1, 2, fat_offset, fat_offset, len(fat), 0, 0)]
            * bool(fat)
        ),
        (shstrtab.index(b".shstrtab"), 3, 0, 0, shstrtab_offset, len(shstrtab), 0, 0),
    ]
    section_table = b"".join(
        struct.pack("<IIQQQQIIQQ", name, kind, flags, addr, off, size, link, 0, 8, entsize)
        for name, kind, flags, addr, off, size, link, entsize in sections
    )
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8  # 64-bit, little endian, SysV
    header = ident + struct.pack(
        "<HHIQQQIHHHHHH",
        3,  # ET_DYN
        62,  # EM_X86_64
        1,  # EV_CURRENT
        0,  # entry point
        64,  # program headers right after this header
        section_offset,
        0,  # flags
        64,  # header size
        56,  # program header size
        2,  # program headers
        64,  # section header size
        len(sections),
        len(sections) - 1,  # .shstrtab is the last section
    )
    load = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, section_offset, section_offset, 0x1000)
    dyn = struct.pack(
        "<IIQQQQQQ", 2, 6, dynamic_offset, dynamic_offset, 0, dynamic_size, dynamic_size, 8
    )
    body = header + load + dyn + dynamic + bytes(dynstr)
    body = body.ljust(fat_offset, b"\0") + fat + shstrtab
    return body.ljust(section_offset, b"\0") + section_table


def te_core_needed(version: str, cuda_major: int, cudnn_major: int = 9) -> tuple[str, ...]:
    """DT_NEEDED of ``libtransformer_engine.so`` for a TE release.

    From ``transformer_engine/common/CMakeLists.txt`` at each tag: cuBLAS(Lt) and the CUDA
    runtime always; the CUDA driver and NVRTC up to 1.8, the driver up to 1.12; cuDNN and its
    sub-libraries (``CUDNN::cudnn_all``) from 2.2; NCCL from 2.16 (the 2.20.2 wheel's readelf).
    """
    release = tuple(int(part) for part in version.split("+")[0].split(".")[:2])
    cudnn_parts = (
        ("graph", "engines_runtime_compiled", "ops", "cnn", "adv", "engines_precompiled")
        + ("heuristic",)
        if cudnn_major >= 9
        else ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train")
    )
    cudnn = (
        (f"libcudnn.so.{cudnn_major}", *(f"libcudnn_{p}.so.{cudnn_major}" for p in cudnn_parts))
        if release >= (2, 2)
        else ()
    )
    return (
        *cudnn,
        f"libcublas.so.{cuda_major}",
        f"libcublasLt.so.{cuda_major}",
        f"libcudart.so.{cuda_major}",
        *(("libcuda.so.1",) if release < (1, 13) else ()),
        *((f"libnvrtc.so.{cuda_major}",) if release < (1, 9) else ()),
        *(("libnccl.so.2",) if release >= (2, 16) else ()),
        "libstdc++.so.6",
        "libm.so.6",
        "libgcc_s.so.1",
        "libc.so.6",
        "ld-linux-x86-64.so.2",
    )


TORCH_EXT_NEEDED = (
    "libc10.so",
    "libtorch.so",
    "libtorch_cpu.so",
    "libtorch_python.so",
    "libc10_cuda.so",
    "libtorch_cuda.so",
    "libtransformer_engine.so",
    "libstdc++.so.6",
    "libc.so.6",
)


# --------------------------------------------------------------------------------------------
# GPUs


def _hex_id(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def gpu_uuid(seed: str) -> str:
    """A stable, random-looking ``GPU-xxxxxxxx-...`` UUID, different for every seed."""
    return "GPU-" + _hex_id(seed)


def mig_uuid(seed: str) -> str:
    """A stable ``MIG-xxxxxxxx-...`` UUID (the form CUDA_VISIBLE_DEVICES takes for a MIG slice)."""
    return "MIG-" + _hex_id("mig/" + seed)


#: Bus IDs of the 8 GPUs of a DGX/HGX H100, H200 or B200 board (nvidia-smi order).
HGX_BUS_IDS = tuple(
    f"00000000:{bus}:00.0" for bus in ("1B", "43", "52", "61", "9D", "C3", "D1", "DF")
)
#: Bus IDs of the 8 GPUs of a DGX A100.
DGX_A100_BUS_IDS = tuple(
    f"00000000:{bus}:00.0" for bus in ("07", "0F", "47", "4E", "87", "90", "B7", "BD")
)
#: Bus IDs of the 8 GPUs of a DGX-1 (V100 SXM2).
DGX1_BUS_IDS = tuple(
    f"00000000:{bus}:00.0" for bus in ("06", "07", "0A", "0B", "85", "86", "89", "8A")
)


#: What NVML reports for a MIG-capable GPU (A100, H100, B200) with MIG off: (current, pending).
MIG_DISABLED = (0, 0)


def gpus(
    slug: str,
    name: str,
    cc: tuple[int, int],
    memory_mib: int,
    bus_ids: Sequence[str],
    *,
    serial_prefix: str | None,
    persistence: int = 1,
    mig: tuple[int, int] | None = None,
) -> list[FakeGpu]:
    """One ``FakeGpu`` per bus ID, each with its own UUID and (if supported) serial number."""
    return [
        FakeGpu(
            name=name,
            cc=cc,
            memory_mib=memory_mib,
            uuid=gpu_uuid(f"{slug}/{index}"),
            mig=mig,
            persistence=persistence,
            bus_id=bus_id,
            serial=None if serial_prefix is None else f"{serial_prefix}{1037 + 211 * index:04d}",
        )
        for index, bus_id in enumerate(bus_ids)
    ]


# --------------------------------------------------------------------------------------------
# Host, interpreter, driver, loader cache, toolkits


def host(
    m: FakeMachine,
    *,
    hostname: str,
    kernel: str,
    cpus: int,
    mem_kib: int,
    os_release: str = 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\n',
    glibc: str = "2.39",
    user: str = "alice",
    proc_version: str = "",
    libdir: str = UBUNTU_LIBDIR,
) -> None:
    """The operating system, kernel, resources and C/C++ runtime (default: Ubuntu 24.04)."""
    m.system = SystemInfo(
        hostname=hostname,
        user=user,
        kernel=kernel,
        machine="x86_64",
        cpu_count=cpus,
        libc=("glibc", glibc),
    )
    m.write("/etc/os-release", os_release)
    m.write("/proc/meminfo", f"MemTotal:       {mem_kib} kB\nMemFree:        {mem_kib // 3} kB\n")
    m.write(
        "/proc/version",
        proc_version
        or f"Linux version {kernel} (buildd@lcy02-amd64-100) (x86_64-linux-gnu-gcc-13 "
        "(Ubuntu 13.2.0-23ubuntu4) 13.2.0, GNU ld (GNU Binutils for Ubuntu) 2.42) "
        "#1-Ubuntu SMP PREEMPT_DYNAMIC\n",
    )
    # A merged /usr: the loader cache names /lib/x86_64-linux-gnu/... (or /lib64/...).
    m.link("/lib", "usr/lib")
    rhel = libdir == "/usr/lib64"
    if rhel:
        m.link("/lib64", "usr/lib64")
    for soname, real in (
        ("libc.so.6", ""),
        ("libm.so.6", ""),
        ("libgcc_s.so.1", ""),
        ("libstdc++.so.6", "libstdc++.so.6.0.29" if rhel else "libstdc++.so.6.0.33"),
        ("libz.so.1", "libz.so.1.3"),
    ):
        if real:
            m.write(f"{libdir}/{real}")
            m.link(f"{libdir}/{soname}", real)
        else:
            m.write(f"{libdir}/{soname}")


def venv(m: FakeMachine, prefix: str) -> str:
    """Diagnose the interpreter of a virtual environment; returns its site-packages."""
    site = f"{prefix}/lib/{PY}/site-packages"
    m.prefix = prefix
    m.sys_path = [*STDLIB_PATH, site]
    m.env["VIRTUAL_ENV"] = prefix
    m.env["PATH"] = f"{prefix}/bin:" + m.env["PATH"]
    m.write(f"{prefix}/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n")
    return site


def system_python(m: FakeMachine) -> str:
    """Diagnose Debian/Ubuntu's system Python; returns the pip site (``dist-packages``)."""
    site = f"/usr/local/lib/{PY}/dist-packages"
    m.prefix = "/usr"
    m.sys_path = [*STDLIB_PATH, site, "/usr/lib/python3/dist-packages"]
    return site


def nvidia_driver(
    m: FakeMachine,
    version: str,
    cuda: int,
    devices: list[FakeGpu],
    *,
    open_module: bool = False,
    libdir: str = UBUNTU_LIBDIR,
) -> None:
    """A loaded NVIDIA driver: NVML, the kernel module, device nodes, nvidia-smi, libcuda."""
    m.nvml = FakeNvml(driver=version, cuda=cuda, gpus=devices)
    flavour = "Open Kernel Module for x86_64" if open_module else "x86_64 Kernel Module"
    m.write(
        "/proc/driver/nvidia/version",
        f"NVRM version: NVIDIA UNIX {flavour}  {version}  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1)\n",
    )
    m.write("/dev/nvidiactl")
    m.write("/dev/nvidia-uvm")
    for index in range(len(devices)):
        m.write(f"/dev/nvidia{index}")
    m.executable("/usr/bin/nvidia-smi")
    for lib in ("libcuda", "libnvidia-ml", "libnvidia-ptxjitcompiler", "libnvidia-nvvm"):
        m.write(f"{libdir}/{lib}.so.{version}")
        m.link(f"{libdir}/{lib}.so.1", f"{lib}.so.{version}")
    m.link(f"{libdir}/libcuda.so", "libcuda.so.1")


_SONAME_LIKE = re.compile(r"^lib.*\.so(\.\d+)?$")


def ldconfig(m: FakeMachine, directories: Sequence[str] = (UBUNTU_LDCACHE_DIR,)) -> None:
    """``ldconfig -p`` lists the shared objects present in ``directories`` when it runs."""
    m.executable("/sbin/ldconfig")
    root = m.root

    def reply(argv: Sequence[str]) -> CommandResult:
        lines = []
        for directory in directories:
            folder = root / directory.lstrip("/")
            names = sorted(
                (p.name for p in folder.glob("lib*.so*") if _SONAME_LIKE.match(p.name)),
                reverse=True,
            )
            lines += [f"\t{name} (libc6,x86-64) => {directory}/{name}" for name in names]
        text = f"{len(lines)} libs found in cache `/etc/ld.so.cache'\n" + "\n".join(lines) + "\n"
        return CommandResult(tuple(argv), 0, text, "")

    m.runner.replies["ldconfig"] = reply


@dataclass(frozen=True)
class Toolkit:
    """A CUDA toolkit as NVIDIA's .run/.deb installers lay it out under /usr/local/cuda-X.Y."""

    version: str
    cudart: str
    cublas: str
    nvrtc: str
    nvcc: str
    curand: str  # each a component's version, in this order in the definitions below

    @property
    def root(self) -> str:
        major, minor = self.version.split(".")[:2]
        return f"/usr/local/cuda-{major}.{minor}"


CUDA_12_4 = Toolkit("12.4.1", "12.4.127", "12.4.5.8", "12.4.127", "12.4.131", "10.3.5.147")
CUDA_12_6 = Toolkit("12.6.2", "12.6.77", "12.6.3.3", "12.6.77", "12.6.77", "10.3.7.77")
CUDA_12_8 = Toolkit("12.8.0", "12.8.57", "12.8.3.14", "12.8.61", "12.8.61", "10.3.9.55")
CUDA_12_2 = Toolkit("12.2.2", "12.2.140", "12.2.5.6", "12.2.140", "12.2.140", "10.3.3.141")


def cuda_toolkit(m: FakeMachine, toolkit: Toolkit, *, default: bool = True) -> str:
    """Install ``toolkit`` (nvcc, headers, libraries, version.json); returns its library dir."""
    root = toolkit.root
    components = {
        "cuda": ("CUDA SDK", toolkit.version),
        "cuda_cudart": ("CUDA Runtime (cudart)", toolkit.cudart),
        "cuda_nvcc": ("CUDA NVCC", toolkit.nvcc),
        "cuda_nvrtc": ("CUDA NVRTC", toolkit.nvrtc),
        "libcublas": ("CUDA cuBLAS", toolkit.cublas),
    }
    m.write(
        f"{root}/version.json",
        json.dumps(
            {key: {"name": n, "version": v} for key, (n, v) in components.items()}, indent=3
        ),
    )
    m.executable(f"{root}/bin/nvcc")
    m.write(f"{root}/include/cuda_runtime_api.h", "#define CUDART_VERSION 12000\n")
    libdir = f"{root}/targets/x86_64-linux/lib"
    major = toolkit.version.split(".")[0]
    for lib, version in (
        ("libcudart", toolkit.cudart),
        ("libcublas", toolkit.cublas),
        ("libcublasLt", toolkit.cublas),
        ("libnvrtc", toolkit.nvrtc),
        ("libcurand", toolkit.curand),
    ):
        soname_major = version.split(".")[0] if lib == "libcurand" else major
        m.write(f"{libdir}/{lib}.so.{version}")
        m.link(f"{libdir}/{lib}.so.{soname_major}", f"{lib}.so.{version}")
        m.link(f"{libdir}/{lib}.so", f"{lib}.so.{soname_major}")
    m.link(f"{root}/lib64", "targets/x86_64-linux/lib")
    if default:
        m.link("/usr/local/cuda", root.rsplit("/", 1)[1])
        m.env["PATH"] = m.env["PATH"] + ":/usr/local/cuda/bin"
    return libdir


# --------------------------------------------------------------------------------------------
# PyTorch builds and the pip wheels they pull in


@dataclass(frozen=True)
class TorchBuild:
    """A PyTorch wheel: version.py contents and the exact ``nvidia-*``/triton pins it installs."""

    version: str
    cuda: str | None
    git_version: str
    wheels: tuple[tuple[str, str], ...]
    #: SM architectures with cubins (and PTX) in libtorch_cuda.so (``torch.cuda.get_arch_list()``).
    cubins: tuple[int, ...] = ()
    ptx: tuple[int, ...] = ()


def _cu12(**versions: str) -> tuple[tuple[str, str], ...]:
    names = {
        "nvrtc": "nvidia-cuda-nvrtc-cu12",
        "runtime": "nvidia-cuda-runtime-cu12",
        "cupti": "nvidia-cuda-cupti-cu12",
        "cudnn": "nvidia-cudnn-cu12",
        "cublas": "nvidia-cublas-cu12",
        "cufft": "nvidia-cufft-cu12",
        "curand": "nvidia-curand-cu12",
        "cusolver": "nvidia-cusolver-cu12",
        "cusparse": "nvidia-cusparse-cu12",
        "cusparselt": "nvidia-cusparselt-cu12",
        "nccl": "nvidia-nccl-cu12",
        "nvtx": "nvidia-nvtx-cu12",
        "nvjitlink": "nvidia-nvjitlink-cu12",
        "cufile": "nvidia-cufile-cu12",
        "triton": "triton",
    }
    return tuple((names[key], version) for key, version in versions.items())


_CU121 = {
    "nvrtc": "12.1.105",
    "runtime": "12.1.105",
    "cupti": "12.1.105",
    "cublas": "12.1.3.1",
    "cufft": "11.0.2.54",
    "curand": "10.3.2.106",
    "cusolver": "11.4.5.107",
    "cusparse": "12.1.0.106",
    "nvtx": "12.1.105",
}
_CU124 = {
    "nvrtc": "12.4.127",
    "runtime": "12.4.127",
    "cupti": "12.4.127",
    "cublas": "12.4.5.8",
    "cufft": "11.2.1.3",
    "curand": "10.3.5.147",
    "cusolver": "11.6.1.9",
    "cusparse": "12.3.1.170",
    "nvtx": "12.4.127",
    "nvjitlink": "12.4.127",
}

#: ``TORCH_CUDA_ARCH_LIST`` of the CUDA 12.1/12.4 wheels and of the CUDA 12.8 ones.
TORCH_CU12X_ARCHS = (50, 60, 70, 75, 80, 86, 90)
TORCH_CU128_ARCHS = (75, 80, 86, 90, 100, 120)

TORCH_2_3_1_CU121 = TorchBuild(
    "2.3.1+cu121",
    "12.1",
    "63d5e9221bedd1546b7d364b5ce4171547db12a9",
    _cu12(**_CU121, cudnn="8.9.2.26", nccl="2.20.5", nvjitlink="12.5.82", triton="2.3.1"),
    cubins=TORCH_CU12X_ARCHS,
)
TORCH_2_4_0_CU121 = TorchBuild(
    "2.4.0+cu121",
    "12.1",
    "e4ee3be4063b7c430974252fdf7db42273388d86",
    _cu12(**_CU121, cudnn="9.1.0.70", nccl="2.20.5", nvjitlink="12.6.20", triton="3.0.0"),
    cubins=TORCH_CU12X_ARCHS,
)
TORCH_2_5_1_CU121 = TorchBuild(
    "2.5.1+cu121",
    "12.1",
    "a8d6afb511a69687bbb2b7e88a3cf67917e1697e",
    _cu12(**_CU121, cudnn="9.1.0.70", nccl="2.21.5", nvjitlink="12.6.77", triton="3.1.0"),
    cubins=TORCH_CU12X_ARCHS,
)
TORCH_2_5_1_CU124 = TorchBuild(
    "2.5.1+cu124",
    "12.4",
    "a8d6afb511a69687bbb2b7e88a3cf67917e1697e",
    _cu12(**_CU124, cudnn="9.1.0.70", nccl="2.21.5", triton="3.1.0"),
    cubins=TORCH_CU12X_ARCHS,
)
TORCH_2_6_0_CU124 = TorchBuild(
    "2.6.0+cu124",
    "12.4",
    "1eba9b3aa3c43f86f4a2c807ac8e12c4a7767340",
    _cu12(**_CU124, cudnn="9.1.0.70", cusparselt="0.6.2", nccl="2.21.5", triton="3.2.0"),
    cubins=TORCH_CU12X_ARCHS,
)
TORCH_2_7_0_CU128 = TorchBuild(
    "2.7.0+cu128",
    "12.8",
    "134179474539648ba7dee1317959529fbd0e7f89",
    _cu12(
        nvrtc="12.8.61",
        runtime="12.8.57",
        cupti="12.8.57",
        cudnn="9.7.1.26",
        cublas="12.8.3.14",
        cufft="11.3.3.41",
        curand="10.3.9.55",
        cusolver="11.7.2.55",
        cusparse="12.5.7.53",
        cusparselt="0.6.3",
        nccl="2.26.2",
        nvtx="12.8.55",
        nvjitlink="12.8.61",
        cufile="1.13.0.11",
        triton="3.3.0",
    ),
    cubins=TORCH_CU128_ARCHS,
)
TORCH_2_8_0_CU128 = TorchBuild(
    "2.8.0+cu128",
    "12.8",
    "ba56102387ef21a3b04b357e5b183d48f0afefc7",
    _cu12(
        nvrtc="12.8.93",
        runtime="12.8.90",
        cupti="12.8.90",
        cudnn="9.10.2.21",
        cublas="12.8.4.1",
        cufft="11.3.3.83",
        curand="10.3.9.90",
        cusolver="11.7.3.90",
        cusparse="12.5.8.93",
        cusparselt="0.7.1",
        nccl="2.27.3",
        nvtx="12.8.90",
        nvjitlink="12.8.93",
        cufile="1.13.1.3",
        triton="3.4.0",
    ),
    cubins=TORCH_CU128_ARCHS,
)
TORCH_2_5_1_CPU = TorchBuild("2.5.1+cpu", None, "a8d6afb511a69687bbb2b7e88a3cf67917e1697e", ())

#: pip distribution (minus ``-cuXX``) -> (folder under ``site/nvidia``, library file names).
#: ``{major}`` is the first component of the wheel's version, ``{mm}`` its major.minor.
WHEEL_LIBRARIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "nvidia-cuda-runtime": ("cuda_runtime", ("libcudart.so.{major}",)),
    "nvidia-cuda-nvrtc": ("cuda_nvrtc", ("libnvrtc.so.{major}", "libnvrtc-builtins.so.{mm}")),
    "nvidia-cuda-cupti": ("cuda_cupti", ("libcupti.so.{major}",)),
    "nvidia-cublas": (
        "cublas",
        ("libcublas.so.{major}", "libcublasLt.so.{major}", "libnvblas.so.{major}"),
    ),
    "nvidia-cufft": ("cufft", ("libcufft.so.{major}", "libcufftw.so.{major}")),
    "nvidia-curand": ("curand", ("libcurand.so.{major}",)),
    "nvidia-cusolver": ("cusolver", ("libcusolver.so.{major}", "libcusolverMg.so.{major}")),
    "nvidia-cusparse": ("cusparse", ("libcusparse.so.{major}",)),
    "nvidia-cusparselt": ("cusparselt", ("libcusparseLt.so.0",)),
    "nvidia-nccl": ("nccl", ("libnccl.so.{major}",)),
    "nvidia-nvtx": ("nvtx", ("libnvToolsExt.so.1",)),
    "nvidia-nvjitlink": ("nvjitlink", ("libnvJitLink.so.{major}",)),
    "nvidia-cufile": ("cufile", ("libcufile.so.0", "libcufile_rdma.so.1")),
}
CUDNN_LIBRARIES = {
    8: ("", "_ops_infer", "_ops_train", "_cnn_infer", "_cnn_train", "_adv_infer", "_adv_train"),
    9: (
        "",
        "_adv",
        "_cnn",
        "_engines_precompiled",
        "_engines_runtime_compiled",
        "_graph",
        "_heuristic",
        "_ops",
    ),
}


def cudnn_header(version: str) -> str:
    """The ``#define`` lines of ``cudnn_version.h`` for a cuDNN version like ``9.1.0.70``."""
    major, minor, patch = version.split(".")[:3]
    return (
        "/* cudnn_version.h */\n#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
        f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n"
        f"#define CUDNN_PATCHLEVEL {patch}\n\n"
        "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
        "\n#endif\n"
    )


def nvidia_wheel(m: FakeMachine, site: str, name: str, version: str, installer: str) -> None:
    """One ``nvidia-*`` wheel: its metadata and its libraries under ``site/nvidia/<folder>/lib``."""
    m.add_dist(name, version, site=site, installer=installer)
    base = re.sub(r"-cu\d+$", "", name)
    major = version.split(".")[0]
    mm = ".".join(version.split(".")[:2])
    if base == "nvidia-cudnn":
        folder = f"{site}/nvidia/cudnn"
        files: tuple[str, ...] = tuple(
            f"libcudnn{part}.so.{major}" for part in CUDNN_LIBRARIES[int(major)]
        )
        m.write(f"{folder}/include/cudnn_version.h", cudnn_header(version))
    elif base in WHEEL_LIBRARIES:
        sub, templates = WHEEL_LIBRARIES[base]
        folder = f"{site}/nvidia/{sub}"
        files = tuple(t.format(major=major, mm=mm) for t in templates)
    else:
        return
    m.write(f"{folder}/__init__.py")
    for file in files:
        m.write(f"{folder}/lib/{file}")


#: DT_RPATH (not DT_RUNPATH) of a CUDA 12 PyPI wheel's libtorch_cuda.so, as ``readelf -d`` shows
#: it: the pip nvidia folders are searched before LD_LIBRARY_PATH.
TORCH_CU12_RPATH = ":".join(
    [
        f"$ORIGIN/../../nvidia/{folder}/lib"
        for folder in (
            "cublas",
            "cuda_cupti",
            "cuda_nvrtc",
            "cuda_runtime",
            "cudnn",
            "cufft",
            "curand",
            "cusolver",
            "cusparse",
            "nccl",
            "nvtx",
        )
    ]
    + ["$ORIGIN"]
)


def torch_cuda_needed(build: TorchBuild) -> tuple[str, ...]:
    """DT_NEEDED of libtorch_cuda.so: the CUDA libraries of its major, cuDNN of its wheel."""
    assert build.cuda is not None
    major = build.cuda.split(".")[0]
    cudnn = next((v for n, v in build.wheels if n.startswith("nvidia-cudnn")), "9")
    return (
        "libc10_cuda.so",
        f"libcudart.so.{major}",
        "libnccl.so.2",
        "libcurand.so.10",
        f"libcublas.so.{major}",
        f"libcublasLt.so.{major}",
        f"libcudnn.so.{cudnn.split('.')[0]}",
        f"libnvrtc.so.{major}",
        "libc10.so",
        "libtorch_cpu.so",
    )


def torch_version_py(build: TorchBuild) -> str:
    """``torch/version.py`` exactly as a PyTorch wheel generates it."""
    cuda = "None" if build.cuda is None else repr(build.cuda)
    return (
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
        f"__version__ = '{build.version}'\n"
        "debug = False\n"
        f"cuda: Optional[str] = {cuda}\n"
        f"git_version = '{build.git_version}'\n"
        "hip: Optional[str] = None\n"
    )


def install_torch(
    m: FakeMachine,
    site: str,
    build: TorchBuild,
    *,
    installer: str = "pip",
    direct_url: dict[str, object] | None = None,
) -> None:
    """PyTorch and every wheel it pins, as ``pip install torch`` leaves them."""
    m.add_dist("torch", build.version, site=site, installer=installer, direct_url=direct_url)
    m.write(f"{site}/torch/__init__.py")
    m.write(f"{site}/torch/version.py", torch_version_py(build))
    for lib in ("libc10.so", "libtorch.so", "libtorch_cpu.so", "libtorch_python.so"):
        m.write(f"{site}/torch/lib/{lib}")
    if build.cuda is not None:
        m.write(f"{site}/torch/lib/libc10_cuda.so")
        m.write(
            f"{site}/torch/lib/libtorch_cuda.so",
            elf_shared_object(
                "libtorch_cuda.so",
                torch_cuda_needed(build),
                cubins=build.cubins,
                ptx=build.ptx,
                rpath=TORCH_CU12_RPATH if build.wheels else "",
            ),
        )
    for name, version in build.wheels:
        if name.startswith("nvidia-"):
            nvidia_wheel(m, site, name, version, installer)
        else:
            m.add_dist(name, version, site=site, installer=installer)
    for name, version in (("numpy", "2.1.2"), ("nvidia-ml-py", "12.570.86")):
        m.add_dist(name, version, site=site, installer=installer)


def install_te_wheels(
    m: FakeMachine,
    site: str,
    version: str,
    *,
    cores: Sequence[tuple[str, str]] = (("cu12", ""),),
    torch_extension: bool = True,
    core_links_cuda: int = 12,
    cudnn_major: int = 9,
    installer: str = "pip",
    cubins: Sequence[int] = (),
) -> None:
    """``pip install transformer-engine[pytorch]==version``: metapackage, core wheel, extension.

    ``cores`` lists (``cu12``/``cu13``, version or "" for ``version``); they all unpack the core
    library to the same path, so the last one's ``libtransformer_engine.so`` is the one on disk.
    ``cubins`` defaults to the ``NVTE_CUDA_ARCHS`` TE's wheel build used for that version.
    """
    if not cubins:
        cubins = te_wheel_archs(version, core_links_cuda)
    m.add_dist("transformer-engine", version, site=site, installer=installer)
    m.write(f"{site}/transformer_engine/__init__.py", f'__version__ = "{version}"\n')
    for variant, core_version in cores:
        m.add_dist(
            f"transformer-engine-{variant}", core_version or version, site=site, installer=installer
        )
    m.write(
        f"{site}/transformer_engine/wheel_lib/libtransformer_engine.so",
        elf_shared_object(
            "libtransformer_engine.so",
            te_core_needed(version, core_links_cuda, cudnn_major),
            cubins=cubins,
        ),
    )
    if torch_extension:
        # The torch extension is an sdist compiled (or, from 2.8, downloaded) at install time.
        m.add_dist("transformer-engine-torch", version, site=site, installer=installer)
        m.write(f"{site}/{TORCH_EXT}", elf_shared_object(TORCH_EXT, TORCH_EXT_NEEDED))


def install_te_source(
    m: FakeMachine,
    site: str,
    version: str,
    source_url: dict[str, object],
    *,
    cubins: Sequence[int],
    cuda_major: int = 12,
    cudnn_major: int = 9,
) -> None:
    """A source build of TE (one ``transformer_engine`` dist; libraries at the site's top)."""
    m.add_dist("transformer-engine", version, site=site, direct_url=source_url)
    m.write(f"{site}/transformer_engine/__init__.py")
    m.write(
        f"{site}/libtransformer_engine.so",
        elf_shared_object(
            "libtransformer_engine.so",
            te_core_needed(version, cuda_major, cudnn_major),
            cubins=cubins,
        ),
    )
    m.write(f"{site}/{TORCH_EXT}", elf_shared_object(TORCH_EXT, TORCH_EXT_NEEDED))


def te_wheel_archs(version: str, cuda_major: int) -> tuple[int, ...]:
    """GPU architectures in a PyPI TE core wheel (``build_tools/utils.py:cuda_archs`` defaults).

    1.x wheels were built with CUDA 12.3 (``70;80;89;90``); 2.x cu12 wheels with CUDA 12.8+
    (``70;80;89;90;100;120``); cu13 wheels dropped Volta (``75;80;89;90;100;120``).
    """
    if cuda_major >= 13:
        return (75, 80, 89, 90, 100, 120)
    if int(version.split(".")[0]) < 2:
        return (70, 80, 89, 90)
    return (70, 80, 89, 90, 100, 120)


def add_packages(m: FakeMachine, site: str, packages: Sequence[tuple[str, str]]) -> None:
    """Other distributions of interest (flash-attn, accelerate, ...)."""
    for name, version in packages:
        m.add_dist(name, version, site=site)


def system_nvrtc(m: FakeMachine, version: str = "12.0.140", libdir: str = UBUNTU_LIBDIR) -> None:
    """NVRTC from the distribution's packages (Ubuntu ``libnvrtc12``), so in the loader cache.

    TE 1.9-2.3 look for NVRTC only in CUDA_HOME/CUDA_PATH/``/usr/local/cuda`` and then in
    ``ldconfig -p`` (never in the pip wheel): without one of them ``import transformer_engine``
    fails (``_load_nvrtc`` at v1.9-v2.3). Machines with those releases and no toolkit have this.
    """
    m.write(f"{libdir}/libnvrtc.so.{version}")
    m.link(f"{libdir}/libnvrtc.so.{version.split('.')[0]}", f"libnvrtc.so.{version}")


def pip_cudnn_on_loader_path(m: FakeMachine, site: str) -> None:
    """``LD_LIBRARY_PATH`` holds the pip cuDNN folder (the workaround TE#1853 needs).

    TE 2.2 and 2.3 cores link every cuDNN sub-library (``CUDNN::cudnn_all``), but their import
    opens only the wheel's ``libcudnn.so.9``: the sub-libraries must be on the loader path.
    """
    folder = f"{site}/nvidia/cudnn/lib"
    m.env["LD_LIBRARY_PATH"] = ":".join(p for p in (folder, m.env.get("LD_LIBRARY_PATH")) if p)


# --------------------------------------------------------------------------------------------
# The scenarios


def h100_cuda12_te_ok(m: FakeMachine) -> None:
    """DGX H100, driver 550, torch 2.6.0+cu124 from pip, TE 2.3.0 (cu12) with its torch extension.

    Everything a TE FP8 user needs, installed the recommended way, in a venv.
    """
    slug = "h100-cuda12-te-ok"
    host(m, hostname="dgx-h100-03", kernel="6.8.0-49-generic", cpus=224, mem_kib=2113389556)
    devices = gpus(
        slug,
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        81559,
        HGX_BUS_IDS,
        serial_prefix="165242302",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "550.54.15", 12040, devices)
    toolkit_lib = cuda_toolkit(m, CUDA_12_4)
    m.env["CUDA_HOME"] = "/usr/local/cuda"
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    site = venv(m, "/opt/venvs/train")
    install_torch(m, site, TORCH_2_6_0_CU124)
    install_te_wheels(m, site, "2.3.0")
    pip_cudnn_on_loader_path(m, site)
    add_packages(m, site, (("flash-attn", "2.7.4.post1"), ("accelerate", "1.6.0")))
    m.env.update({"NCCL_IB_HCA": "mlx5", "OMP_NUM_THREADS": "8"})


def a100(m: FakeMachine) -> None:
    """DGX A100 on Rocky Linux 9, driver 535, torch 2.4.0+cu121, TE 1.13.0 (cu12): no FP8."""
    slug = "a100"
    host(
        m,
        hostname="a100-node-12",
        kernel="5.14.0-427.13.1.el9_4.x86_64",
        cpus=256,
        mem_kib=1056467012,
        os_release='NAME="Rocky Linux"\nVERSION_ID="9.4"\n'
        'PRETTY_NAME="Rocky Linux 9.4 (Blue Onyx)"\n',
        glibc="2.34",
        user="bob",
        proc_version="Linux version 5.14.0-427.13.1.el9_4.x86_64 (mockbuild@iad1-prod-build001"
        ".bld.equ.rockylinux.org) (gcc (GCC) 11.4.1 20231218 (Red Hat 11.4.1-3))\n",
        libdir="/usr/lib64",
    )
    devices = gpus(
        slug,
        "NVIDIA A100-SXM4-80GB",
        (8, 0),
        81920,
        DGX_A100_BUS_IDS,
        serial_prefix="132462100",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "535.183.06", 12020, devices, libdir="/usr/lib64")
    system_nvrtc(m, libdir="/usr/lib64")
    ldconfig(m, ("/lib64",))
    site = venv(m, "/home/bob/venvs/te")
    install_torch(m, site, TORCH_2_4_0_CU121)
    install_te_wheels(m, site, "1.13.0")
    add_packages(m, site, (("flash-attn", "2.6.3"),))


def l40s_ada(m: FakeMachine) -> None:
    """4x L40S (Ada, cc 8.9) PCIe server, driver 550, torch 2.5.1+cu124, TE 2.1.0 (cu12)."""
    slug = "l40s-ada"
    host(m, hostname="inference-l40s-2", kernel="6.8.0-51-generic", cpus=128, mem_kib=528082556)
    bus_ids = tuple(f"00000000:{bus}:00.0" for bus in ("01", "25", "41", "61"))
    devices = gpus(
        slug, "NVIDIA L40S", (8, 9), 46068, bus_ids, serial_prefix="132352304", persistence=0
    )
    nvidia_driver(m, "550.127.05", 12040, devices)
    system_nvrtc(m)
    ldconfig(m)
    site = venv(m, "/srv/app/.venv")
    install_torch(m, site, TORCH_2_5_1_CU124)
    install_te_wheels(m, site, "2.1.0")


def rtx_4090(m: FakeMachine) -> None:
    """A workstation with one GeForce RTX 4090 (no serial), driver 560, CUDA 12.6 toolkit."""
    slug = "rtx-4090"
    host(m, hostname="alice-desktop", kernel="6.8.0-45-generic", cpus=32, mem_kib=65536412)
    devices = gpus(
        slug,
        "NVIDIA GeForce RTX 4090",
        (8, 9),
        24564,
        ("00000000:01:00.0",),
        serial_prefix=None,
        persistence=0,
    )
    nvidia_driver(m, "560.35.03", 12060, devices)
    toolkit_lib = cuda_toolkit(m, CUDA_12_6)
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    site = venv(m, "/home/alice/venvs/fp8")
    install_torch(m, site, TORCH_2_5_1_CU124)
    install_te_wheels(m, site, "1.12.0")


def b200(m: FakeMachine) -> None:
    """DGX B200 (cc 10.0), open kernel module 570, CUDA 12.8, torch 2.7.0+cu128 via uv, TE 2.3.0."""
    slug = "b200"
    host(m, hostname="dgx-b200-01", kernel="6.8.0-60-generic", cpus=224, mem_kib=4227858432)
    devices = gpus(
        slug,
        "NVIDIA B200",
        (10, 0),
        183359,
        HGX_BUS_IDS,
        serial_prefix="165332500",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "570.124.06", 12080, devices, open_module=True)
    toolkit_lib = cuda_toolkit(m, CUDA_12_8)
    m.env["CUDA_HOME"] = "/usr/local/cuda"
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    site = venv(m, "/home/alice/proj/.venv")
    install_torch(m, site, TORCH_2_7_0_CU128, installer="uv")
    install_te_wheels(m, site, "2.3.0", installer="uv")
    pip_cudnn_on_loader_path(m, site)
    m.env["NVTE_FRAMEWORK"] = "pytorch"


def v100(m: FakeMachine) -> None:
    """DGX-1 with 8x V100 (cc 7.0), driver 535, torch 2.3.1+cu121 (cuDNN 8), TE 1.11 from git."""
    slug = "v100"
    host(m, hostname="dgx1-v100-02", kernel="6.8.0-40-generic", cpus=80, mem_kib=528140896)
    devices = gpus(
        slug, "Tesla V100-SXM2-32GB", (7, 0), 32768, DGX1_BUS_IDS, serial_prefix="032301800"
    )
    nvidia_driver(m, "535.183.06", 12020, devices)
    toolkit_lib = cuda_toolkit(m, CUDA_12_2)
    m.env["CUDA_HOME"] = "/usr/local/cuda"
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    site = venv(m, "/home/alice/megatron/.venv")
    install_torch(m, site, TORCH_2_3_1_CU121)
    install_te_source(
        m,
        site,
        "1.11.0+c27ee60",
        {
            "url": "https://github.com/NVIDIA/TransformerEngine.git",
            "vcs_info": {
                "vcs": "git",
                "requested_revision": "release_v1.11",
                "commit_id": "c27ee60ec746210bcea4ec33958dbbff06706506",
            },
        },
        cubins=(70, 80, 89, 90),  # NVTE_CUDA_ARCHS default for CUDA < 12.8
        cudnn_major=8,
    )
    m.env.update({"NVTE_FRAMEWORK": "pytorch", "MAX_JOBS": "16"})


def t4(m: FakeMachine) -> None:
    """A cloud VM with one Tesla T4 (cc 7.5), driver 535, torch 2.5.1+cu121, TE 1.13.0."""
    slug = "t4"
    host(m, hostname="t4-vm-1", kernel="6.8.0-1015-gcp", cpus=8, mem_kib=30817288)
    devices = gpus(
        slug,
        "Tesla T4",
        (7, 5),
        15360,
        ("00000000:00:04.0",),
        serial_prefix="132142000",
        persistence=0,
    )
    nvidia_driver(m, "535.104.05", 12020, devices)
    system_nvrtc(m)
    ldconfig(m)
    site = system_python(m)
    install_torch(m, site, TORCH_2_5_1_CU121)
    install_te_wheels(m, site, "1.13.0")


def no_gpu_laptop(m: FakeMachine) -> None:
    """A laptop without an NVIDIA driver: CPU-only torch in a venv, no TE."""
    host(m, hostname="alice-thinkpad", kernel="6.8.0-49-generic", cpus=16, mem_kib=32562120)
    ldconfig(m)
    site = venv(m, "/home/alice/.venvs/llm")
    install_torch(m, site, TORCH_2_5_1_CPU)


def h100_mig(m: FakeMachine) -> None:
    """A Kubernetes pod on an H100 in MIG mode, given one 3g.40gb slice by the device plugin."""
    slug = "h100-mig"
    host(
        m,
        hostname="trainer-7f9c6d5b8-xk2lp",
        kernel="5.15.0-1063-nvidia",
        cpus=32,
        mem_kib=263862604,
    )
    m.write("/proc/1/cgroup", "0::/\n")
    devices = gpus(
        slug,
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        81559,
        ("00000000:9D:00.0",),
        serial_prefix="165242304",
        mig=(1, 1),
    )
    nvidia_driver(m, "550.90.07", 12040, devices)
    system_nvrtc(m)
    ldconfig(m)
    site = system_python(m)
    install_torch(m, site, TORCH_2_6_0_CU124)
    install_te_wheels(m, site, "2.2.0")
    pip_cudnn_on_loader_path(m, site)
    mig = mig_uuid(f"{slug}/0/3g.40gb")
    m.env.update(
        {
            "CUDA_VISIBLE_DEVICES": mig,
            "NVIDIA_VISIBLE_DEVICES": mig,
            "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
            "KUBERNETES_SERVICE_HOST": "10.96.0.1",
            "KUBERNETES_SERVICE_PORT": "443",
        }
    )


def driver_older_than_torch_cuda(m: FakeMachine) -> None:
    """2x H100 PCIe on driver 535 (CUDA 12.2) running torch 2.6.0+cu124 and TE 2.1.0."""
    slug = "driver-older-than-torch-cuda"
    host(m, hostname="gpu-node-07", kernel="5.15.0-105-generic", cpus=64, mem_kib=527939696)
    bus_ids = ("00000000:4F:00.0", "00000000:CE:00.0")
    devices = gpus(
        slug,
        "NVIDIA H100 PCIe",
        (9, 0),
        81559,
        bus_ids,
        serial_prefix="132252306",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "535.161.08", 12020, devices)
    system_nvrtc(m)
    ldconfig(m)
    site = venv(m, "/home/alice/te-env")
    install_torch(m, site, TORCH_2_6_0_CU124)
    install_te_wheels(m, site, "2.1.0")


def two_te_variants(m: FakeMachine) -> None:
    """HGX H100 where ``transformer-engine-cu12`` 2.8.0 was left behind by an upgrade to 2.9.0.

    The 2.9.0 install pulled ``transformer-engine-cu13`` (its torch extension build saw CUDA 13)
    and overwrote the core library with the cu13 build, which needs ``libcudart.so.13`` while
    torch 2.8.0+cu128 only brought the CUDA 12 wheels.
    """
    slug = "two-te-variants"
    host(m, hostname="hgx-h100-11", kernel="6.8.0-49-generic", cpus=192, mem_kib=2113389556)
    devices = gpus(
        slug,
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        81559,
        HGX_BUS_IDS,
        serial_prefix="165242305",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "575.57.08", 12090, devices)
    ldconfig(m)
    site = venv(m, "/home/alice/llm/.venv")
    install_torch(m, site, TORCH_2_8_0_CU128)
    install_te_wheels(
        m, site, "2.9.0", cores=(("cu12", "2.8.0"), ("cu13", "2.9.0")), core_links_cuda=13
    )


def apt_cudnn_and_nccl(m: FakeMachine, cudnn: str, nccl: str) -> None:
    """cuDNN 9 and NCCL from an NGC image's apt packages (not pip wheels), in the loader cache.

    libcudnn9-dev adds the unversioned libcudnn.so that TE's final ``dlopen`` needs.
    """
    for lib, version in (("libcudnn", cudnn), ("libnccl", nccl)):
        m.write(f"{UBUNTU_LIBDIR}/{lib}.so.{version}")
        m.link(f"{UBUNTU_LIBDIR}/{lib}.so.{version.split('.')[0]}", f"{lib}.so.{version}")
    for part in CUDNN_LIBRARIES[9][1:]:
        m.write(f"{UBUNTU_LIBDIR}/libcudnn{part}.so.{cudnn}")
        m.link(f"{UBUNTU_LIBDIR}/libcudnn{part}.so.9", f"libcudnn{part}.so.{cudnn}")
    m.link(f"{UBUNTU_LIBDIR}/libcudnn.so", "libcudnn.so.9")


def ngc_container(m: FakeMachine) -> None:
    """NGC PyTorch 25.01 (torch 2.6.0a0+ecf3bae40a, CUDA 12.8, cuDNN 9.7.0, TE 1.14 from source)."""
    slug = "ngc-container"
    host(
        m,
        hostname="3f9a1c2b7d4e",
        kernel="5.15.0-126-generic",
        cpus=224,
        mem_kib=2113389556,
        user="root",
        os_release='PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\n',
    )
    m.write("/.dockerenv")
    devices = gpus(
        slug,
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        81559,
        HGX_BUS_IDS,
        serial_prefix="165242306",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "570.86.15", 12080, devices)
    toolkit_lib = cuda_toolkit(m, CUDA_12_8)
    apt_cudnn_and_nccl(m, "9.7.0", "2.25.1")
    m.write("/usr/include/x86_64-linux-gnu/cudnn_version_v9.h", cudnn_header("9.7.0.66"))
    m.link("/usr/include/cudnn_version.h", "x86_64-linux-gnu/cudnn_version_v9.h")
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    site = system_python(m)
    m.write(f"{site}/torch_tensorrt/lib/.keep")  # on LD_LIBRARY_PATH in the real image
    ngc_torch = TorchBuild(
        "2.6.0a0+ecf3bae40a",
        "12.8",
        "ecf3bae40a6f2f0f3b237bb5a1f4bd0a1b8a5c64",
        (),
        cubins=TORCH_CU128_ARCHS,
        ptx=(120,),  # TORCH_CUDA_ARCH_LIST="7.5 8.0 8.6 9.0 10.0 12.0+PTX"
    )
    install_torch(
        m,
        site,
        ngc_torch,
        direct_url={"url": "file:///opt/pytorch/pytorch", "dir_info": {}},
    )
    add_packages(m, site, (("pytorch-triton", "3.1.0+cf34004b8.internal"), ("flash-attn", "2.4.2")))
    install_te_source(
        m,
        site,
        "1.14.0+5f1fa3f",
        {"url": "file:///opt/transformerengine", "dir_info": {}},
        cubins=(70, 80, 89, 90, 100, 120),
    )
    m.env.update(
        {
            "NVIDIA_PYTORCH_VERSION": "25.01",
            "PYTORCH_VERSION": "2.6.0a0+ecf3bae",
            "PYTORCH_BUILD_VERSION": "2.6.0a0+ecf3bae",
            "CUDA_VERSION": "12.8.0.038",
            "CUDNN_VERSION": "9.7.0.66",
            "NCCL_VERSION": "2.25.1",
            "CUBLAS_VERSION": "12.8.3.14",
            "CUDA_HOME": "/usr/local/cuda",
            "NVIDIA_VISIBLE_DEVICES": "all",
            "NVIDIA_DRIVER_CAPABILITIES": "compute,utility,video",
            "TORCH_CUDA_ARCH_LIST": "7.5 8.0 8.6 9.0 10.0 12.0+PTX",
            "LD_LIBRARY_PATH": f"{site}/torch/lib:{site}/torch_tensorrt/lib:"
            "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
            "PATH": "/usr/local/lib/python3.12/dist-packages/torch_tensorrt/bin:"
            "/usr/local/mpi/bin:/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:"
            "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/ucx/bin:/opt/amazon/efa/bin",
        }
    )


def wedged_driver(m: FakeMachine) -> None:
    """HGX H100 whose driver stopped answering (Xid 79): NVML fails, nvidia-smi hangs.

    The kernel module is still loaded, so ``/proc/driver/nvidia/version`` still reads fine.
    """
    h100_cuda12_te_ok(m)
    m.system = dataclasses.replace(m.system, hostname="dgx-h100-05")
    nvml = m.nvml
    assert isinstance(nvml, FakeNvml)
    nvml.init_error = pynvml.NVML_ERROR_UNKNOWN
    m.runner.replies["nvidia-smi"] = CommandResult(
        ("/usr/bin/nvidia-smi",), TIMED_OUT, "", "no answer after 3.0 s, killed"
    )


CUDNN_PIP = "/opt/venvs/train/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9"
H100_SUPPORT = te_support(
    fp8="",
    mxfp8="Device compute capability 10.0 or higher required for MXFP8 execution.",
    fp8_block="FP8 block scaled GEMM requires Hopper and CUDA >= 12.9.",
    nvfp4="Device compute capability 10.0 or higher required for NVFP4 execution.",
    bf16="",
)


def h100_smoke_verified(m: FakeMachine) -> None:
    """The healthy H100 node with its smoke test: every FP8 path it supports verified."""
    h100_cuda12_te_ok(m)
    gpu = "cuda:0"
    skipped = "TE reports it unsupported here"
    m.smoke = child_result(
        [
            check("cpu", "cpu"),
            check("torch-fp32", gpu),
            check("torch-amp-bf16", gpu),
            check("torch-amp-fp16", gpu),
            check("torch-fp8", gpu),
            check("te-bf16", gpu),
            check("te-fp16", gpu),
            check("te-fp8-delayed", gpu),
            check("te-fp8-current", gpu),
            check("te-fp8-block", gpu, "skipped", skipped),
            check("te-mxfp8", gpu, "skipped", skipped),
            check("te-nvfp4", gpu, "skipped", skipped),
        ],
        cuda=True,
        capability="9.0",
        cudnn="9.1.0",
        te_support=H100_SUPPORT,
        libraries=[{"name": "cudnn", "path": CUDNN_PIP, "version": "9", "origin": "pip"}],
    )


def h100_fp8_gemm_fails(m: FakeMachine) -> None:
    """TE imports and says FP8 is supported, but cuBLASLt refuses every FP8 GEMM at run time."""
    h100_cuda12_te_ok(m)
    gpu = "cuda:0"
    refused = "RuntimeError: CUBLAS_STATUS_NOT_SUPPORTED when calling cublasLtMatmul"
    skipped = "TE reports it unsupported here"
    m.smoke = child_result(
        [
            check("cpu", "cpu"),
            check("torch-fp32", gpu),
            check("torch-amp-bf16", gpu),
            check("torch-amp-fp16", gpu),
            check("torch-fp8", gpu, "failed", refused),
            check("te-bf16", gpu),
            check("te-fp16", gpu),
            check("te-fp8-delayed", gpu, "failed", refused),
            check("te-fp8-current", gpu, "failed", refused),
            check("te-fp8-block", gpu, "skipped", skipped),
            check("te-mxfp8", gpu, "skipped", skipped),
            check("te-nvfp4", gpu, "skipped", skipped),
        ],
        cuda=True,
        capability="9.0",
        cudnn="9.1.0",
        te_support=H100_SUPPORT,
    )


def l40s_no_te(m: FakeMachine) -> None:
    """An L40S inference box with torch 2.5.1 but no TE: torch's own FP8 is what works."""
    slug = "l40s-no-te"
    host(m, hostname="inference-l40s-3", kernel="6.8.0-51-generic", cpus=64, mem_kib=264041278)
    devices = gpus(
        slug,
        "NVIDIA L40S",
        (8, 9),
        46068,
        ("00000000:01:00.0",),
        serial_prefix="132352311",
        persistence=0,
    )
    nvidia_driver(m, "550.127.05", 12040, devices)
    ldconfig(m)
    site = venv(m, "/srv/app/.venv")
    install_torch(m, site, TORCH_2_5_1_CU124)
    gpu = "cuda:0"
    no_te = "Transformer Engine is not installed"
    m.smoke = child_result(
        [
            check("cpu", "cpu"),
            check("torch-fp32", gpu),
            check("torch-amp-bf16", gpu),
            check("torch-amp-fp16", gpu),
            check("torch-fp8", gpu),
        ]
        + [check(name, "", "skipped", no_te) for name in GPU_CHECKS if name.startswith("te-")],
        cuda=True,
        capability="8.9",
        cudnn="9.1.0",
    )


def no_gpu_laptop_smoke(m: FakeMachine) -> None:
    """The GPU-less laptop with its smoke test: FP32 and torch's FP8 GEMM run on the CPU."""
    no_gpu_laptop(m)
    no_cuda = "no CUDA device"
    m.smoke = child_result(
        [check("cpu", "cpu"), check("torch-fp8", "cpu")]
        + [check(name, "", "skipped", no_cuda) for name in GPU_CHECKS],
        cuda=False,
    )


# --------------------------------------------------------------------------------------------
# Machines for `te-doctor plan`: no TE yet, and what building its extension here would find


def build_tools(
    m: FakeMachine,
    *,
    cxx: str = "c++ (Ubuntu 13.2.0-23ubuntu4) 13.2.0",
    cmake: str | None = "3.28.3",
    python_headers: bool = True,
) -> None:
    """The system C++ compiler, cmake (apt) and Python.h (python3.12-dev) the build probe finds."""
    m.executable("/usr/bin/c++")
    m.runner.replies["c++"] = ok(f"{cxx}\nCopyright (C) 2023 Free Software Foundation, Inc.\n")
    if cmake is not None:
        m.executable("/usr/bin/cmake")
        m.runner.replies["cmake"] = ok(f"cmake version {cmake}\n\nCMake suite maintained ...\n")
    if python_headers:
        m.write(f"/usr/include/{PY}/Python.h", "/* Python.h */\n")


def pip_build_tools(
    m: FakeMachine, prefix: str, site: str, *, cudnn_frontend: str | None = "1.29.0"
) -> None:
    """``pip install pybind11 ninja nvidia-cudnn-frontend`` in the venv at ``prefix``."""
    add_packages(m, site, (("pybind11", "2.13.6"), ("ninja", "1.11.1.4")))
    m.executable(f"{prefix}/bin/ninja")
    m.runner.replies["ninja"] = ok("1.11.1.git.kitware.jobserver-1\n")
    if cudnn_frontend is not None:
        add_packages(m, site, (("nvidia-cudnn-frontend", cudnn_frontend),))
        m.write(f"{site}/include/cudnn_frontend.h", "/* cudnn_frontend.h */\n")


def cudnn_wheel_headers(m: FakeMachine, site: str) -> None:
    """cudnn.h of the nvidia-cudnn wheel (the real wheel ships it next to cudnn_version.h)."""
    m.write(f"{site}/nvidia/cudnn/include/cudnn.h", "/* cudnn.h */\n")


def system_cudnn(m: FakeMachine, version: str) -> None:
    """cuDNN 9 from NVIDIA's apt repository (libcudnn9-cuda-12 + libcudnn9-dev-cuda-12)."""
    for part in CUDNN_LIBRARIES[9]:
        m.write(f"{UBUNTU_LIBDIR}/libcudnn{part}.so.{version}")
        m.link(f"{UBUNTU_LIBDIR}/libcudnn{part}.so.9", f"libcudnn{part}.so.{version}")
    m.write("/usr/include/x86_64-linux-gnu/cudnn_v9.h", "/* cudnn.h */\n")
    m.write("/usr/include/x86_64-linux-gnu/cudnn_version_v9.h", cudnn_header(version))
    m.link("/usr/include/cudnn.h", "x86_64-linux-gnu/cudnn_v9.h")
    m.link("/usr/include/cudnn_version.h", "x86_64-linux-gnu/cudnn_version_v9.h")


CUDA_11_8 = Toolkit("11.8.0", "11.8.89", "11.11.3.6", "11.8.89", "11.8.89", "10.3.0.86")
TORCH_2_8_0_CPU = TorchBuild("2.8.0+cpu", None, "ba56102387ef21a3b04b357e5b183d48f0afefc7", ())


def plan_h100_fresh(m: FakeMachine) -> None:
    """DGX H100 ready to build TE: torch 2.8.0+cu128, CUDA 12.8 toolkit, g++ 13, cuDNN dev headers.

    Everything TE's README asks for is installed (cmake, ninja, pybind11, nvidia-cudnn-frontend,
    Python.h, cuDNN headers from NVIDIA's apt repository), but no TE yet.
    """
    slug = "plan-h100-fresh"
    host(m, hostname="dgx-h100-21", kernel="6.8.0-49-generic", cpus=224, mem_kib=2113389556)
    devices = gpus(
        slug,
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        81559,
        HGX_BUS_IDS,
        serial_prefix="165242307",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "570.124.06", 12080, devices)
    toolkit_lib = cuda_toolkit(m, CUDA_12_8)
    system_cudnn(m, "9.10.2.21")
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    build_tools(m)
    prefix = "/home/alice/te/.venv"
    site = venv(m, prefix)
    install_torch(m, site, TORCH_2_8_0_CU128)
    cudnn_wheel_headers(m, site)
    pip_build_tools(m, prefix, site)


def plan_cpu_torch_on_gpu_box(m: FakeMachine) -> None:
    """An L40S server whose venv got the CPU-only torch 2.8.0 (the default wheel of a mirror)."""
    slug = "plan-cpu-torch-on-gpu-box"
    host(m, hostname="l40s-build-2", kernel="6.8.0-51-generic", cpus=64, mem_kib=264041278)
    devices = gpus(
        slug,
        "NVIDIA L40S",
        (8, 9),
        46068,
        ("00000000:01:00.0",),
        serial_prefix="132352312",
        persistence=0,
    )
    nvidia_driver(m, "570.124.06", 12080, devices)
    toolkit_lib = cuda_toolkit(m, CUDA_12_8)
    system_cudnn(m, "9.10.2.21")
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    build_tools(m)
    prefix = "/srv/train/.venv"
    site = venv(m, prefix)
    install_torch(m, site, TORCH_2_8_0_CPU)
    pip_build_tools(m, prefix, site)


def plan_nvcc_11_8(m: FakeMachine) -> None:
    """An A100 cluster node: torch 2.5.1+cu121 in a venv, but the default toolkit is CUDA 11.8."""
    slug = "plan-nvcc-11-8"
    host(
        m,
        hostname="a100-node-14",
        kernel="5.15.0-119-generic",
        cpus=128,
        mem_kib=1056519388,
        os_release='PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\n',
        glibc="2.35",
    )
    devices = gpus(
        slug,
        "NVIDIA A100-SXM4-80GB",
        (8, 0),
        81920,
        HGX_BUS_IDS[:4],
        serial_prefix="132082300",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "535.183.06", 12020, devices)
    toolkit_lib = cuda_toolkit(m, CUDA_11_8)
    m.env["CUDA_HOME"] = "/usr/local/cuda-11.8"
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    build_tools(m, cxx="c++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0", cmake="3.22.1")
    prefix = "/home/bob/llm/.venv"
    site = venv(m, prefix)
    install_torch(m, site, TORCH_2_5_1_CU121)
    cudnn_wheel_headers(m, site)
    pip_build_tools(m, prefix, site)


def plan_no_nvcc(m: FakeMachine) -> None:
    """A cloud VM with one A10G and no CUDA toolkit: torch 2.7.0+cu128 and its pip wheels only."""
    slug = "plan-no-nvcc"
    host(m, hostname="ip-172-31-7-20", kernel="6.8.0-1021-aws", cpus=32, mem_kib=131559868)
    devices = gpus(
        slug,
        "NVIDIA A10G",
        (8, 6),
        23028,
        ("00000000:00:1E.0",),
        serial_prefix="132232204",
        persistence=0,
    )
    nvidia_driver(m, "570.133.20", 12080, devices)
    ldconfig(m)
    build_tools(m, cmake=None)
    prefix = "/home/ubuntu/.venv"
    site = venv(m, prefix)
    install_torch(m, site, TORCH_2_7_0_CU128)
    cudnn_wheel_headers(m, site)
    pip_build_tools(m, prefix, site)


def plan_8gb_ram(m: FakeMachine) -> None:
    """A desktop with an RTX 3060, 8 CPUs and 8 GiB of RAM: torch 2.7.0+cu128, g++, no toolkit."""
    slug = "plan-8gb-ram"
    host(m, hostname="bob-desktop", kernel="6.8.0-49-generic", cpus=8, mem_kib=8033844)
    devices = gpus(
        slug,
        "NVIDIA GeForce RTX 3060",
        (8, 6),
        12288,
        ("00000000:01:00.0",),
        serial_prefix=None,
        persistence=0,
    )
    nvidia_driver(m, "570.133.07", 12080, devices)
    ldconfig(m)
    build_tools(m)
    prefix = "/home/bob/.venvs/te"
    site = venv(m, prefix)
    install_torch(m, site, TORCH_2_7_0_CU128)
    cudnn_wheel_headers(m, site)
    pip_build_tools(m, prefix, site)


def plan_old_driver_cu13(m: FakeMachine) -> None:
    """An H100 node on driver 550 (CUDA 12.4) with a CUDA 12.4 toolkit and build tools, no torch.

    cuDNN 9.13 comes from NVIDIA's apt repository; the venv has only the build tools.
    """
    slug = "plan-old-driver-cu13"
    host(m, hostname="gpu-node-31", kernel="5.15.0-126-generic", cpus=96, mem_kib=1056519388)
    devices = gpus(
        slug,
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        81559,
        HGX_BUS_IDS[:4],
        serial_prefix="165242309",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "550.54.15", 12040, devices)
    toolkit_lib = cuda_toolkit(m, CUDA_12_4)
    system_cudnn(m, "9.13.0.50")
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    build_tools(m)
    prefix = "/home/alice/new-env"
    site = venv(m, prefix)
    for name, version in (("pip", "24.0"), ("setuptools", "80.9.0"), ("packaging", "25.0")):
        m.add_dist(name, version, site=site)
    pip_build_tools(m, prefix, site)


def plan_no_gpu(m: FakeMachine) -> None:
    """A CI build host without any NVIDIA driver or GPU: torch 2.7.0+cu128 from pip, g++."""
    host(m, hostname="ci-runner-12", kernel="6.8.0-49-generic", cpus=32, mem_kib=131559868)
    ldconfig(m)
    build_tools(m)
    prefix = "/builds/venv"
    site = venv(m, prefix)
    install_torch(m, site, TORCH_2_7_0_CU128)
    cudnn_wheel_headers(m, site)
    pip_build_tools(m, prefix, site)


# --------------------------------------------------------------------------------------------
# Machines for the loader model (issue 12 item 3) and CUDA forward compatibility (FR1)


def hgx_h100(m: FakeMachine, slug: str, hostname: str, serial_prefix: str, driver: str) -> None:
    """An HGX H100 node on Ubuntu 24.04 with the given driver (its CUDA from the branch table)."""
    host(m, hostname=hostname, kernel="6.8.0-49-generic", cpus=224, mem_kib=2113389556)
    devices = gpus(
        slug,
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        81559,
        HGX_BUS_IDS,
        serial_prefix=serial_prefix,
        mig=MIG_DISABLED,
    )
    cuda = {"535": 12020, "570": 12080, "580": 13000}[driver.split(".")[0]]
    nvidia_driver(m, driver, cuda, devices)


def toolkit_and_venv(
    m: FakeMachine, toolkit: Toolkit, prefix: str, torch: TorchBuild, *, cudnn: str = ""
) -> str:
    """A default CUDA toolkit in the loader cache (with a cuDNN copied in, when given) and a
    venv with ``torch``; returns the venv's site-packages."""
    toolkit_lib = cuda_toolkit(m, toolkit)
    if cudnn:
        cudnn_in_toolkit(m, toolkit_lib, cudnn)
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    site = venv(m, prefix)
    install_torch(m, site, torch)
    return site


def cudnn_in_toolkit(m: FakeMachine, toolkit_lib: str, version: str) -> None:
    """A cuDNN tarball copied into the CUDA toolkit (the old install guide's `cp cudnn*/lib/*`)."""
    for part in CUDNN_LIBRARIES[9]:
        m.write(f"{toolkit_lib}/libcudnn{part}.so.{version}")
        m.link(f"{toolkit_lib}/libcudnn{part}.so.9", f"libcudnn{part}.so.{version}")


TORCH_2_8_0_CU128_CUDNN_9_13 = dataclasses.replace(
    TORCH_2_8_0_CU128,
    wheels=tuple(
        (name, "9.13.0.50" if name == "nvidia-cudnn-cu12" else version)
        for name, version in TORCH_2_8_0_CU128.wheels
    ),
)


def te_2_20_stale_toolkit_cudnn(m: FakeMachine) -> None:
    """H100, torch 2.8.0+cu128 with pip cuDNN 9.13, TE 2.20.2, and cuDNN 9.1 in /usr/local/cuda.

    TE 2.20 searches /usr/local/cuda before the pip wheel: its import opens cuDNN 9.1 while
    torch links 9.13, and TE's own version check (cuDNN >= 9.12) sees 9.1.
    """
    _te_2_20_next_to_toolkit_cudnn(m, "te-2-20-stale-toolkit-cudnn", "dgx-h100-41", "165242311")


def te_2_20_cudnn_home_on_pip(m: FakeMachine) -> None:
    """The same software after the fix TED308 gives: CUDNN_HOME names torch's pip cuDNN."""
    _te_2_20_next_to_toolkit_cudnn(m, "te-2-20-cudnn-home-on-pip", "dgx-h100-42", "165242315")
    m.env["CUDNN_HOME"] = f"/opt/venvs/llm/lib/{PY}/site-packages/nvidia/cudnn"


def _te_2_20_next_to_toolkit_cudnn(m: FakeMachine, slug: str, hostname: str, serial: str) -> None:
    hgx_h100(m, slug, hostname, serial, "570.124.06")
    site = toolkit_and_venv(
        m, CUDA_12_8, "/opt/venvs/llm", TORCH_2_8_0_CU128_CUDNN_9_13, cudnn="9.1.0"
    )
    install_te_wheels(m, site, "2.20.2")


def te_2_14_cu13_core_with_toolkit(m: FakeMachine) -> None:
    """H100 on R580 with torch 2.8.0+cu128, a CUDA 12.8 toolkit, and TE 2.14.1's cu13 core.

    The CUDA 13 cuBLAS and runtime wheels are installed (nvidia/cu13/lib), but TE >= 2.11 finds
    the toolkit's NVRTC and cuRAND, so it does not preload them; nothing else loads CUDA 13.
    """
    slug = "te-2-14-cu13-core-with-toolkit"
    hgx_h100(m, slug, "dgx-h100-43", "165242312", "580.65.06")
    site = toolkit_and_venv(m, CUDA_12_8, "/opt/venvs/llm", TORCH_2_8_0_CU128)
    install_te_wheels(m, site, "2.14.1", cores=(("cu13", ""),), core_links_cuda=13)
    for name, version, files in (
        ("nvidia-cublas", "13.0.2.14", ("libcublas.so.13", "libcublasLt.so.13")),
        ("nvidia-cuda-runtime", "13.0.96", ("libcudart.so.13",)),
    ):
        m.add_dist(name, version, site=site)
        for file in files:
            m.write(f"{site}/nvidia/cu13/lib/{file}")


def te_2_3_pip_cudnn_only(m: FakeMachine) -> None:
    """H100 with torch 2.6.0+cu124 and TE 2.3.0 from pip, without any LD_LIBRARY_PATH.

    TE 2.3's core links every cuDNN sub-library; its import opens only the wheel's
    libcudnn.so.9 and torch loads no sub-library, so `import transformer_engine` fails.
    """
    hgx_h100(m, "te-2-3-pip-cudnn-only", "dgx-h100-44", "165242313", "570.124.06")
    site = toolkit_and_venv(m, CUDA_12_4, "/opt/venvs/train", TORCH_2_6_0_CU124)
    install_te_wheels(m, site, "2.3.0")


def te_1_13_no_system_nvrtc(m: FakeMachine) -> None:
    """A100 cloud VM, torch 2.4.0+cu121 and TE 1.13.0 from pip, no CUDA toolkit.

    TE 1.9-2.3 look for NVRTC in the toolkit and `ldconfig -p` only: the pip NVRTC is not
    enough, and the import fails in `ldconfig -p | grep 'libnvrtc'`.
    """
    slug = "te-1-13-no-system-nvrtc"
    host(m, hostname="a100-vm-3", kernel="6.8.0-1015-gcp", cpus=96, mem_kib=1056467012)
    devices = gpus(
        slug,
        "NVIDIA A100-SXM4-40GB",
        (8, 0),
        40960,
        HGX_BUS_IDS[:2],
        serial_prefix="132462107",
        mig=MIG_DISABLED,
    )
    nvidia_driver(m, "535.183.06", 12020, devices)
    ldconfig(m)
    site = venv(m, "/home/bob/venvs/te")
    install_torch(m, site, TORCH_2_4_0_CU121)
    install_te_wheels(m, site, "1.13.0")


CUDA_13_0 = Toolkit("13.0.1", "13.0.96", "13.0.2.14", "13.0.88", "13.0.88", "10.4.0.35")


def ngc_h100_r535_cuda_compat(m: FakeMachine) -> None:
    """An NGC-style CUDA 13.0 container on an H100 host still running driver R535 (CUDA 12.2).

    The image carries cuda-compat (R580's libcuda in /usr/local/cuda/compat/lib, first on
    LD_LIBRARY_PATH), torch and TE built from source against CUDA 13.0, and cuDNN from apt.
    """
    hgx_h100(m, "ngc-h100-r535-cuda-compat", "5b7c9e2d1f3a", "165242314", "535.161.08")
    m.system = dataclasses.replace(m.system, user="root")
    m.write("/.dockerenv")
    toolkit_lib = cuda_toolkit(m, CUDA_13_0)
    compat = "/usr/local/cuda-13.0/compat/lib.real"
    m.write(f"{compat}/libcuda.so.580.82.07")
    m.link(f"{compat}/libcuda.so.1", "libcuda.so.580.82.07")
    m.link("/usr/local/cuda-13.0/compat/lib", "lib.real")
    apt_cudnn_and_nccl(m, "9.13.0", "2.27.7")
    ldconfig(m, (UBUNTU_LDCACHE_DIR, toolkit_lib))
    site = system_python(m)
    torch = TorchBuild(
        "2.9.0a0+50eac811a6",
        "13.0",
        "50eac811a68e63e96ad56c11c983bfe298a0bb8a",
        (),
        cubins=(75, 80, 86, 90, 100, 120),
        ptx=(120,),
    )
    install_torch(m, site, torch, direct_url={"url": "file:///opt/pytorch/pytorch", "dir_info": {}})
    install_te_source(
        m,
        site,
        "2.9.0+70f5366",
        {"url": "file:///opt/transformerengine", "dir_info": {}},
        cubins=(75, 80, 89, 90, 100, 120),
        cuda_major=13,
    )
    m.env.update(
        {
            "NVIDIA_PYTORCH_VERSION": "25.10",
            "CUDA_HOME": "/usr/local/cuda",
            "LD_LIBRARY_PATH": "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib:"
            "/usr/local/nvidia/lib64",
            "NVIDIA_VISIBLE_DEVICES": "all",
        }
    )


#: Machines recorded twice, once more with a smoke test: they share their GPUs (and UUIDs).
SAME_MACHINE_WITH_SMOKE = {
    "h100-smoke-verified": "h100-cuda12-te-ok",
    "h100-fp8-gemm-fails": "h100-cuda12-te-ok",
    "no-gpu-laptop-smoke": "no-gpu-laptop",
}

MACHINES: dict[str, Callable[[FakeMachine], None]] = {
    "h100-cuda12-te-ok": h100_cuda12_te_ok,
    "a100": a100,
    "l40s-ada": l40s_ada,
    "rtx-4090": rtx_4090,
    "b200": b200,
    "v100": v100,
    "t4": t4,
    "no-gpu-laptop": no_gpu_laptop,
    "h100-mig": h100_mig,
    "driver-older-than-torch-cuda": driver_older_than_torch_cuda,
    "two-te-variants": two_te_variants,
    "ngc-container": ngc_container,
    "wedged-driver": wedged_driver,
    "h100-smoke-verified": h100_smoke_verified,
    "h100-fp8-gemm-fails": h100_fp8_gemm_fails,
    "l40s-no-te": l40s_no_te,
    "no-gpu-laptop-smoke": no_gpu_laptop_smoke,
    "plan-h100-fresh": plan_h100_fresh,
    "plan-cpu-torch-on-gpu-box": plan_cpu_torch_on_gpu_box,
    "plan-nvcc-11-8": plan_nvcc_11_8,
    "plan-no-nvcc": plan_no_nvcc,
    "plan-8gb-ram": plan_8gb_ram,
    "plan-old-driver-cu13": plan_old_driver_cu13,
    "plan-no-gpu": plan_no_gpu,
    "te-2-20-stale-toolkit-cudnn": te_2_20_stale_toolkit_cudnn,
    "te-2-20-cudnn-home-on-pip": te_2_20_cudnn_home_on_pip,
    "te-2-14-cu13-core-with-toolkit": te_2_14_cu13_core_with_toolkit,
    "te-2-3-pip-cudnn-only": te_2_3_pip_cudnn_only,
    "te-1-13-no-system-nvrtc": te_1_13_no_system_nvrtc,
    "ngc-h100-r535-cuda-compat": ngc_h100_r535_cuda_compat,
}


# --------------------------------------------------------------------------------------------
# Recording fixtures


def fixture_path(slug: str) -> Path:
    """Where the recorded snapshot of ``slug`` lives."""
    return FIXTURE_DIR / f"{slug}.json"


def record(slug: str, root: Path) -> str:
    """The normalised snapshot JSON of machine ``slug``, laid out under the empty dir ``root``."""
    machine = FakeMachine(root)
    MACHINES[slug](machine)
    context = machine.context()
    smoke = None
    if machine.smoke is not None:
        smoke = from_child(
            machine.smoke,
            returncode=0,
            stderr="",
            python=context.python.executable,
            duration_ms=850.0,
            timeout_s=30.0,
        )
    snapshot = collect_snapshot(context, smoke=smoke)
    snapshot = dataclasses.replace(
        snapshot,
        meta=dataclasses.replace(
            snapshot.meta, created_at=FIXED_CREATED_AT, te_doctor_version=FIXED_TE_DOCTOR_VERSION
        ),
        probes=tuple(dataclasses.replace(p, duration_ms=0.0) for p in snapshot.probes),
    )
    text = dumps(snapshot)
    for local in {str(root), str(root.resolve())}:
        if local in text:
            raise AssertionError(f"{slug}: the snapshot leaks the fake machine's root {local}")
    return text


def render(slug: str) -> str:
    """``record`` in a fresh temporary directory."""
    with tempfile.TemporaryDirectory(prefix=f"te-doctor-{slug}-") as tmp:
        return record(slug, Path(tmp))


def write_fixtures(slugs: Sequence[str] = ()) -> list[Path]:
    """Rewrite the fixture files of ``slugs`` (all machines when empty); returns their paths."""
    unknown = sorted(set(slugs) - set(MACHINES))
    if unknown:
        raise SystemExit(f"unknown machine(s): {', '.join(unknown)}; known: {', '.join(MACHINES)}")
    FIXTURE_DIR.mkdir(exist_ok=True)
    written = []
    for slug in slugs or list(MACHINES):
        path = fixture_path(slug)
        path.write_text(render(slug), encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str]) -> int:
    """``python -m tests.machines [SLUG...]``: regenerate the recorded fixtures."""
    for path in write_fixtures(argv):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
