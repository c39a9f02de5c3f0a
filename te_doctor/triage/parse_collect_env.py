"""``python -m torch.utils.collect_env`` output, every layout since PyTorch 1.x.

Older releases print ``Key: value`` lines; 2.x adds ``CUDA_MODULE_LOADING``, XNNPACK and a CPU
block; vLLM's and FastDeploy's copies pad keys (``PyTorch version   : 2.8.0``) under ``=====``
section banners. Keys are found anywhere (not only at a line start), and a value ends at the
end of its line or at the next key, so text whose newlines were lost ("reflowed" into one
paragraph) still reads. ``CUDA runtime version`` is what ``nvcc --version`` said, so it is the
toolkit version, never the runtime library's.
"""

from __future__ import annotations

import re

from te_doctor.triage.gpus import compute_capability
from te_doctor.triage.parse_common import (
    WINDOWS,
    Findings,
    Report,
    package_path,
    source,
    version_or_none,
)

FORMAT = "collect_env"
_KEYS = (
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "ROCM used to build PyTorch",
    "OS",
    "GCC version",
    "Clang version",
    "CMake version",
    "Libc version",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version",
    "CUDA_MODULE_LOADING set to",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "Is XPU available",
    "HIP runtime version",
    "MIOpen runtime version",
    "Is XNNPACK available",
    "Caching allocator config",
    "CPU",
    "Versions of relevant libraries",
)
#: Keys no other tool prints: two of them make a text a collect_env report.
_STRONG = frozenset(
    {
        "PyTorch version",
        "Is debug build",
        "CUDA used to build PyTorch",
        "ROCM used to build PyTorch",
        "CUDA runtime version",
        "CUDA_MODULE_LOADING set to",
        "GPU models and configuration",
        "Nvidia driver version",
        "cuDNN version",
        "HIP runtime version",
        "MIOpen runtime version",
        "Is XNNPACK available",
        "Versions of relevant libraries",
    }
)
_MULTILINE = frozenset({"GPU models and configuration", "cuDNN version"})
#: Keys whose first word is a version: the fact path and how many numbers it must have.
_VERSION_KEYS = {
    "PyTorch version": ("torch.version", 1),
    "CUDA used to build PyTorch": ("torch.cuda_version", 2),  # "None" for a CPU build
    "Python version": ("host.python_version", 2),
    "CUDA runtime version": ("cuda.toolkit_version", 2),  # what nvcc --version said
    "Nvidia driver version": ("driver.version", 2),
}
_KEY_RE = re.compile(
    "(" + "|".join(re.escape(k) for k in sorted(_KEYS, key=len, reverse=True)) + r")[ \t]{0,40}:"
)
_MAX_VALUE = 20_000
_ARCHES = frozenset({"x86_64", "aarch64", "arm64", "ppc64le", "s390x", "i686", "armv7l"})
_OS_RE = re.compile(r"(.{1,200}?)[ \t]{0,5}\(([^()]{1,60})\)")
_GPU_RE = re.compile(r"GPU (\d{1,3}): ")
_UUID_RE = re.compile(r"[ \t]{0,4}\(UUID: [^()\n]{1,80}\)")
_CUDNN_SO = re.compile(r"libcudnn(?:_[a-z_]{1,40})?\.so\.(\d{1,3}(?:\.\d{1,4}){0,3})")
_CUDNN_DLL = re.compile(r"cudnn[a-z_]{0,40}64_(\d{1,3})\.dll", re.IGNORECASE)
_GLIBC = re.compile(r"glibc-(\d{1,3}\.\d{1,4})")
_PIP3 = re.compile(
    r"\[pip3?\][ \t]{1,10}([A-Za-z0-9_][A-Za-z0-9._-]{0,120})"
    r"[ \t]{0,3}==[ \t]{0,3}([^\s\[\]]{1,100})"
)
_CONDA = re.compile(
    r"\[conda\][ \t]{1,10}([A-Za-z0-9_][A-Za-z0-9._-]{0,120})[ \t]{1,60}([^\s\[\]]{1,100})"
)


def parse(report: Report) -> Findings:
    """Facts from every collect_env report in the text (one parse; the merge finds conflicts)."""
    found = Findings()
    text = report.text
    if "[pip" in text or "[conda]" in text:
        _bracket_packages(report, found)
    if not any(key in text for key in ("PyTorch version", "Nvidia driver version", "cuDNN")):
        return found
    matches = [
        m for m in _KEY_RE.finditer(text) if m.start() == 0 or not _word(text[m.start() - 1])
    ]
    if len({m.group(1) for m in matches} & _STRONG) < 2:
        return found
    found.recognised(FORMAT)
    end_line = 0
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        segment = text[match.end() : min(end, match.end() + _MAX_VALUE)]
        if report.cut_at(match.end() + len(segment)):  # drop the line the paste may cut short
            newline = segment.rfind("\n")
            segment = segment[:newline] if newline >= 0 else ""
        value, complete, length = _value(match.group(1), segment, last=i + 1 == len(matches))
        end_line = report.line_at(match.end() + length)
        _read_key(match.group(1), value, found, complete=complete)
    found.own(report.line_at(matches[0].start()), end_line + 1)
    return found


def _word(char: str) -> bool:
    return char.isalnum() or char in "_-"


def _value(key: str, segment: str, *, last: bool) -> tuple[str, bool, int]:
    """The value after ``key``, whether it visibly ended (a blank line or another key), and
    how many characters of ``segment`` it spans."""
    lines = segment.split("\n", 201)
    if key not in _MULTILINE:
        return lines[0].strip(), True, len(lines[0])
    body = [lines[0].strip()] if lines[0].strip() else []
    length = len(lines[0])
    for line in lines[1:201]:
        if not line.strip():
            if body:
                return "\n".join(body), True, length
            length += len(line) + 1
            continue
        body.append(line.strip())
        length += len(line) + 1
    return "\n".join(body), not last, length


def _read_key(key: str, value: str, found: Findings, *, complete: bool) -> None:
    if not value:
        return
    where = source(FORMAT, f"{key}: {value.splitlines()[0]}")
    token = value.split()[0]
    if key in _VERSION_KEYS:
        path, parts = _VERSION_KEYS[key]
        version = version_or_none(token, parts)
        if version is not None:
            found.add(path, version, where)
    elif key == "Is debug build" and token in ("True", "False"):
        found.add("torch.debug", token == "True", where)
    elif key == "CMake version" and value.startswith("version "):
        cmake = version_or_none(value.split()[1], 2) if len(value.split()) > 1 else None
        if cmake is not None:
            found.add("build.cmake_version", cmake, where)
    elif key == "GCC version":
        _compiler(value, found, where=where)
    elif key == "Python platform" and token.startswith(("Linux", "Windows", "macOS", "Darwin")):
        found.add("host.wsl", "microsoft-standard" in value.lower(), where)
    elif key == "Libc version":
        glibc = _GLIBC.match(token)
        if glibc:
            found.add("host.glibc_version", glibc.group(1), where)
    elif key == "OS":
        os_match = _OS_RE.fullmatch(value)
        if os_match and os_match.group(2) in _ARCHES:
            found.add("host.os_name", os_match.group(1).strip(), where)
            found.add("host.arch", os_match.group(2), where)
        elif windows := WINDOWS.match(value):  # collect_env prints no machine on Windows
            found.add("host.os_name", windows.group(0).strip(), where)
    elif key == "GPU models and configuration":
        _gpus(value, found, complete=complete)
    elif key == "cuDNN version":
        _cudnn(value, found, complete=complete)


def _compiler(value: str, found: Findings, *, where: str = "") -> None:
    """``(Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0``, ``(GCC) 13.3.1 20240913 (Red Hat ...)``: the
    first version after the distribution's parenthesis (which holds a package version)."""
    words = value.partition(")")[2].split() if ")" in value[:60] else value.split()
    version = next((v for w in words[:6] if (v := version_or_none(w, 2))), None)
    if version is not None:
        found.add("build.cxx", "gcc", where)
        found.add("build.cxx_version", version, where)


def _gpus(value: str, found: Findings, *, complete: bool) -> None:
    starts = list(_GPU_RE.finditer(value))
    names: list[str] = []
    for i, match in enumerate(starts):
        if int(match.group(1)) != i:
            return  # not the 0..n-1 list nvidia-smi -L prints: cut or mangled, do not count
        end = starts[i + 1].start() if i + 1 < len(starts) else len(value)
        name = _UUID_RE.sub("", value[match.end() : end].split("\n")[0]).strip()
        if not name:
            return
        names.append(name)
    if not names:
        return
    where = source(FORMAT, f"GPU models and configuration: GPU 0: {names[0]}")
    found.add("gpu.name", names[0], where)
    cc = compute_capability(names[0])
    if cc is not None:
        found.add("gpu.compute_capability", cc, where)
    if complete:  # a list cut off by the end of the paste may be missing GPUs
        found.add("gpus.count", len(names), where)
        found.add("gpus.distinct_names", len(set(names)), where)


def _cudnn(value: str, found: Findings, *, complete: bool) -> None:
    """A version, or library file names: one release, or how many different ones.

    A file list cut off by the end of the paste may hide other releases, so it only gives
    ``cudnn.version`` when it visibly ended.
    """
    where = source(FORMAT, "cuDNN version: " + " ".join(value.split()))
    full = [v for v in _CUDNN_SO.findall(value) if v.count(".") >= 1]
    majors = {v for v in _CUDNN_SO.findall(value) if "." not in v}
    majors |= set(_CUDNN_DLL.findall(value))
    if not full and not majors:
        version = version_or_none(value.split()[0], 2)
        if version is not None:
            found.add("cudnn.version", version, where)
        return
    releases = {".".join(v.split(".")[:2]) for v in full}
    releases |= {m for m in majors if all(r.split(".")[0] != m for r in releases)}
    patches = {".".join(v.split(".")[:3]) for v in full}
    if len(releases) >= 2:
        found.add("cudnn.distinct_versions", len(releases), where)
    elif complete and full and len(releases) == 1 and len(patches) == 1:
        found.add("cudnn.version", max(full, key=len), where)


def _bracket_packages(report: Report, found: Findings) -> None:
    """``[pip3] name==version`` and ``[conda] name version build channel`` lines."""
    for pattern, kind in ((_PIP3, "pip3"), (_CONDA, "conda")):
        for match in pattern.finditer(report.text):
            path = package_path(match.group(1))
            version = version_or_none(match.group(2))
            if path is None or version is None or report.cut_at(match.end()):
                continue
            found.recognised(FORMAT)
            found.add(path, version, source(FORMAT, f"[{kind}] {match.group(1)} {version}"))
            line = report.line_at(match.start())
            found.own(line, line + 1)
