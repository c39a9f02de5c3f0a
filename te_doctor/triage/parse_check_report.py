"""te-doctor's own ``check`` report pasted into a bug report: text, Markdown or JSON.

Each form prints one "found" phrase per component (``check/areas.py``: ``8x NVIDIA H100 80GB
HBM3 (cc 9.0)``, ``550.54.15 (CUDA 12.4)``, ``2.6.0+cu124 (built for CUDA 12.4)``); those
phrases are read back into facts, and the smoke test's error, when it failed, is an error of
the paste. The rest of the report (its findings, fixes and path table, which name causes in
words) is owned, so no error signature fires on te-doctor's own sentences.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

from te_doctor.check.area_of import AREAS, CUDA, CUDNN, DRIVER, FLASH_ATTN, GPU, PLATFORM, TE, TORCH
from te_doctor.triage.parse_common import Findings, Report, package_path, source, version_or_none

TEXT_FORMAT = "te-doctor-check-text"
MARKDOWN_FORMAT = "te-doctor-check-markdown"
JSON_FORMAT = "te-doctor-check-json"
_MAX_REPORTS = 3
_TEXT_HEADER = re.compile(r"te-doctor \S{1,40} check: .{1,2000}")
_MARKDOWN_HEADER = re.compile(r"#{1,3} te-doctor check: \w{1,20}")
_SCHEMA = re.compile(r'"schema":\s{0,4}"te-doctor/report/v\d{1,3}"')
_AREA_NAMES = "|".join(re.escape(name) for name in AREAS)
_MARK = r"(?:\S|\[\S\S\]) "
_MARKED = re.compile(_MARK)
_TEXT_AREA = re.compile(rf"{_MARK}({_AREA_NAMES}): (.{{1,2000}})")
#: What the text report adds after an area's phrase: the next command, rule counts (-v).
_HINT = re.compile(r" (?:→|->) .{1,200}$| \[\d{1,4} [^\[\]]{1,200}\]$")
_MARKDOWN_AREA = re.compile(rf"\|[ *\w]{{1,30}}\| ({_AREA_NAMES}) \| (.{{1,2000}}) \|")
#: ``    ✗ stage gemm: RuntimeError: ...`` (continued on lines indented by six).
_STAGE_LINE = re.compile(rf"    {_MARK}stage [\w-]{{1,40}}: (.{{1,2000}})")
_MARKDOWN_GEMM = re.compile(
    r"\| `[\w-]{1,40}` \| no \| its smoke GEMM [\w-]{1,40} failed: (.{1,2000}) \|"
)
#: The phrases of ``check/areas.py``, one per component: ``8x NVIDIA H100 80GB HBM3 (cc 9.0)``,
#: several kinds comma-separated, then ``; 2 more hidden by CUDA_VISIBLE_DEVICES``.
_GPU = re.compile(r"(\d{1,4})x ([^(\s].{0,119}?)(?: \(cc (\d{1,2}\.\d{1,2})\))?(?=, \d{1,4}x |$)")
_HIDDEN = re.compile(r"; (\d{1,4}) more hidden by CUDA_VISIBLE_DEVICES$")
#: ``550.54.15 (CUDA 12.4)``; ``2.6.0+cu124 (built for CUDA 12.4)``; ``2.3.0 (CUDA 12 core, ...)``
_DRIVER = re.compile(r"(\S{1,40}) \((?:CUDA (\S{1,20})|its CUDA version is not known)\)")
_TORCH = re.compile(
    r"(\S{1,60}) \((?:built for CUDA (\S{1,20})|a ROCm (\S{1,20}) build|a CPU-only build)\)"
)
_TE = re.compile(r"(\S{1,60}) \((?:CUDA (\d{1,3}) core|no core library found), .{1,40}\)")
_CUDNN = re.compile(r"(\S{1,60})(?: \((\d{1,3}) versions installed\))?")
_ARCHES = frozenset({"x86_64", "aarch64", "arm64", "ppc64le", "s390x", "AMD64"})
#: Format -> (how its last block starts, how the lines inside that block start).
_LAST_BLOCK = {TEXT_FORMAT: ("Use: ", "    "), MARKDOWN_FORMAT: ("| Path | Viable |", "|")}
#: The GPU phrase of a machine without a driver: no GPU count, and no driver.
_NO_DRIVER = "none visible (no NVIDIA driver"


def parse(report: Report) -> Findings:
    """Facts and the smoke error from te-doctor check reports, in any of their formats."""
    found = Findings()
    if '"te-doctor/report/v' in report.text:
        _json(report, found)
    if "te-doctor " in report.text and " check: " in report.text:
        _text(report, found)
    return found


def _json(report: Report, found: Findings) -> None:
    decoder = json.JSONDecoder()
    position = 0
    for schema in list(_SCHEMA.finditer(report.text))[:_MAX_REPORTS]:
        start = report.text.rfind("{", position, schema.start())
        if start < 0:
            continue
        try:
            data, end = decoder.raw_decode(report.text, start)
        except (ValueError, RecursionError):  # cut short: the rest is its findings' words
            found.recognised(JSON_FORMAT)
            found.own(report.line_at(start), len(report.lines))
            return
        if not isinstance(data, dict) or not isinstance(data.get("areas"), list):
            continue
        found.recognised(JSON_FORMAT)
        found.own(report.line_at(start), report.line_at(end - 1) + 1)
        for area in data["areas"]:
            if isinstance(area, dict):
                _area(str(area.get("name", "")), str(area.get("found", "")), JSON_FORMAT, found)
        smoke = data.get("smoke")
        error = smoke.get("error_text") if isinstance(smoke, dict) else None
        if isinstance(error, dict) and isinstance(error.get("value"), str) and error["value"]:
            found.errors.append(error["value"])
        position = end


def _text(report: Report, found: Findings) -> None:
    lines = report.complete_lines()
    number = 0
    while number < len(lines):
        line = lines[number].strip()
        if _TEXT_HEADER.fullmatch(line):
            number = _one_report(lines, number, TEXT_FORMAT, found)
        elif _MARKDOWN_HEADER.fullmatch(line):
            number = _one_report(lines, number, MARKDOWN_FORMAT, found)
        else:
            number += 1


def _one_report(lines: tuple[str, ...], start: int, fmt: str, found: Findings) -> int:
    """Read the report whose header is line ``start``; return the line after its end."""
    found.recognised(fmt)
    text = fmt == TEXT_FORMAT
    error_line = _STAGE_LINE if text else _MARKDOWN_GEMM
    end = _end(lines, start, fmt)
    for number in range(start + 1, end):
        line = lines[number]
        area = _TEXT_AREA.fullmatch(line) if text else _MARKDOWN_AREA.fullmatch(line.strip())
        if area:
            phrase = (
                _unwrapped(area.group(2), lines[number + 1 : end], 4) if text else area.group(2)
            )
            _area(area.group(1), _HINT.sub("", phrase), fmt, found)
        error = error_line.fullmatch(line)
        if error and not found.errors:
            found.errors.append(_unwrapped(error.group(1), lines[number + 1 : end], 6))
    found.own(start, end)
    return end


def _unwrapped(first: str, following: Sequence[str], indent: int) -> str:
    """A phrase the text report wrapped: its first line and the lines indented by ``indent``
    that continue it (a finding's line, marked, starts something else)."""
    parts = [first]
    for line in following[:20]:
        rest = line[indent:]
        if line[:indent].strip() or not rest[:1].strip() or _MARKED.match(rest):
            break
        parts.append(rest)
    return " ".join(parts)


def _end(lines: tuple[str, ...], start: int, fmt: str) -> int:
    """The line after the report: the text form ends with its ``Use:`` block, the Markdown form
    with its path table; a report cut before either runs to the end of the paste."""
    last, inside = _LAST_BLOCK[fmt]
    for number in range(start + 1, len(lines)):
        if lines[number].startswith(last):
            end = number + 1
            while end < len(lines) and lines[end].startswith(inside):
                end += 1
            return end
    return len(lines)


def _area(name: str, phrase: str, fmt: str, found: Findings) -> None:
    reader = _READERS.get(name)
    if reader is not None:
        where = source(fmt, f"{name}: {phrase}")
        for path, value in reader(phrase.strip()).items():
            found.add(path, value, where)
        found.absent.extend((path, where) for path in _stated_absent(name, phrase.strip()))


def _stated_absent(name: str, phrase: str) -> tuple[str, ...]:
    """The facts an area's phrase says are not there: the report probed and found nothing."""
    if name == GPU and phrase.startswith(_NO_DRIVER):
        return ("driver.version",)
    return _NOT_THERE.get((name, phrase), ())


def _gpus(phrase: str) -> dict[str, object]:
    if phrase.startswith("none visible"):  # without a driver the count is unknown, not 0
        return {} if phrase.startswith(_NO_DRIVER) else {"gpus.count": 0}
    hidden = _HIDDEN.search(phrase)
    listed = phrase[: hidden.start()] if hidden else phrase
    gpus = list(_GPU.finditer(listed))
    if not gpus or "".join(g.group(0) for g in gpus) != listed.replace(", ", ""):
        return {}
    count = sum(int(g.group(1)) for g in gpus)
    facts: dict[str, object] = {"gpus.count": count, "gpus.distinct_names": len(gpus)}
    facts["gpu.name"] = gpus[0].group(2)
    if gpus[0].group(3):
        facts["gpu.compute_capability"] = gpus[0].group(3)
    if hidden:
        facts["driver.gpu_count"] = count + int(hidden.group(1))
    return facts


def _driver(phrase: str) -> dict[str, object]:
    match = _DRIVER.fullmatch(phrase)
    if not match:
        return {}
    return _versions({"driver.version": match.group(1), "driver.cuda_version": match.group(2)})


def _cuda(phrase: str) -> dict[str, object]:
    names = {"runtime": "cuda.runtime_version", "cuBLAS": "cuda.cublas_version"}
    stated: dict[str, str | None] = {}
    for part in phrase.split(", "):
        word, _, rest = part.partition(" ")
        if word in names:
            stated[names[word]] = rest
        elif word == "toolkit":
            stated["cuda.toolkit_version"] = rest.split(" ", 1)[0]
    return _versions(stated)


def _cudnn(phrase: str) -> dict[str, object]:
    match = _CUDNN.fullmatch(phrase)  # "not found" is two words: no match
    if not match:
        return {}
    facts = _versions({"cudnn.version": match.group(1)})
    if facts:
        facts["cudnn.distinct_versions"] = int(match.group(2) or 1)
    return facts


def _torch(phrase: str) -> dict[str, object]:
    match = _TORCH.fullmatch(phrase)
    if not match:
        return {}
    version, cuda, hip = match.groups()
    return _versions(
        {"torch.version": version, "torch.cuda_version": cuda, "torch.hip_version": hip}
    )


def _transformer_engine(phrase: str) -> dict[str, object]:
    match = _TE.fullmatch(phrase)
    if not match:
        return {}
    facts = _versions({"te.version": match.group(1)})
    if facts and match.group(2):
        facts["te.core_cuda_major"] = int(match.group(2))
    return facts


def _flash_attn(phrase: str) -> dict[str, object]:
    path = package_path("flash-attn")
    version = version_or_none(phrase)
    return {path: version} if path and version else {}


def _platform(phrase: str) -> dict[str, object]:
    facts: dict[str, object] = {}
    for number, part in enumerate(phrase.split(", ")):
        python = (
            version_or_none(part.removeprefix("Python ")) if part.startswith("Python ") else None
        )
        if python:
            facts["host.python_version"] = python
        elif part in _ARCHES:
            facts["host.arch"] = part
        elif part == "WSL2":
            facts["host.wsl"] = True
        elif part.startswith("NGC PyTorch ") and part.endswith(" container"):
            facts["host.ngc_pytorch_version"] = part[len("NGC PyTorch ") : -len(" container")]
        elif part.startswith("in a ") and part.endswith(" container"):
            facts["host.container"] = part[len("in a ") : -len(" container")]
        elif number == 0 and part != "not recorded":
            facts["host.os_name"] = part
    return facts


def _versions(stated: Mapping[str, str | None]) -> dict[str, object]:
    """The stated values that are versions, by fact path."""
    return {
        path: version
        for path, text in stated.items()
        if text and (version := version_or_none(text)) is not None
    }


#: (area, its whole phrase) -> the facts it says are not installed.
_NOT_THERE: Mapping[tuple[str, str], tuple[str, ...]] = {
    (DRIVER, "not installed"): ("driver.version",),
    (TORCH, "not installed"): ("torch.version",),
    (TE, "not installed"): ("te.version",),
    (CUDNN, "not found"): ("cudnn.version",),
}

_READERS: Mapping[str, Callable[[str], dict[str, object]]] = {
    GPU: _gpus,
    DRIVER: _driver,
    CUDA: _cuda,
    CUDNN: _cudnn,
    TORCH: _torch,
    TE: _transformer_engine,
    FLASH_ATTN: _flash_attn,
    PLATFORM: _platform,
}
