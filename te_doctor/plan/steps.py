"""The concrete side of a plan: environment variables, numbered commands, the container route."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from packaging.version import Version

from te_doctor.engine.flatten import FlatFacts
from te_doctor.plan.data import Releases
from te_doctor.snapshot.model import Snapshot

#: nvcc compiling TE's CUDA kernels peaks at a few GiB per job (analysis; TE's README advises
#: MAX_JOBS=1 when builds run out of memory): one job per 4 GiB of RAM, at most one per CPU.
MIB_PER_BUILD_JOB = 4096


#: Python build tools a ``--no-build-isolation`` install needs in the environment itself:
#: (package fact, pip requirement, version it installs at least, first TE version needing it,
#: frameworks). TE's README (2.18+: nvidia-cudnn-frontend >= 1.25) and the 2.20.2 torch sdist
#: (>= 1.29), te-facts.md §4.4; the PyTorch build takes pybind11 from torch's own headers.
BUILD_TOOLS = (
    ("packages.pybind11", "pybind11", "2.6.0", "0", ("jax",)),
    ("packages.ninja", "ninja", "1.11.1", "0", ("pytorch", "jax")),
    (
        "packages.nvidia_cudnn_frontend",
        '"nvidia-cudnn-frontend>=1.29"',
        "1.29.0",
        "2.18",
        ("pytorch", "jax"),
    ),
)


def tools_to_install(facts: FlatFacts, framework: str, version: str) -> list[tuple[str, str, str]]:
    """(fact, requirement, version) of each build tool the plan installs first."""
    needed = []
    for fact, requirement, minimum, since, frameworks in BUILD_TOOLS:
        installed = facts.get(fact).value
        if framework not in frameworks or Version(version) < Version(since):
            continue
        if installed is None or Version(str(installed)) < Version(minimum):
            needed.append((fact, requirement, minimum))
    return needed


@dataclass(frozen=True, slots=True)
class Step:
    """One numbered step of the plan: what it does and the exact command."""

    title: str
    command: str


def max_jobs(snapshot: Snapshot) -> int:
    """Parallel build jobs that fit in memory, at most one per CPU."""
    memory = snapshot.host.memory_total_mib.get() or MIB_PER_BUILD_JOB
    cpus = snapshot.host.cpu_count.get() or 1
    return max(1, min(cpus, memory // MIB_PER_BUILD_JOB))


#: The PyTorch CUDA build paired with a core of each major when the driver does not decide.
DEFAULT_TORCH_BUILDS = {12: "cu128", 13: "cu130"}


def torch_build_for(major: int, facts: FlatFacts) -> str:
    """The PyTorch CUDA wheel build for a core of ``major``: the driver's if of that major."""
    driver = facts.get("driver.torch_cuda_build").get()
    if isinstance(driver, str) and driver.startswith(f"cu{major}"):
        return driver
    return DEFAULT_TORCH_BUILDS.get(major, f"cu{major}0")


def toolkit_for(major: int, snapshot: Snapshot) -> tuple[str, str] | None:
    """(path, version) of the CUDA toolkit of ``major`` a build should use, the default first."""
    default = snapshot.cuda.toolkit_path.get()
    ordered = sorted(snapshot.cuda.toolkits, key=lambda t: t.path != default)
    for toolkit in ordered:
        version = toolkit.version.get()
        if version and str(version).split(".")[0] == str(major):
            return toolkit.path, str(version)
    return None


def environment(facts: FlatFacts, framework: str, snapshot: Snapshot, major: int) -> dict[str, str]:
    """NVTE_FRAMEWORK, MAX_JOBS, NVTE_CUDA_ARCHS (the GPUs present) and CUDA_HOME.

    CUDA_HOME names a toolkit of the plan's CUDA major only: a toolkit of the other major is
    what TED927 forbids, so the plan never points the build at it.
    """
    env = {"NVTE_FRAMEWORK": framework, "MAX_JOBS": str(max_jobs(snapshot))}
    archs = sorted(
        {
            _arch(g["gpu.compute_capability"].value)
            for g in facts.gpus
            if g["gpu.compute_capability"].known
        },
        key=int,
    )
    if archs:  # build only for the GPUs present: far shorter builds
        env["NVTE_CUDA_ARCHS"] = ";".join(archs)
    toolkit = toolkit_for(major, snapshot)
    if toolkit is not None:
        env["CUDA_HOME"] = toolkit[0]
    return env


def _arch(cc: Any) -> str:
    major, _, minor = str(cc).partition(".")
    return f"{major}{minor or '0'}"


def steps(
    facts: FlatFacts,
    framework: str,
    release: tuple[str, int],
    env: Mapping[str, str],
    snapshot: Snapshot,
    rerun: str,
) -> tuple[Step, ...]:
    """The numbered steps: (``release``) TE version and core CUDA major, ``rerun`` last."""
    version, major = release
    python = snapshot.host.python_executable.get() or "python"
    pip = f"{python} -m pip install"
    steps: list[Step] = []
    if framework == "pytorch" and not facts.get("packages.torch").known:
        index = f"https://download.pytorch.org/whl/{torch_build_for(major, facts)}"
        steps.append(
            Step(
                f"Install a CUDA {major} build of PyTorch first (TE's extension builds against it)",
                f"{pip} torch --index-url {index}",
            )
        )
    if framework == "jax" and not facts.get("packages.jax").known:
        steps.append(Step(f"Install JAX for CUDA {major} first", f'{pip} "jax[cuda{major}]"'))
    needed = [requirement for _, requirement, _ in tools_to_install(facts, framework, version)]
    if needed:
        steps.append(
            Step(
                "Install the build tools pip will not add with --no-build-isolation",
                f"{pip} {' '.join(needed)}",
            )
        )
    exports = " ".join(f"{k}={_quote(v)}" for k, v in env.items())
    steps.append(Step("Set the build environment", f"export {exports}"))
    extras = f"{framework},core_cu{major}" if Version(version) >= Version("2.9") else framework
    steps.append(
        Step(
            f"Install TE {version} ({framework} extension compiled here, cu{major} core wheel)",
            f'{pip} --no-build-isolation "transformer_engine[{extras}]=={version}"',
        )
    )
    steps.append(Step("Check the result", rerun))
    return tuple(steps)


def _quote(value: str) -> str:
    return f'"{value}"' if ";" in value or " " in value else value


def container(facts: FlatFacts, releases: Releases, framework: str = "pytorch") -> str:
    """The newest NGC container of ``framework`` this driver runs, the route around blockers."""
    driver = facts.get("driver.version").value
    if driver is None:
        return ""
    ngc, name, image = (
        (releases.ngc_jax, "JAX", "jax")
        if framework == "jax"
        else (releases.ngc, "PyTorch", "pytorch")
    )
    fitting = [n for n in ngc if Version(str(driver)) >= Version(n.min_driver)]
    if not fitting:
        return ""
    best = fitting[0]
    return (
        f"NGC {name} {best.release} (CUDA {best.cuda}, TE built in): "
        f"docker run --gpus all -it --rm nvcr.io/nvidia/{image}:{best.release}-py3"
    )
