"""Python tracebacks and error lines in a text, kept verbatim for rules that match on error text.

A traceback runs from ``Traceback (most recent call last):`` (or, in a text that lost its
start, from the first ``File "...", line N`` frame) through its indented frames to the
exception line and any indented continuation of its message. Log prefixes such as
``[rank0]: `` or ``[Worker pid=9] ERROR 11-19 21:10:38 [x.py:671] `` are recognised by
repeating on every line of the traceback (digits may change). Outside tracebacks, any line
that looks like an error (``RuntimeError: ...``, ``undefined symbol``, ``CUDNN_STATUS_...``,
``cannot open shared object file``, ...) is kept. Identical lines and blocks are kept once.

The one capture for every error text te-doctor reads: a pasted report (``triage``), what the
smoke child or a ``--python`` interpreter printed when it failed (``check``).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from te_doctor.snapshot.facts import Fact

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


@dataclass(frozen=True, slots=True)
class Captured:
    """The error blocks found, joined by newlines, and whether one was a whole traceback."""

    text: str
    traceback: bool


def capture_errors(lines: Sequence[str], owned: Sequence[bool] = ()) -> Captured:
    """Every traceback and error line of ``lines``, outside the lines ``owned`` marks."""
    rows = tuple(lines)
    taken_lines = list(owned) + [False] * (len(rows) - len(owned))
    flagged = _error_line_numbers(rows)
    pieces: list[str] = []
    seen: set[str] = set()
    size = 0
    number = 0
    taken = 0  # lines before this one already belong to an earlier block
    found_traceback = False
    while number < len(rows) and size < MAX_ERROR_TEXT:
        line = rows[number]
        if taken_lines[number] or not line.strip():
            number += 1
            continue
        block, number = _traceback(rows, number, taken_lines)
        if block:
            found_traceback = True
        elif number in flagged and _is_error(line):
            block = _code_before(rows, number, taken, taken_lines) + [line]
            number = _continuation(rows, number + 1, _wrap_base(line), block, taken_lines)
        else:
            number += 1
            continue
        taken = number
        piece = "\n".join(entry[:_MAX_LINE] for entry in block)
        if piece not in seen:
            seen.add(piece)
            pieces.append(piece)
            size += len(piece) + 1
    return Captured("\n".join(pieces)[:MAX_ERROR_TEXT], found_traceback)


def last_error_line(text: str) -> str:
    """The line a reader looks at first: the last line of the last captured error block (the
    exception itself), else the last non-blank line; at most 300 characters."""
    captured = capture_errors(text.splitlines()).text if text else ""
    lines = [line.strip() for line in (captured or text).splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


#: Outcomes whose error text starts with te-doctor's own sentence naming how the child ended
#: (``killed by SIGSEGV (segmentation fault) during import-te``): that is the line to show.
_ENDED_BY_TE_DOCTOR = ("signal", "timeout")


def error_facts(text: str, source: str, outcome: str = "") -> dict[str, Fact[Any]]:
    """``smoke.error_text`` and ``smoke.error_line`` for ``text``.

    The line is the exception a traceback ends with (or the last error line), except when the
    child was killed or timed out (``outcome``): then te-doctor's first line says how.
    """
    if outcome in _ENDED_BY_TE_DOCTOR:
        first = [line.strip() for line in text.splitlines() if line.strip()][:1]
        line = first[0][:300] if first else ""
    else:
        line = last_error_line(text)
    return {"smoke.error_text": Fact.of(text, source), "smoke.error_line": Fact.of(line, source)}


def _code_before(
    lines: tuple[str, ...], number: int, taken: int, owned: Sequence[bool]
) -> list[str]:
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


def _error_line_numbers(lines: tuple[str, ...]) -> set[int]:
    """Numbers of the lines an error pattern matches: one pass over the lower-cased text."""
    text = "\n".join(lines)
    lowered = text.lower()
    numbers = {n for n, line in enumerate(lines) if _BARE_EXCEPTION.match(line)}
    if len(lowered) != len(text):  # lower() changed lengths (rare Unicode): line by line
        return numbers | {n for n, line in enumerate(lines) if _ERROR_LINE.search(line.lower())}
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
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


def _traceback(lines: tuple[str, ...], number: int, owned: Sequence[bool]) -> tuple[list[str], int]:
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
    owned: Sequence[bool],
    prefix: str = "",
) -> int:
    """Append the more-indented lines that continue an exception message (at most 30)."""
    for _ in range(30):
        if number >= len(lines) or owned[number]:
            break
        current = lines[number][:_MAX_LINE]
        if prefix and _shape(current[: len(prefix)]) != _shape(prefix):
            break  # another rank's (or process's) line
        body = current[len(prefix) :] if prefix else current
        if not body.strip() or _indent(body) <= base or body.lstrip().startswith("File "):
            break
        block.append(current)
        number += 1
    return number
