"""The ``ProbeContext`` of the machine te-doctor is running on."""

from __future__ import annotations

import getpass
import os
import platform
import socket
import sys
from pathlib import Path
from typing import Any

from te_doctor.probes.context import InterpreterInfo, ProbeContext, SystemInfo, run_command
from te_doctor.probes.distributions import scan_distributions


def real_context() -> ProbeContext:  # pragma: no cover - exercised by the end-to-end tests
    """A context reading this machine and the running interpreter."""
    python = InterpreterInfo(
        executable=sys.executable,
        version=platform.python_version(),
        implementation=platform.python_implementation(),
        prefix=sys.prefix,
        base_prefix=sys.base_prefix,
        sys_path=tuple(sys.path),
    )
    root = Path("/")
    return ProbeContext(
        run=run_command,
        env=dict(os.environ),
        root=root,
        system=_system_info(),
        python=python,
        distributions=lambda: scan_distributions(root, python.sys_path),
        load_nvml=_load_nvml,
    )


def _system_info() -> SystemInfo:
    uname = os.uname()
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry in some containers
        user = ""
    libc_name, libc_version = platform.libc_ver()
    return SystemInfo(
        hostname=socket.gethostname(),
        user=user,
        kernel=uname.release,
        machine=uname.machine,
        cpu_count=os.cpu_count() or 0,
        libc=(libc_name, libc_version),
    )


def _load_nvml() -> Any:
    import pynvml  # nvidia-ml-py; imported only when the NVIDIA probe runs

    return pynvml
