"""Environments typed by hand: ``key: value`` lines in an issue template or a tool's env dump.

Bug templates ask for versions one per line (``- PyTorch version: 2.1.1``, ``gcc: 7.5.0``,
``GPU: 2x A10 24GB``, ``| Driver | 581.80 |``), and the env dumps of vLLM, sglang
(``python -m sglang.check_env``), accelerate and transformers (``accelerate env``,
``transformers-cli env``) print the same shape. A line is read only when it *is* such a line:
an optional bullet or table bar, a known key (``PyTorch``, ``Transformer Engine``, ``cuDNN``,
``Driver``, ``GPU``, ``gcc``, a package name, ...), a separator, and a value that starts with
what the key asks for. Numbers in sentences ("I tried torch 2.3 and 2.4") are never read, and
a value that names two versions (``'2.1.0' or '2.0.0'``) gives nothing. A plain ``CUDA: 12.1``
is not read either: people mean the toolkit, the driver's CUDA or torch's CUDA by it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from te_doctor.triage.freeform_gpus import capability, gpu, indexed_gpus
from te_doctor.triage.parse_common import (
    WINDOWS,
    Findings,
    Report,
    read_mask,
    source,
    version_or_none,
)

FORMAT = "environment-list"
_MAX_LINE = 400
_BULLET = r"[ \t]{0,8}(?:[-*\u2022+>][ \t]{1,4}|\d{1,2}[.)][ \t]{1,4}|\|[ \t]{0,4})?"
#: Versions as people type them: 2.1, v2.6.0, v.550.54, 2.6.0+cu126, 2.0.0a0+git5a54537, 9.3.0.75.
_VERSION_TOKEN = re.compile(
    r"(?:[vV]\.?)?(\d{1,4}(?:\.\d{1,6}){0,4}(?:(?:a|b|rc|\.?post|\.?dev)\d{0,12}){0,2}"
    r"(?:\+[A-Za-z0-9]{1,40}(?:[._][A-Za-z0-9]{1,40}){0,6})?)(?![\w.])"
)
#: A wheel's full version with its local build tag, as pip prints it (2.5.0+cu121, 2.4.1+cpu).
_WHEEL_VERSION = re.compile(
    r"\d{1,4}(?:\.\d{1,6}){2,4}\+[A-Za-z0-9]{1,40}(?:[._][A-Za-z0-9]{1,40}){0,6}"
)
_IMPORTED_FROM = re.compile(r"\d{1,4}(?:\.\d{1,6}){1,4}\S{0,40} @/\S{1,300}")
_VERSION_ALONE = re.compile(r"[vV]?\d{1,4}(?:\.\d{1,6}){1,4}(?:\+[A-Za-z0-9._]{1,60})?")
_SEPARATOR = r"[ \t]{0,30}(?P<sep>==|:|=|\||(?=[ \t]))[ \t]{0,40}"
_CUDA_LOCAL = re.compile(r"\+cu(\d{1,2})(\d)\b")
_ROCM_LOCAL = re.compile(r"\+rocm(\d{1,2}\.\d{1,2})")
_WSL = re.compile(r"WSL2?\b|microsoft-standard", re.IGNORECASE)
#: Keys (lower case, words separated by one space) -> fact path or handler name.
_PACKAGE_KEYS = {
    "transformer engine": "transformer_engine",
    "transformerengine": "transformer_engine",
    "te": "transformer_engine",
    "flash attn": "flash_attn",
    "flash attention": "flash_attn",
    "flashattention": "flash_attn",
    "triton": "triton",
    "transformers": "transformers",
    "accelerate": "accelerate",
    "deepspeed": "deepspeed",
    "vllm": "vllm",
    "sglang": "sglang",
    "torchao": "torchao",
    "apex": "apex",
    "megatron core": "megatron_core",
    "megatron lm": "megatron_core",
    "nemo": "nemo_toolkit",
    "xformers": "xformers",
    "flashinfer": "flashinfer_python",
    "bitsandbytes": "bitsandbytes",
    "diffusers": "diffusers",
    "jax": "jax",
    "jaxlib": "jaxlib",
    "torchvision": "torchvision",
}
_FACT_KEYS = {
    "pytorch": "torch.version",
    "torch": "torch.version",
    "cudnn": "cudnn.version",
    "nvidia driver": "driver.version",
    "driver": "driver.version",
    "cuda driver": "driver.version",
    "gpu driver": "driver.version",
    "nvcc": "cuda.toolkit_version",
    "cuda toolkit": "cuda.toolkit_version",
    "cuda compiler": "cuda.toolkit_version",
    "python": "host.python_version",
    "gcc": "build.cxx_version",
    "g++": "build.cxx_version",
    "cxx": "build.cxx_version",
    "compiler": "build.cxx_version",
    "host compiler": "build.cxx_version",
    "cmake": "build.cmake_version",
}
_GPU_KEYS = frozenset(
    {
        "gpu",
        "gpus",
        "gpu model",
        "gpu models",
        "gpu type",
        "gpu name",
        "hardware",
        "device",
        "gpu model and memory",
        "graphics card",
        "accelerator",
        "gpu(s)",
    }  # fmt: skip
)
_CC_KEYS = frozenset({"compute capability", "gpu compute capability"})
_PLATFORM_KEYS = frozenset({"os", "platform", "python platform", "operating system", "kernel"})
_CUDA_KEYS = frozenset({"cuda"})
#: Keys so short or common that only an explicit ``:``/``=``/``|`` makes them a key.
_NEEDS_SEPARATOR = frozenset({"te", "gpu", "device", "os", "hardware", "compiler", "driver"})
_ALL_KEYS = sorted(
    {*_PACKAGE_KEYS, *_FACT_KEYS, *_GPU_KEYS, *_CC_KEYS, *_PLATFORM_KEYS, *_CUDA_KEYS},
    key=len,
    reverse=True,
)
_KEY_TEXT = "|".join(re.escape(k).replace(r"\ ", r"[ \t_-]{1,2}") for k in _ALL_KEYS)
_LINE = re.compile(
    _BULLET
    + r"(?P<key>GPU[ \t]{1,4}\d{1,3}(?:,[ \t]?\d{1,3}){0,63}(?:[ \t]{1,4}compute[ \t]capability)?"
    + rf"|{_KEY_TEXT})"
    + r"(?:[ \t_-]{1,2}(?:versions?|ver\.?|model))?(?:[ \t]{0,2}\([^()\n]{0,30}\))?"
    + _SEPARATOR
    + r"(?P<value>\S.{0,300})",
    re.IGNORECASE,
)


def parse(report: Report, skip: Iterable[tuple[int, int]] = ()) -> Findings:
    """Facts from every hand-typed ``key: value`` line outside the ``skip`` line ranges (the
    lines a tool's parser already read: collect_env's own ``Key: value`` lines)."""
    found = Findings()
    lines = report.complete_lines()
    read = read_mask(len(lines), skip)
    candidates = []
    for number, raw in enumerate(lines):
        if read[number] or len(raw) > _MAX_LINE or not raw.strip():
            continue
        line = raw.replace("**", "").replace("`", "")
        pairs = _pairs_in_one_line(line)
        single = _LINE.match(line)
        for match in pairs or ([single] if single else []):
            key = " ".join(re.split(r"[ \t_-]{1,2}", match.group("key").lower()))
            explicit = bool(pairs) or match.group("sep") in (":", "=", "==", "|")
            if explicit or key not in _NEEDS_SEPARATOR:
                candidates.append((number, key, explicit, match, line))
    numbers = {number for number, *_ in candidates}
    for number, key, explicit, match, line in candidates:
        if not explicit and not _in_a_list(number, numbers) and not _stated_alone(match):
            continue  # "torch 2.1.0" alone is a sentence fragment, not a listing
        value = match.group("value").strip().strip("|").strip()
        before = len(found.observations)
        _read(key, value, match.group("sep"), found, line.strip())
        if len(found.observations) > before:
            found.recognised(FORMAT)
            found.own(number, number + 1)
    return found


def _pairs_in_one_line(line: str) -> list[re.Match[str]]:
    """``nvcc 11.5.119, pytorch 2.1.0+cu121.``: two or more ``key version`` pairs, and nothing
    else, in one comma-separated line; each is read as if it had its own line in a list."""
    matches = [_LINE.fullmatch(part.strip(" \t.;")) for part in line.split(",")]
    if len(matches) < 2:
        return []
    pairs = [m for m in matches if m and _VERSION_ALONE.fullmatch(m.group("value"))]
    return pairs if len(pairs) == len(matches) else []


def _stated_alone(match: re.Match[str]) -> bool:
    """``torch 2.5.0+cu121`` on a line of its own (a wheel's version with its build tag), or
    detectron2's env table's ``PyTorch  1.8.0 @/home/.../torch`` (a version and where it was
    imported from): what a tool printed, never a sentence fragment (a bare ``torch 2.1.0`` line
    still needs a list around it)."""
    value = match.group("value").strip()
    return bool(_WHEEL_VERSION.fullmatch(value) or _IMPORTED_FROM.fullmatch(value))


def _in_a_list(number: int, numbers: set[int]) -> bool:
    """A ``Key 1.2`` line (no ``:``) counts inside a run of three or more key lines."""
    run = [n for n in range(number - 2, number + 3) if n in numbers]
    return any(all(n + k in numbers for k in range(3)) for n in run)


def _read(key: str, value: str, sep: str, found: Findings, line: str) -> None:
    where = source(FORMAT, line)
    handler: Callable[[str, str, Findings, str], None] | None = None
    if key in _PACKAGE_KEYS:
        path = "packages." + _PACKAGE_KEYS[key]
        version = _leading_version(value, whole=not sep.strip())
        if version is not None:
            found.add(path, version, where)
        return
    if key in _FACT_KEYS:
        path = _FACT_KEYS[key]
        version = _fact_version(path, value, whole=not sep.strip())
        if version is not None:
            found.add(path, version, where)
            if path == "build.cxx_version":
                found.add("build.cxx", _compiler_name(key, value), where)
        return
    if key.startswith("gpu ") and key[4:5].isdigit():
        handler = indexed_gpus
    elif key in _GPU_KEYS:
        handler = gpu
    elif key in _CC_KEYS:
        handler = capability
    elif key in _PLATFORM_KEYS:
        handler = _platform
    elif key in _CUDA_KEYS:
        handler = _driver_cuda
    if handler is not None:
        handler(key, value, found, where)


def _leading_version(value: str, *, whole: bool) -> str | None:
    """The version a value starts with (``v2.6``, ``'2.1.1'``, ``==2.4``), alone when ``whole``."""
    text = value.strip("'\"=~ ")
    if " or " in text or "/" in text.split(" ", 1)[0]:
        return None  # two versions, or a path: nothing certain
    match = _VERSION_TOKEN.match(text)
    if match is None:
        return None
    rest = text[match.end() :].strip(" ,;'\"")
    if rest.startswith("@/"):
        rest = ""  # detectron2's env table: "PyTorch  1.8.0 @/home/.../torch", where it lives
    if whole and rest and not rest.startswith("("):
        return None  # "Python 3.10 is what I use": a sentence, not a list line
    if _VERSION_TOKEN.search(rest.split("(", 1)[0]):
        return None  # "2.1.1, 2.2.0": which one?
    return version_or_none(match.group(1), 1)


def _fact_version(path: str, value: str, *, whole: bool) -> str | None:
    if path == "build.cxx_version" and value.startswith("("):
        # "(Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0", "(GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)"
        words = value.partition(")")[2].split()
        value = words[0] if words else ""
    elif path in ("build.cxx_version", "driver.version", "build.cmake_version"):
        # "g++ 8.5.0", "NVIDIA RTX Enterprise Driver 581.80", "version 3.30.2", "v. 550.54"
        words = value.split()
        while words and not _VERSION_TOKEN.match(words[0]):
            words = words[1:]
        value = " ".join(words)
    version = _leading_version(value, whole=whole)
    parts = 2 if path in ("driver.version", "host.python_version", "cudnn.version") else 1
    return version_or_none(version, parts) if version else None


def _compiler_name(key: str, value: str) -> str:
    """The compiler a ``gcc: 7.5.0`` or ``CXX: g++ 8.5`` line names (``gcc``, ``g++``, ...)."""
    first = value.split(maxsplit=1)[0].lower()
    return (
        first
        if re.fullmatch(r"(?:gcc|g\+\+|c\+\+|clang\+\+|clang|cc|nvc\+\+)(?:-\d{1,2})?", first)
        else key
    )


def _platform(key: str, value: str, found: Findings, where: str) -> None:
    if _WSL.search(value):
        found.add("host.wsl", True, where)
    elif windows := WINDOWS.match(value):
        found.add("host.os_name", windows.group(0).strip(), where)


def _driver_cuda(key: str, value: str, found: Findings, where: str) -> None:
    """``CUDA Version: 12.8 (nvidia-smi)``: the driver's CUDA, as nvidia-smi's header says."""
    if "nvidia-smi" in value.lower():
        version = _leading_version(value, whole=False)
        if version is not None and version_or_none(version, 2):
            found.add("driver.cuda_version", version, where)


def local_cuda(version: str) -> str | None:
    """The CUDA a PyTorch wheel was built for, from its local version (``2.6.0+cu126`` -> 12.6)."""
    match = _CUDA_LOCAL.search(version)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def local_rocm(version: str) -> str | None:
    """The ROCm a PyTorch wheel was built for (``2.5.1+rocm6.2`` -> 6.2)."""
    match = _ROCM_LOCAL.search(version)
    return match.group(1) if match else None
