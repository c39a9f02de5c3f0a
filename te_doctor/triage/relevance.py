"""Which environment findings bear on a pasted report.

A live ``te-doctor check`` is about FP8 by definition, so a GPU without FP8 support is always
worth saying there. A pasted bug report is about whatever failed in it: a GPU without FP8 tensor
cores explains an xFormers head-size refusal or an undefined symbol no better than any other
fact of the machine. So in triage an environment rule of the ``unsupported-gpu-fp8`` category
counts as a cause only when the paste is about low precision (it names FP8, FP4, a float8
dtype or scaled GEMM) or is one of te-doctor's own reports. Error signatures always count: they
read the failure itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from te_doctor.engine.evaluate import Finding
from te_doctor.triage import parse_check_report, parse_te_doctor

#: The category whose environment rules speak only to FP8/FP4 reports.
LOW_PRECISION_CATEGORY = "unsupported-gpu-fp8"
#: Words that make a report one about FP8 or FP4 (first letters first: linear on any text).
_LOW_PRECISION = re.compile(
    r"(?=[fFeEmMnNsS])(?:fp8|fp4|float8|e4m3|e5m2|mxfp|nvfp4|scaled_mm|scaled mm)", re.IGNORECASE
)
_OWN_REPORTS = frozenset(
    {
        parse_te_doctor.JSON_FORMAT,
        parse_te_doctor.TEXT_FORMAT,
        parse_check_report.TEXT_FORMAT,
        parse_check_report.MARKDOWN_FORMAT,
        parse_check_report.JSON_FORMAT,
    }
)


def about_low_precision(texts: Iterable[str], formats: Iterable[str]) -> bool:
    """True when the paste speaks of FP8/FP4, or is te-doctor's own report."""
    return bool(_OWN_REPORTS.intersection(formats)) or any(
        _LOW_PRECISION.search(text) for text in texts
    )


def bearing_on_report(
    fired: Iterable[Finding], signatures: set[str], about_fp8: bool
) -> list[Finding]:
    """The fired findings that bear on the report (see the module's docstring)."""
    return [
        f
        for f in fired
        if about_fp8 or f.rule_id in signatures or f.category != LOW_PRECISION_CATEGORY
    ]
