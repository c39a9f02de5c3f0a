"""Golden outputs: the whole check report, in every format, on the recorded machines that
matter for a first screen (issue 15). A change to any rendered byte fails here until the new
output is reviewed and the goldens rewritten:

    TE_DOCTOR_UPDATE_GOLDEN=1 pytest tests/test_golden.py   # rewrites, then fails once
    git diff tests/golden                                   # review every line
    pytest tests/test_golden.py                             # passes

The switch rewrites and still fails, so a run with it never passes silently, and it is
refused where ``CI`` is set.

Reviewed by hand when written (every file read top to bottom against its fixture's facts):
the header names the GPUs, driver, torch and TE the fixture records; the headline names at
most two causes, in words, and only causes the findings below support (no GPU: TED101; CPU
torch on an L40S: TED423 then "Transformer Engine is not installed"; T4: TED102; two TE
variants: TED202 and TED402, "and 3 more below"; H100 verified and B200: FP8 possible); each
area line says what the fixture has, marked "–" where the component is absent, never "✓"
for a GPU line without a GPU or a TE line without TE; each fired finding sits under its
component (TED101 under GPU, TED202 under the driver, TED423 under PyTorch, TED404/405/505
under TE); "Start here" groups one root cause with one command sequence whose versions are
the fixture's (TE 2.9.0, core_cu12 for torch +cu128, cu128 for driver 570) and whose pip is
the recorded interpreter; the T4's start says FP16, never BF16; snippets are the installed
TE's API (te.fp8_autocast on TE 2.3); path reasons are sentences; JUnit skips not-applicable
rules with what is not here and passes checked ones; Markdown and JSON carry the same areas,
start and headline.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.render.check_renderers import CHECK_RENDERERS, CheckFormat
from te_doctor.render.style import Style
from te_doctor.snapshot.file import load

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"
UPDATE = "TE_DOCTOR_UPDATE_GOLDEN"
#: No GPU, no TE, CPU torch on a GPU box, T4, H100 verified, two TE variants; B200 and A100.
FIXTURES = (
    "no-gpu-laptop",
    "l40s-no-te",
    "plan-cpu-torch-on-gpu-box",
    "t4",
    "h100-smoke-verified",
    "two-te-variants",
    "b200",
    "a100",
)
SUFFIX = {CheckFormat.TEXT: "txt", CheckFormat.MARKDOWN: "md", CheckFormat.JSON: "json"}
SUFFIX[CheckFormat.JUNIT] = "xml"
#: Text variants beyond the default: every rule (-v), and wrapped for an 80-column terminal.
VARIANTS = {
    "h100-smoke-verified.verbose.txt": ("h100-smoke-verified", Style(verbose=True)),
    "two-te-variants.w80.txt": ("two-te-variants", Style(width=80)),
    "no-gpu-laptop.w80.txt": ("no-gpu-laptop", Style(width=80)),
}
CASES = {
    f"{fixture}.{suffix}": (fixture, fmt, Style())
    for fixture in FIXTURES
    for fmt, suffix in SUFFIX.items()
}
CASES.update(
    {name: (fixture, CheckFormat.TEXT, style) for name, (fixture, style) in VARIANTS.items()}
)


def render(fixture: str, fmt: CheckFormat, style: Style) -> str:
    report = run_check(load(HERE / "fixtures" / f"{fixture}.json"), GateOptions())
    return CHECK_RENDERERS[fmt](report, style)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rendered_report_matches_its_golden(name: str) -> None:
    fixture, fmt, style = CASES[name]
    text = render(fixture, fmt, style)
    golden = GOLDEN / name
    if os.environ.get(UPDATE) == "1":
        if os.environ.get("CI"):
            pytest.fail(f"{UPDATE}=1 is refused in CI: rewrite goldens locally and review them")
        if golden.exists() and golden.read_text(encoding="utf-8") == text:
            return
        golden.write_text(text, encoding="utf-8")
        pytest.fail(
            f"rewrote {golden.name}: review `git diff tests/golden`, rerun without {UPDATE}"
        )
    assert golden.exists(), f"no golden {name}: {UPDATE}=1 pytest {__file__} writes it"
    assert text == golden.read_text(encoding="utf-8"), (
        f"{name} changed: if intended, {UPDATE}=1 pytest tests/test_golden.py and review the diff"
    )


def test_every_golden_file_is_checked() -> None:
    """A golden nobody compares against would pass forever: none may be left over."""
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(CASES)
