"""Find every copy of the CUDA libraries installed, where each came from, and its version.

The index lists copies in a fixed order (pip ``nvidia-*`` wheels, conda, LD_LIBRARY_PATH, CUDA
toolkits, the system loader cache); which copy a process really loads is decided by
``te_doctor.probes.process``. Nothing is loaded or executed here except ``ldconfig -p``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.elf import ElfError, device_architectures
from te_doctor.probes.packages_index import dist_version
from te_doctor.snapshot.facts import Fact, Version
from te_doctor.snapshot.model import LibraryCopy

SOURCE = "libraries"
LDCONFIG_TIMEOUT_S = 3.0

#: Library family -> file-name pattern and the pip distribution (minus -cuXX) that ships it.
FAMILIES: dict[str, tuple[str, str]] = {
    "cudart": ("libcudart.so*", "nvidia-cuda-runtime"),
    "cublas": ("libcublas.so*", "nvidia-cublas"),
    "cublasLt": ("libcublasLt.so*", "nvidia-cublas"),
    "nvrtc": ("libnvrtc.so*", "nvidia-cuda-nvrtc"),
    "cudnn": ("libcudnn.so*", "nvidia-cudnn"),
    "nccl": ("libnccl.so*", "nvidia-nccl"),
    "curand": ("libcurand.so*", "nvidia-curand"),
}
#: Library family -> its component key in a CUDA toolkit's version.json.
TOOLKIT_COMPONENTS = {
    "cudart": "cuda_cudart",
    "cublas": "libcublas",
    "cublasLt": "libcublas",
    "nvrtc": "cuda_nvrtc",
}
#: Where the dynamic loader looks even when the cache does not list a library.
DEFAULT_LIBRARY_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
)
_SO_VERSION = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")


@dataclass(frozen=True, slots=True)
class SearchDir:
    """A directory to search and the origin label its libraries get."""

    path: str
    origin: str


@dataclass(frozen=True, slots=True)
class LibraryIndex:
    """Every library copy found, in index order, each also by its real path."""

    copies: tuple[LibraryCopy, ...]
    notes: tuple[str, ...]
    #: Real path of each copy -> the copy, to give any path the loader picks its version.
    by_real: dict[str, LibraryCopy] = field(default_factory=dict)

    def of(self, family: str) -> tuple[LibraryCopy, ...]:
        """Copies of one family (``"cudnn"``), in index order."""
        return tuple(copy for copy in self.copies if copy.name == family)


def library_index(ctx: ProbeContext) -> LibraryIndex:
    """The index for this run, built once and shared by the CUDA, cuDNN and TE probes."""
    return ctx.cached("library-index", lambda: _build_index(ctx))


def search_dirs(ctx: ProbeContext, notes: list[str]) -> list[SearchDir]:
    """Where to look, in the order a loader (or TE's own preloading) would."""
    dirs: list[SearchDir] = []
    for site in ctx.python.sys_path:
        if site.endswith("-packages"):
            dirs.extend(SearchDir(lib, "pip") for lib in ctx.glob(site, "nvidia/*/lib"))
    prefix = ctx.python.prefix.rstrip("/")
    if ctx.exists(prefix + "/conda-meta"):
        dirs.append(SearchDir(prefix + "/lib", "conda"))
    entries = ctx.env.get("LD_LIBRARY_PATH", "").split(":")
    dirs.extend(SearchDir(entry, "LD_LIBRARY_PATH") for entry in entries if entry)
    for variable in ("CUDNN_HOME", "CUDNN_PATH", "NVRTC_HOME", "CURAND_HOME"):
        home = ctx.env.get(variable, "").rstrip("/")
        if home:  # TE's own loader searches these before the system (TE 2.20 common/__init__.py)
            dirs.extend(SearchDir(home + sub, variable) for sub in ("", "/lib", "/lib64"))
    for toolkit in toolkit_roots(ctx):
        dirs.append(SearchDir(toolkit + "/lib64", f"toolkit {toolkit}"))
        dirs.extend(SearchDir(d, f"toolkit {toolkit}") for d in ctx.glob(toolkit, "targets/*/lib"))
    cache = loader_cache(ctx)
    if cache.problem:
        notes.append(cache.problem)
    dirs.extend(SearchDir(d, "system") for d in _cache_dirs(cache.entries))
    return dirs


def toolkit_roots(ctx: ProbeContext) -> list[str]:
    """CUDA toolkit directories, most authoritative first, each real path listed once."""
    candidates = [ctx.env.get("CUDA_HOME", ""), ctx.env.get("CUDA_PATH", "")]
    nvcc = ctx.which("nvcc")
    if nvcc and ctx.exists(nvcc.rsplit("/", 2)[0] + "/include/cuda_runtime_api.h"):
        candidates.append(nvcc.rsplit("/", 2)[0])  # not for wrapper scripts in /usr/local/bin
    candidates += ["/usr/local/cuda", *ctx.glob("/usr/local", "cuda-*"), "/opt/cuda"]
    roots: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        if candidate and ctx.exists(candidate):
            real = ctx.realpath(candidate)
            if real not in seen:
                seen.add(real)
                roots.append(candidate.rstrip("/"))
    return roots


@dataclass(frozen=True, slots=True)
class LoaderCache:
    """``ldconfig -p``: (file name, path) entries in printed order, or why it was not read."""

    entries: tuple[tuple[str, str], ...]
    problem: str


def loader_cache(ctx: ProbeContext) -> LoaderCache:
    """The system loader cache (``/etc/ld.so.cache`` as ``ldconfig -p`` prints it), read once."""
    return ctx.cached("loader-cache", lambda: _read_loader_cache(ctx))


def _read_loader_cache(ctx: ProbeContext) -> LoaderCache:
    ldconfig = ctx.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if ctx.exists(p)), "ldconfig"
    )
    result = ctx.run([ldconfig, "-p"], timeout=LDCONFIG_TIMEOUT_S)
    if not result.ok:
        return LoaderCache((), f"system loader cache not read: {result.describe()}")
    entries = []
    for line in result.stdout.splitlines():
        head, arrow, path = line.partition("=>")
        if arrow and path.strip():
            entries.append((head.strip().split(" ", 1)[0], path.strip()))
    return LoaderCache(tuple(entries), "")


def _cache_dirs(entries: tuple[tuple[str, str], ...]) -> list[str]:
    """Directories of the loader cache, then the loader's default directories."""
    dirs: list[str] = []
    for _, path in entries:
        directory = path.rsplit("/", 1)[0]
        if directory and directory not in dirs:
            dirs.append(directory)
    return dirs + [d for d in DEFAULT_LIBRARY_DIRS if d not in dirs]


def _build_index(ctx: ProbeContext) -> LibraryIndex:
    notes: list[str] = []
    copies: list[LibraryCopy] = []
    by_real: dict[str, LibraryCopy] = {}
    for directory in search_dirs(ctx, notes):
        for family, (pattern, _dist) in FAMILIES.items():
            for copy in _copies_in(ctx, directory, family, pattern):
                real = ctx.realpath(copy.path)
                if real not in by_real:
                    by_real[real] = copy
                    copies.append(copy)
    return LibraryIndex(tuple(copies), tuple(notes), by_real)


def version_of(ctx: ProbeContext, path: str) -> Fact[Version]:
    """The version of the library file at ``path``: from the index, else from its file name."""
    real = ctx.realpath(path)
    copy = library_index(ctx).by_real.get(real)
    if copy is not None:
        return copy.version
    for name in (real.rsplit("/", 1)[1], path.rsplit("/", 1)[1]):
        match = _SO_VERSION.search(name)
        if match:
            detail = "" if "." in match.group(1) else " (major only)"
            return Fact.of(Version(match.group(1)), f"{SOURCE}:file name{detail}")
    return Fact.unknown(f"no version in the file name {real.rsplit('/', 1)[1]}", SOURCE)


def _copies_in(
    ctx: ProbeContext, directory: SearchDir, family: str, pattern: str
) -> Iterator[LibraryCopy]:
    """One copy per distinct real file; the most specific file name names it."""
    by_real: dict[str, str] = {}
    for path in ctx.glob(directory.path, pattern):
        name = path.rsplit("/", 1)[1]
        real = ctx.realpath(path)
        best = by_real.get(real, "")
        if len(name) > len(best.rsplit("/", 1)[-1]):
            by_real[real] = path
    for real, path in by_real.items():
        yield LibraryCopy(
            name=family,
            path=path,
            version=_version(ctx, directory, family, real.rsplit("/", 1)[1], path),
            origin=directory.origin,
        )


def _version(
    ctx: ProbeContext, directory: SearchDir, family: str, real_name: str, path: str
) -> Fact[Version]:
    source = f"{SOURCE}:file name"
    for name in (real_name, path.rsplit("/", 1)[1]):
        match = _SO_VERSION.search(name)
        if match and "." in match.group(1):
            return Fact.of(Version(match.group(1)), source)
    if directory.origin == "pip":
        site = directory.path.split("/nvidia/")[0]
        soname = _SO_VERSION.search(path)
        major = soname.group(1).split(".")[0] if soname and family != "cudnn" else ""
        found = dist_version(ctx, FAMILIES[family][1], site, major)
        if found:
            return Fact.of(Version(found[1]), f"{SOURCE}:pip {found[0]}")
    if directory.origin.startswith("toolkit "):
        found_in_toolkit = _toolkit_component_version(
            ctx, directory.origin[len("toolkit ") :], family
        )
        if found_in_toolkit is not None:
            return found_in_toolkit
    match = _SO_VERSION.search(path)
    if match:
        return Fact.of(Version(match.group(1)), f"{SOURCE}:soname (major only)")
    return Fact.unknown(f"no version in the file name {real_name}", source)


def _toolkit_component_version(
    ctx: ProbeContext, toolkit: str, family: str
) -> Fact[Version] | None:
    """A library's version from the toolkit's version.json, or its bundled pip dist-info."""
    component = TOOLKIT_COMPONENTS.get(family)
    if component is None:
        return None
    try:
        data = json.loads(ctx.read_text(toolkit + "/version.json"))
        return Fact.of(Version(str(data[component]["version"])), f"{SOURCE}:{toolkit}/version.json")
    except (OSError, ValueError, KeyError, TypeError):
        pass
    dist = FAMILIES[family][1].replace("-", "_")
    for info in ctx.glob(toolkit, f"dist-info/{dist}-*.dist-info"):
        match = re.search(r"-(\d+(?:\.\d+)+)\.dist-info$", info)
        if match:
            return Fact.of(Version(match.group(1)), f"{SOURCE}:{info}")
    return None


def first_copy_version(copies: tuple[LibraryCopy, ...], what: str) -> Fact[Version]:
    """The first copy in index order (pip wheels first): used when no binary binds one."""
    if not copies:
        return Fact.absent(
            f"no {what} found in pip nvidia-* wheels, conda, LD_LIBRARY_PATH, CUDA toolkits "
            "or the system loader cache",
            SOURCE,
        )
    first = copies[0]
    if first.version.value is None:
        return Fact.unknown(f"{first.path}: {first.version.reason}", SOURCE)
    return Fact.of(first.version.value, f"{SOURCE}:{first.origin} {first.path}")


def architectures_fact(ctx: ProbeContext, library: str, source: str) -> Fact[tuple[str, ...]]:
    """The GPU architectures a binary carries code for (``sm_90``, ``compute_90``), as a fact."""
    try:
        archs = device_architectures(ctx.path(library))
    except (OSError, ElfError) as exc:
        return Fact.unknown(f"cannot read the GPU code in {library}: {exc}", source)
    if not archs:
        return Fact.unknown(f"{library} holds no GPU code te-doctor can read", source)
    return Fact.of(archs, f"{source}:{library}")
