"""No rendered report says the rule language or leaves a blank to fill (issue 15, Must hold).

Every fixture, in every format (and text with --verbose): no raw condition such as
``torch.cuda_version >= 12.8``, no ``{fact.path}`` placeholder, no ``<TE version>`` /
``==VERSION`` blank for a value te-doctor knows, and no lone ``?`` where a fact was missing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.render.check_renderers import CHECK_RENDERERS
from te_doctor.render.style import Style
from te_doctor.snapshot.file import load

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
FAMILIES = "host|driver|gpu|gpus|cuda|cudnn|packages|torch|te|build|plan|env|smoke"
OPERATORS = r"==|!=|<=|>=|<|>|satisfies|is present|is missing|is unknown|not in|in|matches|contains"
RAW_CONDITION = re.compile(rf"\b(?:{FAMILIES})\.[A-Za-z0-9_.]+ (?:{OPERATORS})(?=[\s\"'\d]|$)")
PLACEHOLDERS = (
    re.compile(r"\{[a-z][a-z0-9_]*\.[A-Za-z0-9_.]+\}"),
    re.compile(
        r"<(?:your )?(?:TE version|torch version|CUDA version|gpu|GPU|release|package|lib)>"
    ),
    re.compile(r"==VERSION\b"),
    re.compile(r"(?<=\w )\?(?=[\s,.;)])"),
)


def rendered(fixture: Path) -> dict[str, str]:
    report = run_check(load(fixture), GateOptions(fail_on="never"))
    texts = {name.value: render(report, Style()) for name, render in CHECK_RENDERERS.items()}
    texts["text -v"] = CHECK_RENDERERS[next(iter(CHECK_RENDERERS))](report, Style(verbose=True))
    return texts


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_no_raw_condition_or_unfilled_placeholder(fixture: Path) -> None:
    for name, text in rendered(fixture).items():
        raw = RAW_CONDITION.search(text)
        assert raw is None, f"{name}: raw condition {raw.group(0)!r}"
        for pattern in PLACEHOLDERS:
            blank = pattern.search(text)
            assert blank is None, (
                f"{name}: unfilled {blank.group(0)!r} in ...{_around(text, blank.start())}..."
            )


def _around(text: str, at: int) -> str:
    return text[max(0, at - 60) : at + 40]


def test_the_patterns_catch_what_they_are_for() -> None:
    """The checks above can fail: each pattern finds its own example."""
    assert RAW_CONDITION.search("needs torch.cuda_version >= 12.8")
    assert RAW_CONDITION.search('needs packages.transformer_engine satisfies ">=2.8"')
    assert RAW_CONDITION.search("needs te.torch_extension is present")
    examples = [
        "{te.version}",
        "transformer-engine-cu12==<TE version>",
        '"x==VERSION"',
        "driver ? supports",
    ]
    for pattern, example in zip(PLACEHOLDERS, examples, strict=True):
        assert pattern.search(example), (pattern, example)
    assert not RAW_CONDITION.search("needs PyTorch built for CUDA 12.8 or newer")
