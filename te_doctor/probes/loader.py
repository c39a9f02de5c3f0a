"""glibc's dynamic loader, modelled: which file a process gets for a library name.

Nothing is loaded. ``Process`` replays a program's loads in order and answers, for each
DT_NEEDED entry or ``dlopen`` call, the file glibc would use (``ld.so(8)``, ``dlopen(3)``):

1. a name with a ``/`` is that file; two different files are two objects, even with one SONAME;
2. an object already loaded whose SONAME (or file name) equals the name is reused;
3. otherwise the directories of the requesting object's DT_RPATH (only when it has no
   DT_RUNPATH), ``LD_LIBRARY_PATH``, its DT_RUNPATH, the ``/etc/ld.so.cache`` entry of that exact
   name, and the default directories are tried in that order.

Not modelled: the DT_RPATH of the objects that loaded the requester, ``$LIB``/``$PLATFORM``,
hardware-capability subdirectories, ``LD_PRELOAD`` and secure-execution rules.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.elf import DynamicInfo, ElfError, read_dynamic
from te_doctor.probes.libraries import DEFAULT_LIBRARY_DIRS, loader_cache

_SONAME_FROM_FILE = re.compile(r"^(.+?\.so(?:\.\d+)?)(?:\.[\d.]+)?$")


@dataclass(frozen=True, slots=True)
class LoaderPath:
    """What the loader searches besides a requester's own DT_RPATH and DT_RUNPATH."""

    ld_library_path: tuple[str, ...]
    cache: tuple[tuple[str, str], ...]
    default_dirs: tuple[str, ...] = DEFAULT_LIBRARY_DIRS


def loader_path(ctx: ProbeContext) -> LoaderPath:
    """This machine's ``LD_LIBRARY_PATH`` and loader cache."""
    entries = ctx.env.get("LD_LIBRARY_PATH", "").split(":")
    return LoaderPath(tuple(e for e in entries if e), loader_cache(ctx).entries)


@dataclass(frozen=True, slots=True)
class Requester:
    """The object whose DT_NEEDED entry asks for a library, with its own search paths."""

    path: str
    info: DynamicInfo

    def expand(self, directory: str) -> str:
        """``$ORIGIN`` / ``${ORIGIN}`` is the requester's directory."""
        origin = self.path.rsplit("/", 1)[0]
        return directory.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)


@dataclass(frozen=True, slots=True)
class Found:
    """Where the loader finds a name, and how (``"DT_RPATH of libtorch_cuda.so"``)."""

    path: str
    how: str


def search(
    ctx: ProbeContext, name: str, requester: Requester | None, path: LoaderPath
) -> Found | None:
    """The file glibc opens for ``name`` (no ``/`` in it), or None when it finds none."""
    candidates: list[tuple[str, str]] = []
    own = requester.path.rsplit("/", 1)[1] if requester else ""
    if requester and not requester.info.runpath:
        candidates += [(requester.expand(d), f"DT_RPATH of {own}") for d in requester.info.rpath]
    candidates += [(d, "LD_LIBRARY_PATH") for d in path.ld_library_path]
    if requester:
        candidates += [
            (requester.expand(d), f"DT_RUNPATH of {own}") for d in requester.info.runpath
        ]
    for directory, how in candidates:
        candidate = posixpath.normpath(f"{directory}/{name}")
        if directory and ctx.exists(candidate):
            return Found(candidate, how)
    cached = next((p for n, p in path.cache if n == name and ctx.exists(p)), None)
    if cached:
        return Found(cached, "the loader cache (ldconfig)")
    for directory in path.default_dirs:
        if ctx.exists(f"{directory}/{name}"):
            return Found(f"{directory}/{name}", "a default library directory")
    return None


def soname_of(ctx: ProbeContext, path: str) -> str:
    """The DT_SONAME of a library file, or one inferred from its real file name."""
    try:
        soname = read_dynamic(ctx.path(path)).soname
    except (OSError, ElfError):
        soname = ""
    if soname:
        return soname
    name = ctx.realpath(path).rsplit("/", 1)[1]
    match = _SONAME_FROM_FILE.match(name)
    return match.group(1) if match else name


@dataclass(frozen=True, slots=True)
class Loaded:
    """One object in the process: the path it was opened by, its real file, its SONAME."""

    path: str
    real: str
    soname: str
    by: str


@dataclass(frozen=True, slots=True)
class Binding:
    """What one request got: the object (None: not found) and how it was found."""

    name: str
    loaded: Loaded | None
    how: str


@dataclass
class Process:
    """The objects a process has loaded, in load order."""

    ctx: ProbeContext
    path: LoaderPath
    objects: list[Loaded] = field(default_factory=list)

    def already(self, name: str) -> Loaded | None:
        """The first loaded object that a request for ``name`` reuses."""
        return next((o for o in self.objects if name in (o.soname, o.path.rsplit("/", 1)[1])), None)

    def open_file(self, path: str, by: str) -> Loaded:
        """Load ``path`` (a name with a ``/``); the same real file is never loaded twice."""
        real = self.ctx.realpath(path)
        same = next((o for o in self.objects if o.real == real), None)
        if same is not None:
            return same
        loaded = Loaded(path, real, soname_of(self.ctx, path), by)
        self.objects.append(loaded)
        return loaded

    def request(self, name: str, requester: Requester | None, by: str) -> Binding:
        """A DT_NEEDED entry of ``requester``, or a ``dlopen(name)`` (``requester`` None)."""
        if "/" in name:
            return Binding(name, self.open_file(name, by), "opened by path")
        reused = self.already(name)
        if reused is not None:
            return Binding(name, reused, f"already loaded ({reused.by})")
        found = search(self.ctx, name, requester, self.path)
        if found is None:
            return Binding(name, None, "not found")
        return Binding(name, self.open_file(found.path, by), found.how)

    def link(self, requester: Requester, names: Sequence[str], by: str) -> tuple[Binding, ...]:
        """Resolve every DT_NEEDED entry of ``requester`` in order."""
        return tuple(self.request(name, requester, by) for name in names)


def requester_for(ctx: ProbeContext, path: str) -> Requester | str:
    """The requester for a library file, or why it cannot be read as ELF."""
    try:
        return Requester(path, read_dynamic(ctx.path(path)))
    except (OSError, ElfError) as exc:
        return f"cannot read {path}: {exc}"
