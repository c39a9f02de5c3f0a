"""collect_env's ``GCC version`` line as distributions print it, one value at a time.

Written from the survivors of mutation testing (group triage-parsers); whole collect_env reports
are tested in ``tests/test_triage_parsers.py``.
"""

from __future__ import annotations

import pytest

from te_doctor.triage.parsers import parse_report

REPORT = """PyTorch version: 2.6.0+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
GCC version: {gcc}
Python version: 3.12.3 (main, Nov  6 2024, 18:32:19) [GCC 13.2.0] (64-bit runtime)
Is CUDA available: True
"""


@pytest.mark.parametrize(
    ("gcc", "version"),
    [
        ("(Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0", "9.4.0"),
        ("(GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)", "11.4.1"),
        ("(Debian 12.2.0-14) 12.2.0", "12.2.0"),
        ("gcc (GCC) 8.5.0 20210514", "8.5.0"),
        ("Could not collect", None),
    ],
)
def test_the_gcc_line(gcc: str, version: str | None) -> None:
    facts = parse_report(REPORT.format(gcc=gcc)).facts
    assert facts.get("build.cxx_version") == version
    assert facts.get("build.cxx") == ("gcc" if version else None)
    assert facts["torch.version"] == "2.6.0+cu124"  # the rest of the report is still read
