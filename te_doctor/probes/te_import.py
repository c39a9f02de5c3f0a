"""Transformer Engine's own library loading when it is imported, release by release.

``transformer_engine/common/__init__.py`` opens cuDNN, NVRTC and (from 2.8) cuRAND itself, by
path and with ``RTLD_GLOBAL``, before it loads its core library. Where it looks first changed
three times (read at each tag of github.com/NVIDIA/TransformerEngine):

* before 1.9 nothing is loaded here: the core links what it needs;
* 1.9-2.3 (``_load_cudnn``): the pip ``nvidia/cudnn`` wheel first, then ``CUDNN_HOME`` or
  ``CUDNN_PATH``, then ``CUDA_HOME`` or ``CUDA_PATH`` (from 1.11 defaulting to
  ``/usr/local/cuda``), then ``dlopen("libcudnn.so")``; NVRTC from the toolkit, ``ldconfig -p``,
  then ``dlopen``;
* 2.4-2.10: the system first (``CUDNN_HOME``/``CUDNN_PATH``, the toolkit), then the pip
  wheels, then (cuDNN from 2.6) ``ldconfig -p``, then ``dlopen``; cuRAND from 2.8; the pip
  cuBLAS and CUDA runtime are always preloaded;
* from 2.11 (``_load_cuda_library``): ``$<NAME>_HOME``, ``$<NAME>_PATH``, ``CUDA_HOME``,
  ``CUDA_PATH``, ``/usr/local/cuda`` each in turn, ``dlopen("lib<name>.so")``, then four pip
  layouts; the pip cuBLAS, CUDA runtime and cuDNN are preloaded (and must exist) only when
  neither NVRTC nor cuRAND came from the system.

The pip wheels are those of ``sysconfig.get_path("purelib")``: here the first site-packages
directory on the interpreter's path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from te_doctor.probes.context import ProbeContext
from te_doctor.probes.loader import Process
from te_doctor.probes.te_search import Attempt, Finder, TeLoad, not_found


@dataclass(frozen=True, slots=True)
class TeImport:
    """Everything TE's import opens before its core, in order."""

    loads: tuple[TeLoad, ...]
    #: Whether the pip cuBLAS/cudart(/cuDNN) are preloaded; None: this release has no such step.
    preloads_pip: bool | None


def te_release(version: str | None) -> tuple[int, int] | None:
    """(major, minor) of a TE version string, or None when there is none."""
    try:
        release = Version(version or "").release
    except InvalidVersion:
        return None
    return (release[0], release[1] if len(release) > 1 else 0)


def te_import(ctx: ProbeContext, release: tuple[int, int], process: Process) -> TeImport:
    """Replay TE's import-time loading for a TE release into ``process``."""
    finder = Finder(ctx, process)
    if release < (1, 9):
        return TeImport((), None)
    if release < (2, 4):
        return TeImport(_era_pip_first(finder, release), None)
    if release < (2, 11):
        return TeImport(_era_system_first(finder, release), True)
    return _era_system_then_pip(finder)


def _era_pip_first(f: Finder, release: tuple[int, int]) -> tuple[TeLoad, ...]:
    home = f.cuda_home(default=release >= (1, 11))
    nvrtc_line = f.cache_line(lambda line: not _stub_or_builtins(line), grep="libnvrtc")
    return (
        f.first(
            "libcudnn",
            (
                f.pip_one("nvidia/cudnn/lib", "libcudnn.so.*[0-9]"),
                f.tree_env(("CUDNN_HOME", "CUDNN_PATH"), "libcudnn.so*"),
                f.tree(home, "libcudnn.so*", lambda p: False),
                f.name("libcudnn.so"),
            ),
            _os_error("libcudnn.so"),
        ),
        f.first(
            "libnvrtc",
            (f.tree(home, "libnvrtc.so*", _stub_or_builtins), nvrtc_line, f.name("libnvrtc.so")),
            _os_error("libnvrtc.so"),
        ),
    )


def _era_system_first(f: Finder, release: tuple[int, int]) -> tuple[TeLoad, ...]:
    home = f.cuda_home(default=True)
    shell = release < (2, 10)  # `ldconfig -p | grep` through a shell: no match raises

    def cache(name: str, skip: Callable[[str], bool] = lambda line: False) -> Attempt:
        if not shell:
            return f.cache_line(lambda line: name in line and not skip(line))
        word = name if release < (2, 6) else name + ".so"
        return f.cache_line(lambda line: not skip(line), grep=word)

    nvrtc_skip = _stub_or_builtins if release < (2, 6) else (lambda line: False)
    loads = [
        f.first(
            "libcudnn",
            (
                f.tree_env(("CUDNN_HOME", "CUDNN_PATH"), "libcudnn.so*"),
                f.tree(home, "libcudnn.so*", lambda p: False),
                f.pip_all("nvidia/cudnn/lib", "libcudnn"),
                *((cache("libcudnn"),) if release >= (2, 6) else ()),
                f.name("libcudnn.so"),
            ),
            _os_error("libcudnn.so"),
        ),
        f.first(
            "libnvrtc",
            (
                f.tree(home, "libnvrtc.so*", _stub_or_builtins),
                f.pip_all("nvidia/cuda_nvrtc/lib", "libnvrtc"),
                cache("libnvrtc", nvrtc_skip),
                f.name("libnvrtc.so"),
            ),
            _os_error("libnvrtc.so"),
        ),
    ]
    if release >= (2, 8):
        loads.append(
            f.first(
                "libcurand",
                (
                    f.tree(home, "libcurand.so*", lambda p: "stub" in p),
                    f.pip_all("nvidia/curand/lib", "libcurand"),
                    cache("libcurand"),
                    f.name("libcurand.so"),
                ),
                _os_error("libcurand.so"),
            )
        )
    for folder, library in (("cublas", "libcublas"), ("cuda_runtime", "libcudart")):
        preload = f.first(library, (f.pip_all(f"nvidia/{folder}/lib", library),), "")
        if preload.binding is not None:  # not found: TE silently goes on
            loads.append(preload)
    return tuple(loads)


def _era_system_then_pip(f: Finder) -> TeImport:
    loads = [f.cuda_library(name) for name in ("cudnn", "nvrtc", "curand")]
    preload = not loads[1].system and not loads[2].system
    if preload:
        loads += [
            f.first(f"lib{name}", (f.pip_layouts(name),), not_found(name))
            for name in ("cublas", "cudart", "cudnn")
        ]
    return TeImport(tuple(loads), preload)


def _stub_or_builtins(text: str) -> bool:
    return "stub" in text or "libnvrtc-builtins" in text


def _os_error(name: str) -> str:
    return f"OSError: {name}: cannot open shared object file: No such file or directory"
