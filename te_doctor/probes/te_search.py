"""The search steps of Transformer Engine's import-time loader, as attempts that find a file.

Each attempt mirrors one step of ``transformer_engine/common/__init__.py`` (a recursive glob
under a directory, a pip folder, an ``ldconfig -p`` line, a bare ``dlopen``) and, when it finds
something, loads it into the modelled ``Process`` the way TE's ``ctypes.CDLL`` call would.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.loader import Binding, Process

#: A recursive search stops after this long (TE's own glob has no limit; te-doctor must).
TREE_BUDGET_S = 2.0
BY = "Transformer Engine's import-time loader"
#: An attempt gives (a path to open, or ``name:<file>`` to dlopen, and how it was found).
Attempt = Callable[[], tuple[str, str] | None]


@dataclass(frozen=True, slots=True)
class TeLoad:
    """One library TE opens at import: what it got, how, and TE's error when it got nothing."""

    library: str
    binding: Binding | None
    how: str
    failure: str
    system: bool


class ImportFails(Exception):
    """A step whose failure ends TE's import at once (a later fallback is never reached)."""


def not_found(name: str) -> str:
    """The error TE 2.11+ raises when ``_load_cuda_library(name)`` finds nothing."""
    return f"RuntimeError: {name} shared object not found."


class Finder:
    """The search steps TE uses, each an attempt that finds a file (or a name to dlopen)."""

    def __init__(self, ctx: ProbeContext, process: Process) -> None:
        self.ctx, self.process = ctx, process
        sites = [p for p in ctx.python.sys_path if p.endswith("-packages")]
        self.purelib = sites[0] if sites else ctx.python.prefix

    def cuda_home(self, *, default: bool) -> str:
        """``CUDA_HOME or CUDA_PATH`` (or ``/usr/local/cuda``): one directory, not each."""
        env = self.ctx.env
        return (
            env.get("CUDA_HOME") or env.get("CUDA_PATH") or ("/usr/local/cuda" if default else "")
        )

    def first(self, library: str, attempts: tuple[Attempt, ...], failure: str) -> TeLoad:
        """The first attempt that finds something, opened into the process."""
        for attempt in attempts:
            try:
                found = attempt()
            except ImportFails as stop:
                return TeLoad(library, None, "not found", str(stop), False)
            if found is None:
                continue
            target, how = found
            binding = self.process.request(target.removeprefix("name:"), None, BY)
            if binding.loaded is not None:
                return TeLoad(library, binding, how, "", not how.startswith("pip"))
        return TeLoad(library, None, "not found", failure, False)

    def tree(self, root: str, pattern: str, skip: Callable[[str], bool]) -> Attempt:
        """``glob(f"{root}/**/{pattern}", recursive=True)``, sorted by file name, last first."""

        def attempt() -> tuple[str, str] | None:
            if not root:
                return None
            found = [p for p in self._walk(root, pattern) if not skip(p)]
            found.sort(key=lambda p: p.rsplit("/", 1)[1], reverse=True)
            return (found[0], f"a search of {root}") if found else None

        return attempt

    def tree_env(self, names: tuple[str, ...], pattern: str) -> Attempt:
        """The tree of the first of ``names`` that is set (``CUDNN_HOME or CUDNN_PATH``)."""
        root = next((self.ctx.env[n] for n in names if self.ctx.env.get(n)), "")
        return self.tree(root, pattern, lambda p: False)

    def pip_one(self, folder: str, pattern: str) -> Attempt:
        """TE 1.9-2.3: the one ``libcudnn.so.N`` of the pip wheel."""

        def attempt() -> tuple[str, str] | None:
            found = self.ctx.glob(f"{self.purelib}/{folder}", pattern)
            return (found[0], f"pip {folder}") if found else None

        return attempt

    def pip_all(self, folder: str, library: str) -> Attempt:
        """Every ``lib*.so.*[0-9]`` of a pip folder is opened; ``library``'s own file is named."""
        return lambda: self._open_all(f"{self.purelib}/{folder}", "lib*.so.*[0-9]", library)

    def pip_layouts(self, name: str) -> Attempt:
        """``_load_cuda_library_from_python``: the four pip layouts, in TE's order."""
        nvidia = f"{self.purelib}/nvidia"
        layouts = (
            (f"{nvidia}/cu13/{name}/lib", "lib*.so.*[0-9]"),
            (f"{nvidia}/cu13/lib", f"lib{name}*.so.*[0-9]"),
            (f"{nvidia}/{name}/lib", "lib*.so.*[0-9]"),
            (f"{nvidia}/cuda_{name}/lib", "lib*.so.*[0-9]"),
        )

        def attempt() -> tuple[str, str] | None:
            for directory, pattern in layouts:
                found = self._open_all(directory, pattern, f"lib{name}")
                if found:
                    return found
            return None

        return attempt

    def _open_all(self, directory: str, pattern: str, library: str) -> tuple[str, str] | None:
        found = self.ctx.glob(directory, pattern)
        for path in found:
            self.process.open_file(path, BY)
        own = [p for p in found if p.rsplit("/", 1)[1].startswith(library + ".so")]
        folder = directory.removeprefix(self.purelib + "/")
        return ((own or found)[0], f"pip {folder}") if found else None

    def cache_line(self, wanted: Callable[[str], bool], grep: str = "") -> Attempt:
        """The first ``ldconfig -p`` line that TE's filter keeps.

        Up to 2.9 TE runs ``ldconfig -p | grep '<grep>'`` through a shell with
        ``check_output``: when grep matches nothing, that raises CalledProcessError and the
        import fails there, before its final ``dlopen`` fallback.
        """

        def attempt() -> tuple[str, str] | None:
            lines = [(f"{n} => {p}", p) for n, p in self.process.path.cache]
            lines = [(line, p) for line, p in lines if grep in line]
            for line, path in lines:
                if wanted(line):
                    return path, "ldconfig -p"
            if grep and not lines:
                raise ImportFails(
                    f"subprocess.CalledProcessError: Command 'ldconfig -p | grep '{grep}'' "
                    "returned non-zero exit status 1."
                )
            return None

        return attempt

    def name(self, filename: str) -> Attempt:
        """``ctypes.CDLL(filename)``: the loader's own search for a bare file name."""
        return lambda: (f"name:{filename}", f"dlopen({filename}) on the loader path")

    def cuda_library(self, name: str) -> TeLoad:
        """``_load_cuda_library(name)`` from 2.11: the system, then the pip layouts."""
        env = self.ctx.env
        roots = [
            env.get(f"{name.upper()}_HOME"),
            env.get(f"{name.upper()}_PATH"),
            env.get("CUDA_HOME"),
            env.get("CUDA_PATH"),
            "/usr/local/cuda",
        ]
        attempts: list[Attempt] = [
            self.tree(root, f"lib{name}.so*", lambda p: "stub" in p) for root in roots if root
        ]
        attempts.append(self.name(f"lib{name}.so"))
        system = self.first(f"lib{name}", tuple(attempts), "")
        if system.binding is not None:
            return system
        pip = self.first(f"lib{name}", (self.pip_layouts(name),), not_found(name))
        return TeLoad(pip.library, pip.binding, pip.how, pip.failure, False)

    def _walk(self, root: str, pattern: str) -> Iterator[str]:
        """Files matching ``pattern`` under ``root`` at any depth (hidden directories skipped)."""
        files = self.ctx.cached(f"te-tree:{root}", lambda: _shared_objects_under(self.ctx, root))
        return (path for path in files if fnmatch.fnmatch(path.rsplit("/", 1)[1], pattern))


def _shared_objects_under(ctx: ProbeContext, root: str) -> tuple[str, ...]:
    """Every ``lib*.so*`` under ``root``, walked once per run within ``TREE_BUDGET_S``."""
    base = ctx.path(root)
    deadline, seen, found = time.monotonic() + TREE_BUDGET_S, set(), []
    for folder, dirs, files in os.walk(base, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen or time.monotonic() > deadline:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        relative = os.path.relpath(folder, base)
        prefix = root.rstrip("/") + ("" if relative == "." else "/" + relative)
        found += [f"{prefix}/{file}" for file in sorted(fnmatch.filter(files, "lib*.so*"))]
    return tuple(found)
