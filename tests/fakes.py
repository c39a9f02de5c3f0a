"""Fakes for the probe seam: a fake machine (files under a temp root), commands, NVML.

The NVML fake raises nvidia-ml-py's own exception classes, so the probe code meets exactly
what the real bindings would give it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pynvml

from te_doctor.probes.commands import NOT_FOUND, CommandResult
from te_doctor.probes.context import InterpreterInfo, ProbeContext, SystemInfo
from te_doctor.probes.distributions import scan_distributions

SITE = "/usr/lib/python3/site-packages"


@dataclass
class FakeGpu:
    """One GPU as the fake NVML reports it. ``None`` means NOT_SUPPORTED for that query."""

    name: str
    cc: tuple[int, int]
    memory_mib: int = 81559
    uuid: str = "GPU-5d2b1c3e-8f0a-4b6c-9d7e-112233445566"
    mig: tuple[int, int] | None = None
    persistence: int = 1
    bus_id: str = "00000000:18:00.0"
    serial: str | None = "1654922001234"


@dataclass
class FakeNvml:
    """A stand-in for the ``pynvml`` module with the calls the NVIDIA probe makes."""

    driver: str = "550.54.15"
    cuda: int = 12040
    gpus: list[FakeGpu] = field(default_factory=list)
    init_error: int | None = None
    hang_s: float = 0.0

    NVMLError = pynvml.NVMLError
    NVML_ERROR_NOT_SUPPORTED = pynvml.NVML_ERROR_NOT_SUPPORTED
    NVML_ERROR_LIBRARY_NOT_FOUND = pynvml.NVML_ERROR_LIBRARY_NOT_FOUND
    NVML_ERROR_DRIVER_NOT_LOADED = pynvml.NVML_ERROR_DRIVER_NOT_LOADED
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH
    NVML_ERROR_NO_PERMISSION = pynvml.NVML_ERROR_NO_PERMISSION

    def nvmlInit(self) -> None:  # noqa: N802 - mirrors pynvml
        if self.hang_s:
            time.sleep(self.hang_s)
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)

    def nvmlShutdown(self) -> None:  # noqa: N802
        return None

    def nvmlSystemGetDriverVersion(self) -> str:  # noqa: N802
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:  # noqa: N802
        return self.cuda

    def nvmlDeviceGetCount(self) -> int:  # noqa: N802
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:  # noqa: N802
        return self.gpus[index]

    def nvmlDeviceGetName(self, gpu: FakeGpu) -> str:  # noqa: N802
        return gpu.name

    def nvmlDeviceGetUUID(self, gpu: FakeGpu) -> str:  # noqa: N802
        return gpu.uuid

    def nvmlDeviceGetCudaComputeCapability(self, gpu: FakeGpu) -> tuple[int, int]:  # noqa: N802
        return gpu.cc

    def nvmlDeviceGetMemoryInfo(self, gpu: FakeGpu) -> Any:  # noqa: N802
        return type("Memory", (), {"total": gpu.memory_mib * 2**20})()

    def nvmlDeviceGetMigMode(self, gpu: FakeGpu) -> tuple[int, int]:  # noqa: N802
        if gpu.mig is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu.mig

    def nvmlDeviceGetPersistenceMode(self, gpu: FakeGpu) -> int:  # noqa: N802
        return gpu.persistence

    def nvmlDeviceGetPciInfo(self, gpu: FakeGpu) -> Any:  # noqa: N802
        return type("Pci", (), {"busId": gpu.bus_id})()

    def nvmlDeviceGetSerial(self, gpu: FakeGpu) -> str:  # noqa: N802
        if gpu.serial is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu.serial


def no_driver_nvml() -> FakeNvml:
    """NVML as it behaves on a machine without the NVIDIA driver."""
    return FakeNvml(init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)


CommandReply = CommandResult | Callable[[Sequence[str]], CommandResult]


class FakeRunner:
    """Replies keyed by the command's base name; anything else is 'not found' (127)."""

    def __init__(self, replies: Mapping[str, CommandReply] | None = None) -> None:
        self.replies = dict(replies or {})
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str], *, timeout: float) -> CommandResult:
        self.calls.append(tuple(argv))
        reply = self.replies.get(argv[0].rsplit("/", 1)[-1])
        if reply is None:
            return CommandResult(tuple(argv), NOT_FOUND, "", "not found")
        return reply(argv) if callable(reply) else reply


def ok(stdout: str, argv: Sequence[str] = ("cmd",)) -> CommandResult:
    """A command that printed ``stdout`` and exited 0."""
    return CommandResult(tuple(argv), 0, stdout, "")


class FakeMachine:
    """A machine laid out under a temp directory; ``context()`` gives a probe context for it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env: dict[str, str] = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
        self.runner = FakeRunner()
        self.nvml: Any = no_driver_nvml()
        self.sys_path: list[str] = [SITE]
        #: What the smoke child would write on this machine (None: the smoke test is not run).
        self.smoke: dict[str, Any] | None = None
        self.prefix = "/usr"
        #: Why the probed interpreter is the diagnosed one (``te_doctor.probes.target``).
        self.chosen_by = "te-doctor's own interpreter (no other environment is active)"
        self.system = SystemInfo(
            hostname="gpu-node-07",
            user="alice",
            kernel="5.15.0-105-generic",
            machine="x86_64",
            cpu_count=32,
            libc=("glibc", "2.35"),
        )
        self.write("/etc/os-release", 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\n')
        self.write("/proc/meminfo", "MemTotal:       263862604 kB\n")
        self.write("/proc/version", "Linux version 5.15.0-105-generic (buildd@lcy02)\n")

    def write(self, path: str, content: str | bytes = "") -> Path:
        """Create a file (and its parents) at a machine path."""
        target = self.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    def executable(self, path: str, script: str = "#!/bin/sh\n") -> None:
        """Create an executable file at a machine path."""
        self.write(path, script).chmod(0o755)

    def link(self, path: str, target: str) -> None:
        """A relative symlink ``path -> target`` (target relative to the link's directory)."""
        link = self.root / path.lstrip("/")
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)

    def add_dist(
        self,
        name: str,
        version: str,
        *,
        site: str = SITE,
        installer: str = "pip",
        direct_url: dict[str, Any] | None = None,
        metadata: str | None = None,
    ) -> None:
        """Install a distribution's metadata (``metadata`` overrides METADATA's whole text)."""
        folder = f"{site}/{name.replace('-', '_')}-{version}.dist-info"
        text = (
            metadata
            if metadata is not None
            else f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n"
        )
        self.write(f"{folder}/METADATA", text)
        if installer:
            self.write(f"{folder}/INSTALLER", installer + "\n")
        if direct_url is not None:
            self.write(f"{folder}/direct_url.json", json.dumps(direct_url))

    def context(self) -> ProbeContext:
        """The probe context reading this fake machine."""
        root = self.root
        python = InterpreterInfo(
            executable=f"{self.prefix}/bin/python3",
            version="3.12.3",
            implementation="CPython",
            prefix=self.prefix,
            base_prefix="/usr",
            sys_path=tuple(self.sys_path),
            chosen_by=self.chosen_by,
        )
        nvml = self.nvml

        def load_nvml() -> Any:
            if isinstance(nvml, Exception):
                raise nvml
            return nvml

        return ProbeContext(
            run=self.runner,
            env=dict(self.env),
            root=root,
            system=self.system,
            python=python,
            distributions=lambda: scan_distributions(root, python.sys_path),
            load_nvml=load_nvml,
        )
