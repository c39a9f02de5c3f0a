"""The ``ProbeContext`` of the machine te-doctor is running on.

It diagnoses the interpreter a ``Target`` names (``te_doctor.probes.target``): te-doctor's own,
or another one (the active venv, ``--python PATH``), which one short subprocess asks for its
version and search path; its distributions are then read from disk like any other.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import platform
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

from te_doctor.errors import InterpreterError
from te_doctor.probes.commands import run_command
from te_doctor.probes.context import InterpreterInfo, ProbeContext, SystemInfo
from te_doctor.probes.distributions import scan_distributions
from te_doctor.probes.nvml import NvmlLibraryMissing
from te_doctor.probes.target import NAMED, Target, own_interpreter

INTERPRETER_TIMEOUT_S = 10.0
_ASK_INTERPRETER = (
    "import json, platform, sys; print(json.dumps({'executable': sys.executable, "
    "'version': platform.python_version(), 'implementation': platform.python_implementation(), "
    "'prefix': sys.prefix, 'base_prefix': sys.base_prefix, 'sys_path': sys.path}))"
)


#: Why the Python API (and any caller that names no target) diagnoses its own interpreter.
OWN_PROCESS = "te-doctor's own interpreter (the Python API diagnoses the process that calls it)"


def real_context(target: Target | None = None) -> ProbeContext:
    """A context reading this machine and the target interpreter (by default te-doctor's own)."""
    target = target or own_interpreter(OWN_PROCESS)
    if target.python is None:
        info = this_interpreter(target.why)
    else:  # nvidia-ml-py's module imports while the other interpreter answers
        threading.Thread(target=_warm_nvml, name="te-doctor-nvml-import", daemon=True).start()
        info = other_interpreter(target)
    root = Path("/")
    return ProbeContext(
        run=run_command,
        env=dict(os.environ),
        root=root,
        system=_system_info(),
        python=info,
        distributions=lambda: scan_distributions(root, info.sys_path),
        load_nvml=_load_nvml,
    )


def this_interpreter(chosen_by: str) -> InterpreterInfo:
    """The interpreter te-doctor itself runs in."""
    return InterpreterInfo(
        executable=sys.executable,
        version=platform.python_version(),
        implementation=platform.python_implementation(),
        prefix=sys.prefix,
        base_prefix=sys.base_prefix,
        sys_path=tuple(sys.path),
        chosen_by=chosen_by,
    )


def other_interpreter(target: Target) -> InterpreterInfo:
    """Ask another interpreter for its version and search path; a bad path is a usage error."""
    python = target.python or sys.executable
    named = f"--python {python}" if target.why == NAMED else f"{python} ({target.why})"
    result = run_command([python, "-c", _ASK_INTERPRETER], timeout=INTERPRETER_TIMEOUT_S)
    if not result.ok:
        raise InterpreterError(
            f"{named}: cannot run it: {result.describe()}", result.stderr + result.stdout
        )
    try:
        data: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
        if not str(data["version"]).startswith("3."):
            raise InterpreterError(
                f"{named}: is Python {data['version']}; PyTorch and Transformer "
                "Engine need Python 3 (TE 2.x: 3.10 or newer): point it at a Python 3 interpreter"
            )
        return InterpreterInfo(
            executable=str(data["executable"]),
            version=str(data["version"]),
            implementation=str(data["implementation"]),
            prefix=str(data["prefix"]),
            base_prefix=str(data["base_prefix"]),
            sys_path=tuple(str(p) for p in data["sys_path"]),
            chosen_by=target.why,
        )
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        output = result.stderr + result.stdout
        raise InterpreterError(f"{named}: unexpected answer ({exc})", output) from None


def _system_info() -> SystemInfo:
    uname = os.uname()
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry in some containers
        user = ""
    libc_name, libc_version = platform.libc_ver()
    return SystemInfo(
        hostname=uname.nodename,
        user=user,
        kernel=uname.release,
        machine=uname.machine,
        cpu_count=os.cpu_count() or 0,
        libc=(libc_name, libc_version),
    )


#: What the deprecated ``pynvml`` distribution's import hook says on the first ``import pynvml``
#: (its ``_pynvml_redirector``): another package's warning, not te-doctor's to print. When that
#: distribution is in the diagnosed environment, rule TED426 reports it.
DEPRECATED_PYNVML_WARNING = r"The pynvml (package|_utils module) is deprecated"


#: The library nvidia-ml-py loads on Linux, by the name it uses (its ``_LoadNvmlLibrary``).
NVML_LIBRARY = "libnvidia-ml.so.1"


def _warm_nvml() -> None:
    """Import the NVML bindings ahead of the NVIDIA probe, which reports any failure itself."""
    with contextlib.suppress(ImportError, NvmlLibraryMissing):
        _load_nvml()


def _load_nvml() -> Any:
    """The NVML bindings, once the driver's NVML library loads. Without a driver the bindings
    could only say so, and importing them costs more than the rest of the NVIDIA probe."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(NVML_LIBRARY)
        except OSError as exc:
            raise NvmlLibraryMissing(str(exc)) from None
    return _nvml_bindings()


def _nvml_bindings() -> Any:
    """nvidia-ml-py's ``pynvml`` module, imported only when the NVIDIA probe runs, quietly."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=DEPRECATED_PYNVML_WARNING)
        import pynvml

    return pynvml
