"""The machinery of the fault matrix (tests/test_faults.py): a scratch machine, stand-ins, runs.

Every fault runs te-doctor for real (``python -m te_doctor``) in a process of its own, against
fake binaries first on ``PATH`` (nvidia-smi, srun, scancel), a stand-in for nvidia-ml-py on
``PYTHONPATH`` (``tests/data/faults/nvml``), stand-in interpreters (shell scripts) and temporary
virtual environments holding stand-in torch and TE packages. A run that outlives its limit is
killed and reported as hung, so a hang fails its test and never blocks CI.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NVML_STAND_IN = Path(__file__).parent / "data" / "faults" / "nvml"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: A stand-in torch for the smoke child: imports, reports a CPU-only build, no CUDA.
CPU_TORCH = """
__version__ = "2.7.0+cpu"
class version:
    cuda = None
    hip = None
class cuda:
    @staticmethod
    def is_available():
        return False
class backends:
    class cudnn:
        @staticmethod
        def version():
            return None
"""


@dataclass
class Run:
    """How one te-doctor run ended (``returncode`` None: it hung and was killed)."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    notes: dict[str, Any] = field(default_factory=dict)

    def report(self) -> dict[str, Any]:
        """The JSON document the run printed."""
        data: dict[str, Any] = json.loads(self.stdout)
        return data

    def fired(self) -> dict[str, dict[str, Any]]:
        """The fired findings of the JSON check report, by rule id."""
        return {f["rule_id"]: f for f in self.report()["findings"] if f["outcome"] == "fired"}

    def describe(self) -> str:
        """Everything about the run, for an assertion message."""
        return (
            f"{' '.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f} s\n"
            f"--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"
        )


class Machine:
    """A scratch directory every user can enter (some faults run te-doctor as nobody)."""

    def __init__(self, name: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=f"te-doctor-fault-{name}-"))
        self.root.chmod(0o755)
        self.bin = self.root / "bin"
        self.bin.mkdir()
        self.env: dict[str, str] = {
            "PATH": f"{self.bin}:{SYSTEM_PATH}",
            "PYTHONPATH": str(NVML_STAND_IN),
            "TE_DOCTOR_TEST_NVML": "missing",
            "HOME": str(self.root),
            "XDG_CACHE_HOME": str(self.root / "cache"),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
        }

    def nvml(self, scenario: str) -> dict[str, str]:
        """The environment for a stand-in NVML ``scenario`` that needs a driver: te-doctor only
        imports the bindings once ``libnvidia-ml.so.1`` loads, so an empty one is built here
        and put on the loader path (the stand-in replaces every call the probe makes)."""
        folder = self.root / "driver-lib"
        folder.mkdir(exist_ok=True)
        subprocess.run(
            ["cc", "-shared", "-x", "c", "/dev/null", "-o", str(folder / "libnvidia-ml.so.1")],
            check=True,
            capture_output=True,
            timeout=60,
        )
        return {"TE_DOCTOR_TEST_NVML": scenario, "LD_LIBRARY_PATH": str(folder)}

    def path(self, relative: str) -> Path:
        """A path inside the machine's directory."""
        return self.root / relative

    def tool(self, name: str, script: str, where: Path | None = None) -> Path:
        """An executable shell script ``name`` (on PATH unless ``where`` says otherwise)."""
        target = (where or self.bin) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("#!/bin/sh\n" + script, encoding="utf-8")
        target.chmod(0o755)
        return target

    def venv(self, name: str | bytes = "venv") -> Path:
        """A fresh virtual environment (no pip) named ``name`` (bytes: any, even non-UTF-8, as
        ``venv`` cannot create those itself: it is made, then renamed); its interpreter."""
        made = self.root / f"made-{len(list(self.root.glob('made-*')))}"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(made)],
            check=True,
            capture_output=True,
            timeout=120,
        )
        folder = os.path.join(os.fsencode(self.root), os.fsencode(name))
        os.rename(made, folder)
        return Path(os.fsdecode(folder)) / "bin" / "python"

    @staticmethod
    def site_packages(python: Path) -> Path:
        """The venv's site-packages directory."""
        lib = python.parent.parent / "lib"
        return next(lib.glob("python3*/site-packages"))

    @staticmethod
    def install(
        site: Path,
        name: str,
        version: str,
        modules: Mapping[str, str] | None = None,
        metadata: str | bytes | None = "",
    ) -> Path:
        """A distribution in ``site``: its metadata (``metadata`` replaces METADATA's text;
        None leaves the file out) and its modules (relative path -> source)."""
        dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
        dist.mkdir(parents=True)
        (dist / "RECORD").write_text("", encoding="utf-8")
        text = metadata or f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        if metadata is not None:
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            (dist / "METADATA").write_bytes(data)
        for module, source in (modules or {}).items():
            target = site / module
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(source, encoding="utf-8")
        return dist

    def cleanup(self) -> None:
        """Remove the directory, made writable first (some faults make parts unreadable)."""
        for folder, dirs, _files in os.walk(self.root):
            for name in dirs:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    os.chmod(path, 0o755)
        shutil.rmtree(self.root, ignore_errors=True)


#: Runs a command as root without the capabilities that bypass file permissions: a file's mode
#: then applies to it as to any user, while root's own files (a venv under /root) stay usable.
DROP_FILE_CAPABILITIES = (
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-all",
    "--",
)


def unprivileged() -> tuple[str, ...]:
    """A command prefix under which file permissions apply (empty unless running as root)."""
    return DROP_FILE_CAPABILITIES if os.geteuid() == 0 else ()


def torch_here() -> str:
    """Why a fault that expects the CPU path cannot run here ("" when it can): that path needs
    torch. Where ``TE_DOCTOR_REQUIRE_TORCH=1`` it runs, and fails without torch."""
    if os.environ.get("TE_DOCTOR_REQUIRE_TORCH") == "1" or importlib.util.find_spec("torch"):
        return ""
    return f"torch is not installed for Python {sys.version_info.major}.{sys.version_info.minor}"


def permissions_apply() -> str:
    """Why file permissions cannot be made to apply here ("" when they can)."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "running as root without setpriv (util-linux) to drop CAP_DAC_OVERRIDE"
    return ""


def signal_another_thread(pid: int, number: int) -> None:
    """Send signal ``number`` to a thread of process ``pid`` other than its main one, as Linux
    may do with any signal sent to a process (when its main thread already has one pending)."""
    threads = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
    assert threads, f"process {pid} runs no thread besides its main one"
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.tgkill(pid, threads[0], number) != 0:
        raise OSError(ctypes.get_errno(), f"tgkill({pid}, {threads[0]}, {number})")


#: A ``prefix`` that runs the command with SIGINT at its default action. A test run started in
#: the background (``pytest ... &``) ignores SIGINT, its children inherit that, and Python then
#: installs no Ctrl-C handler: an interrupt test would test nothing.
SIGINT_DEFAULT = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
)


def te_doctor(machine: Machine, *args: str, limit_s: float, **options: Any) -> Run:
    """Run ``python -m te_doctor ARGS`` on ``machine`` (options as for ``python``)."""
    return python(machine, "-m", "te_doctor", *args, limit_s=limit_s, **options)


def python(
    machine: Machine,
    *args: str,
    limit_s: float,
    env: Mapping[str, str] | None = None,
    prefix: Sequence[str] = (),
    during: Callable[[subprocess.Popen[str]], None] | None = None,
) -> Run:
    """Run this Python with ``args`` on ``machine``; killed (and reported hung) at ``limit_s``.

    ``during`` gets the running process (to signal it); ``prefix`` wraps the command (unshare).
    """
    argv = (*prefix, sys.executable, *args)
    environment = {**machine.env, **(env or {})}
    started = time.monotonic()
    proc = subprocess.Popen(  # in a session of its own: a hang is killed with all it started
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        env=environment,
        cwd=machine.root,
        start_new_session=True,
    )
    try:
        if during is not None:
            during(proc)
        out, err = proc.communicate(timeout=max(limit_s - (time.monotonic() - started), 0.1))
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    return Run(argv, code, out or "", err or "", time.monotonic() - started)


def wait_for(path: Path, limit_s: float) -> bool:
    """True once ``path`` exists and holds something (polling), False after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text(encoding="utf-8", errors="replace"):
            return True
        time.sleep(0.05)
    return False


def alive(pid: int) -> bool:
    """True while a process with this id exists (and is not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def still_alive(pid: int, grace_s: float = 5.0) -> bool:
    """True when the process has not ended within ``grace_s`` (a killed process takes a moment
    to go, longer on a loaded machine)."""
    deadline = time.monotonic() + grace_s
    while alive(pid):
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)
    return False


def private_mounts() -> str:
    """Why a private mount namespace cannot be made here ("" when it can)."""
    if os.geteuid() != 0:
        return "needs root for a private mount namespace (unshare --mount)"
    try:
        done = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "true"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare is not usable: {exc}"
    return "" if done.returncode == 0 else f"unshare --mount failed: {done.stderr.strip()}"
