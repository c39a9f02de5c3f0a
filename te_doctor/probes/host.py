"""Host probe: OS, kernel, architecture, Python, glibc, resources and container hints."""

from __future__ import annotations

import re
from collections.abc import Mapping

from te_doctor.probes.context import ProbeContext
from te_doctor.snapshot.facts import Fact, Version
from te_doctor.snapshot.model import HostFacts

SOURCE = "host"


def probe_host(ctx: ProbeContext) -> HostFacts:
    """Collect host facts; each one that cannot be read is unknown with the reason."""
    env = ctx.env
    py = ctx.python
    return HostFacts(
        os_name=_os_name(ctx),
        kernel=_nonempty(ctx.system.kernel, "uname"),
        arch=_nonempty(ctx.system.machine, "uname"),
        python_version=Fact.of(Version(py.version), f"{SOURCE}:interpreter"),
        python_implementation=Fact.of(py.implementation, f"{SOURCE}:interpreter"),
        python_executable=Fact.of(py.executable, f"{SOURCE}:interpreter"),
        python_chosen_by=(
            Fact.of(py.chosen_by, f"{SOURCE}:target")
            if py.chosen_by
            else Fact.unknown("the caller did not say why it diagnoses this interpreter", SOURCE)
        ),
        glibc_version=_glibc(ctx),
        cpu_count=_cpu_count(ctx),
        memory_total_mib=_memory_mib(ctx),
        hostname=_nonempty(ctx.system.hostname, "gethostname"),
        user=_nonempty(ctx.system.user, "getpass"),
        container=_container(ctx),
        ngc_pytorch_version=_env_fact(
            env, "NVIDIA_PYTORCH_VERSION", "not an NGC PyTorch container"
        ),
        kubernetes=Fact.of(
            "KUBERNETES_SERVICE_HOST" in env, f"{SOURCE}:env KUBERNETES_SERVICE_HOST"
        ),
        slurm_job_id=_env_fact(env, "SLURM_JOB_ID", "not inside a Slurm job"),
        wsl=_wsl(ctx),
        virtualenv=_virtualenv(ctx),
        conda_env=_conda(ctx),
    )


def _nonempty(value: str, method: str) -> Fact[str]:
    source = f"{SOURCE}:{method}"
    return Fact.of(value, source) if value else Fact.unknown(f"{method} returned nothing", source)


def _env_fact(env: Mapping[str, str], name: str, absent_reason: str) -> Fact[str]:
    value = env.get(name, "")
    source = f"{SOURCE}:env {name}"
    return (
        Fact.of(value, source) if value else Fact.absent(f"{absent_reason} ({name} unset)", source)
    )


def _os_name(ctx: ProbeContext) -> Fact[str]:
    source = f"{SOURCE}:/etc/os-release"
    try:
        text = ctx.read_text("/etc/os-release")
    except OSError as exc:
        return Fact.unknown(f"cannot read /etc/os-release: {exc.strerror or exc}", source)
    fields = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', text, re.MULTILINE))
    name = fields.get("PRETTY_NAME") or " ".join(
        part for part in (fields.get("NAME"), fields.get("VERSION_ID")) if part
    )
    return Fact.of(name, source) if name else Fact.unknown("no PRETTY_NAME or NAME field", source)


def _glibc(ctx: ProbeContext) -> Fact[Version]:
    name, version = ctx.system.libc
    source = f"{SOURCE}:libc_ver"
    if name == "glibc" and version:
        return Fact.of(Version(version), source)
    if name:
        return Fact.absent(f"the C library is {name}, not glibc", source)
    return Fact.unknown("the C library could not be identified", source)


def _cpu_count(ctx: ProbeContext) -> Fact[int]:
    count = ctx.system.cpu_count
    source = f"{SOURCE}:cpu_count"
    return (
        Fact.of(count, source) if count > 0 else Fact.unknown("os.cpu_count() gave nothing", source)
    )


def _memory_mib(ctx: ProbeContext) -> Fact[int]:
    source = f"{SOURCE}:/proc/meminfo"
    try:
        text = ctx.read_text("/proc/meminfo")
    except OSError as exc:
        return Fact.unknown(f"cannot read /proc/meminfo: {exc.strerror or exc}", source)
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    if not match:
        return Fact.unknown("/proc/meminfo has no MemTotal line", source)
    return Fact.of(int(match.group(1)) // 1024, source)


def _container(ctx: ProbeContext) -> Fact[str]:
    source = f"{SOURCE}:container"
    if ctx.exists("/.dockerenv"):
        return Fact.of("docker", f"{source} /.dockerenv")
    if ctx.exists("/run/.containerenv"):
        return Fact.of("podman", f"{source} /run/.containerenv")
    if ctx.env.get("container"):
        return Fact.of(ctx.env["container"], f"{source} env container")
    try:
        cgroup = ctx.read_text("/proc/1/cgroup")
    except OSError:
        cgroup = ""
    for marker in ("docker", "kubepods", "containerd", "lxc"):
        if marker in cgroup:
            return Fact.of(marker, f"{source} /proc/1/cgroup")
    return Fact.absent(
        "no /.dockerenv, /run/.containerenv, container variable or container cgroup", source
    )


def _wsl(ctx: ProbeContext) -> Fact[bool]:
    source = f"{SOURCE}:/proc/version"
    if ctx.env.get("WSL_DISTRO_NAME"):
        return Fact.of(True, f"{SOURCE}:env WSL_DISTRO_NAME")
    try:
        text = ctx.read_text("/proc/version")
    except OSError as exc:
        return Fact.unknown(f"cannot read /proc/version: {exc.strerror or exc}", source)
    return Fact.of("microsoft" in text.lower(), source)


def _virtualenv(ctx: ProbeContext) -> Fact[str]:
    py = ctx.python
    source = f"{SOURCE}:sys.prefix"
    if py.prefix != py.base_prefix:
        return Fact.of(py.prefix, source)
    if ctx.env.get("VIRTUAL_ENV"):
        return Fact.of(ctx.env["VIRTUAL_ENV"], f"{SOURCE}:env VIRTUAL_ENV")
    return Fact.absent("sys.prefix equals sys.base_prefix: not a virtual environment", source)


def _conda(ctx: ProbeContext) -> Fact[str]:
    source = f"{SOURCE}:conda"
    if ctx.exists(ctx.python.prefix.rstrip("/") + "/conda-meta"):
        name = ctx.env.get("CONDA_DEFAULT_ENV") or ctx.python.prefix
        return Fact.of(name, f"{source} conda-meta in sys.prefix")
    if ctx.env.get("CONDA_PREFIX"):
        return Fact.of(ctx.env["CONDA_PREFIX"], f"{source} env CONDA_PREFIX")
    return Fact.absent("no conda-meta in sys.prefix and CONDA_PREFIX unset", source)
