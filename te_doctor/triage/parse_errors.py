"""Python tracebacks and error lines, kept verbatim for rules that match on error text.

A traceback runs from ``Traceback (most recent call last):`` (or, in a paste that lost its
start, from the first ``File "...", line N`` frame) through its indented frames to the
exception line and any indented continuation of its message. Log prefixes such as
``[rank0]: `` or ``[Worker pid=9] ERROR 11-19 21:10:38 [x.py:671] `` are recognised by
repeating on every line of the traceback (digits may change). Outside tracebacks, any line
that looks like an error (``RuntimeError: ...``, ``undefined symbol``, ``CUDNN_STATUS_...``,
``cannot open shared object file``, ...) is kept. Identical lines and blocks are kept once.
"""

from __future__ import annotations

import bisect
import itertools
import re

from te_doctor.triage.parse_common import Findings, Report

FORMAT = "traceback"
HEADER = "Traceback (most recent call last):"
MAX_ERROR_TEXT = 100_000
_MAX_LINE = 2_000
_MAX_BLOCK = 400
#: An error line indented this deep sits in a wrapped log column (see ``_wrap_base``).
_LOG_COLUMN = 20
_FRAME = re.compile(
    r'[ \t]{0,40}File "[^"\n]{1,1000}", line \d{1,7}|[^\n"]{0,1000}\.py", line \d{1,7}, in '
)
_EXCEPTION = re.compile(
    r"(?:[A-Za-z_][\w.]{0,120}\.)?(?:[A-Z]\w{0,80}(?:Error|Exception|Exit|Interrupt|Warning)"
    r"|StopIteration|StopAsyncIteration|KeyboardInterrupt)(?::.{0,5000})?"
)
#: Matched against lower-cased text (faster than re.IGNORECASE over megabytes).
_ERROR_LINE = re.compile(
    r"error[ \t]{0,3}:|undefined symbol|cublas_status_|cudnn_status_|cuda_error_"
    r"|nccl (?:error|warn)"
    r"|no such file or directory|cannot open shared object file|segmentation fault|core dumped"
    r"|fatal error|no kernel image is available|not supported|only supported|not implemented"
    r"|\bfailed\b|mismatch|incompatible|out of memory|illegal memory access"
    r"|during handling of the above exception|the above exception was the direct cause"
    r"|exception[ \t]{0,3}:|does not exist|unexpected keyword argument|missing '_|no such option"
    r"|configuring incomplete|no cuda runtime is found|unable to find|no backend supports"
    r"|not in available provider|can't load|cannot load|was not found|\.cuh?:\d{1,6}\b"
    r"|too old|version bounds|cudaerror|cannot find -l|could not find|has no attribute"
    r"|(?:loss|norm)[\x27\"]?[ \t]{0,3}(?:is|[:=])[ \t]{0,3}[-+]?(?:nan|inf)\b|nan loss"
    r"|invalid device ordinal|cannot load symbol|not defined in file|was compiled with"
    r"|compiled against|divisible by"
)
_BARE_EXCEPTION = re.compile(r"[ \t]{0,8}(?:[A-Z]\w{0,80}(?:Error|Exception)|StopIteration)[ \t]*")


def parse(report: Report, skip: list[tuple[int, int]]) -> tuple[str, Findings]:
    """Every traceback and error line, joined by newlines, outside the ``skip`` line ranges."""
    found = Findings()
    lines = report.lines
    owned = [False] * len(lines)
    for start, end in skip:
        for number in range(max(start, 0), min(end, len(lines))):
            owned[number] = True
    flagged = _error_line_numbers(report)
    pieces: list[str] = []
    seen: set[str] = set()
    size = 0
    number = 0
    taken = 0  # lines before this one already belong to an earlier block
    while number < len(lines) and size < MAX_ERROR_TEXT:
        line = lines[number]
        if owned[number] or not line.strip():
            number += 1
            continue
        block, number = _traceback(lines, number, owned)
        if block:
            found.recognised(FORMAT)
        elif number in flagged and _is_error(line):
            block = _code_before(lines, number, taken, owned) + [line]
            number = _continuation(lines, number + 1, _wrap_base(line), block, owned)
        else:
            number += 1
            continue
        taken = number
        piece = "\n".join(entry[:_MAX_LINE] for entry in block)
        if piece not in seen:
            seen.add(piece)
            pieces.append(piece)
            size += len(piece) + 1
    return "\n".join(pieces)[:MAX_ERROR_TEXT], found


def _code_before(lines: tuple[str, ...], number: int, taken: int, owned: list[bool]) -> list[str]:
    """The indented source lines right above an exception line whose traceback header was cut
    (``    so_path = next(...)`` above ``StopIteration``), at most 4."""
    line = lines[number][:_MAX_LINE]
    if not _EXCEPTION.fullmatch(line.strip()):
        return []
    base = _indent(line)
    start = number
    while start > max(taken, number - 4) and not owned[start - 1]:
        above = lines[start - 1][:_MAX_LINE]
        if not above.strip() or _indent(above) <= base:
            break
        start -= 1
    return [entry[:_MAX_LINE] for entry in lines[start:number]]


def _error_line_numbers(report: Report) -> set[int]:
    """Numbers of the lines an error pattern matches: one pass over the lower-cased text."""
    lowered = report.text.lower()
    numbers = {n for n, line in enumerate(report.lines) if _BARE_EXCEPTION.match(line)}
    if len(lowered) != len(report.text):  # lower() changed lengths (rare Unicode): line by line
        lines = report.lines
        return numbers | {n for n, line in enumerate(lines) if _ERROR_LINE.search(line.lower())}
    starts = list(itertools.accumulate((len(line) + 1 for line in report.lines), initial=0))
    for match in _ERROR_LINE.finditer(lowered):
        numbers.add(bisect.bisect_right(starts, match.start()) - 1)
    return numbers


def _is_error(line: str) -> bool:
    """An error line; nvidia-smi table rows (``| ... [Not Supported] |``) never are."""
    text = line[:_MAX_LINE]
    if text.lstrip().startswith("|"):
        return False
    return bool(_ERROR_LINE.search(text.lower()) or _BARE_EXCEPTION.fullmatch(text))


def _wrap_base(line: str) -> int:
    """The indent a continuation of an error line must exceed. A line indented as deep as a
    log column (Rich's handler wraps its message at a fixed column, e.g.
    ``                             Could not find package``) continues on lines as deep."""
    indent = _indent(line[:_MAX_LINE])
    return indent - 1 if indent >= _LOG_COLUMN else indent


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _shape(prefix: str) -> str:
    return re.sub(r"\d", "0", prefix)


def _traceback(lines: tuple[str, ...], number: int, owned: list[bool]) -> tuple[list[str], int]:
    """The traceback starting at ``lines[number]`` and the line after it, or ``([], number)``."""
    line = lines[number][:_MAX_LINE]
    at = line.find(HEADER)
    if at >= 0:
        prefix, body = line[:at], line[at:]
        base = _indent(prefix) if not prefix.strip() else 0
        prefix = prefix if prefix.strip() else ""
    else:
        frame = _FRAME.match(line) if '", line ' in line else None
        if frame is None or line.lstrip().startswith(("-", "*")):
            return [], number
        prefix, body = "", line
        base = max(_indent(line) - 2, 0)
    block = [line]
    number += 1
    while number < len(lines) and len(block) < _MAX_BLOCK and not owned[number]:
        current = lines[number][:_MAX_LINE]
        if prefix:
            if _shape(current[: len(prefix)]) != _shape(prefix):
                break
            body = current[len(prefix) :]
        else:
            body = current
        if not body.strip():
            break
        if _indent(body) > base or body.lstrip().startswith("File "):
            block.append(current)
            number += 1
            continue
        if HEADER not in body and (_EXCEPTION.fullmatch(body.strip()) or _is_error(body)):
            block.append(current)  # the exception line ends the traceback
            number = _continuation(lines, number + 1, base, block, owned, prefix)
        break
    return block, number


def _continuation(
    lines: tuple[str, ...],
    number: int,
    base: int,
    block: list[str],
    owned: list[bool],
    prefix: str = "",
) -> int:
    """Append the more-indented lines that continue an exception message (at most 30)."""
    for _ in range(30):
        if number >= len(lines) or owned[number]:
            break
        current = lines[number][:_MAX_LINE]
        body = current[len(prefix) :] if prefix else current
        if not body.strip() or _indent(body) <= base or body.lstrip().startswith("File "):
            break
        block.append(current)
        number += 1
    return number
