"""The clean-up every triage parser reads through (parse_common), function by function.

Each row is a way people paste: quoted replies, ``<details>`` blocks, code fences, Windows line
ends, a paste cut off mid-word. The parsers' own tests see these only through whole reports.
"""

from __future__ import annotations

import pytest

from te_doctor.triage import parse_common
from te_doctor.triage.parse_common import (
    Findings,
    Report,
    package_path,
    prepare,
    snippet,
    source,
    version_or_none,
)


@pytest.mark.parametrize(
    ("raw", "lines"),
    [
        ("> quoted\n", ("quoted",)),
        (">quoted\n", ("quoted",)),
        ("> > > three deep\n", ("three deep",)),
        (">>>> four deep\n", ("four deep",)),
        ("   > three spaces before\n", ("three spaces before",)),
        ("    > four spaces: code, kept\n", ("    > four spaces: code, kept",)),
        ("a > b stays\n", ("a > b stays",)),
        ("x" * 45 + " > late\n", ("x" * 45 + " > late",)),
        (">  two spaces after: one goes\n", (" two spaces after: one goes",)),
        ("<details><summary>env</summary>\n", ("env",)),
        ("<DETAILS open>\n", ("",)),
        ("</details>\n", ("",)),
        ("a<br/>b<br>c\n", ("abc",)),
        ("<code>torch 2.1</code>\n", ("torch 2.1",)),
        ("<pre>x</pre> <kbd>y</kbd> <sub>1</sub><sup>2</sup> <tt>z</tt>\n", ("x y 12 z",)),
        ("<p><b>bold</b> <i>it</i></p>\n", ("bold it",)),
        ("<div>not stripped</div>\n", ("<div>not stripped</div>",)),
        ("<bogus>\n", ("<bogus>",)),
        ("a < b and c > d\n", ("a < b and c > d",)),
        ("```\ncode\n```\n", ("", "code", "")),
        ("```python\ncode\n```\n", ("", "code", "")),
        ("~~~\ncode\n~~~\n", ("", "code", "")),
        ("   ```shell  \nx\n", ("", "x")),
        ("```c++\nx\n", ("", "x")),
        ("``` text after is not a fence\n", ("``` text after is not a fence",)),
        ("``two backticks``\n", ("``two backticks``",)),
        ("a\r\nb\rc\n", ("a", "b", "c")),
        ("a\x00b\ufeff\n", ("ab",)),
        ("trailing spaces   \t\n", ("trailing spaces",)),
        ("", ("",)),
        ("\n", ("",)),
        ("a\n\nb\n", ("a", "", "b")),
        (
            "Aug 12 10:38:34 fileserver unsloth[4073658]:     PyTorch 2.10.0\n",
            ("    PyTorch 2.10.0",),
        ),
        ("Dec  3 07:01:02 gpu-7 kernel: NVRM: Xid 79\n", ("NVRM: Xid 79",)),
        ("May 12 10:00:00 is when it broke: oops\n", ("May 12 10:00:00 is when it broke: oops",)),
        ("Aug is a month\n", ("Aug is a month",)),
        (
            "x Aug 12 10:38:34 host unit[1]: not at the start\n",
            ("x Aug 12 10:38:34 host unit[1]: not at the start",),
        ),
    ],
)
def test_prepare_lines(raw: str, lines: tuple[str, ...]) -> None:
    report = prepare(raw)
    assert report.lines == lines
    assert report.text == "\n".join(lines)


@pytest.mark.parametrize(
    ("raw", "complete", "cut_from"),
    [
        ("torch 2.1\n", True, None),
        ("torch 2.1", False, 6),
        ("torch\t2.1", False, 6),
        ("a\nb 2.1", False, 4),
        ("single", False, 0),
        ("torch 2.1  ", False, 6),  # trailing blanks are not a word
        ("```\ntorch 2.1\n```", True, None),  # a closing fence ends the paste
        ("x\n", True, None),
    ],
)
def test_a_paste_without_a_last_newline_may_end_mid_word(
    raw: str, complete: bool, cut_from: int | None
) -> None:
    report = prepare(raw)
    assert report.last_line_complete is complete
    last = len(report.lines) - 1
    assert report.line_is_complete(last) is complete
    assert report.line_is_complete(last - 1) is True or last == 0
    assert report.complete_lines() == (report.lines if complete else report.lines[:-1])
    if cut_from is None:
        assert not report.cut_at(len(report.text) + 10**6)
    else:
        assert report.cut_from == cut_from
        assert report.cut_at(cut_from + 1) and not report.cut_at(cut_from)


def test_line_starts_and_offsets_agree() -> None:
    report = prepare("ab\r\n> cd\nefg\n")
    assert report.lines == ("ab", "cd", "efg")
    assert report.starts == (0, 3, 6, 10)
    for number, line in enumerate(report.lines):
        start = report.starts[number]
        assert report.text[start : start + len(line)] == line
        assert report.line_at(start) == number
        assert report.line_at(start + len(line)) == number  # its newline
    assert report.line_at(len(report.text)) == 2
    by_hand = Report("ab\ncd\nefg", ("ab", "cd", "efg"))  # no starts: counted from the text
    assert [by_hand.line_at(o) for o in (0, 2, 3, 6, 8)] == [0, 0, 1, 2, 2]


def test_a_huge_paste_keeps_its_head_and_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse_common, "SCAN_HEAD", 10)
    monkeypatch.setattr(parse_common, "SCAN_TAIL", 10)
    assert prepare("H" * 10 + "M" * 5 + "T" * 10 + "\n").lines == ("H" * 10, "T" * 9)
    assert prepare("H" * 10 + "T" * 10).lines == ("H" * 10 + "T" * 10,)  # at the cap: whole


def test_a_huge_line_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse_common, "MAX_LINE", 5)
    assert prepare("abcdefgh\nxyz\n").lines == ("abcde", "xyz")


@pytest.mark.parametrize(
    ("text", "min_parts", "expected"),
    [
        ("2.1.0", 1, "2.1.0"),
        ("2", 1, "2"),
        ("2", 2, None),
        ("2.1", 2, "2.1"),
        ("2.6.0+cu126", 1, "2.6.0+cu126"),
        ("2.0.0a0+git5a54537", 1, "2.0.0a0+git5a54537"),
        ("9.3.0.75", 4, "9.3.0.75"),
        ("9.3.0.75", 5, None),
        ("2.1.0rc1", 1, "2.1.0rc1"),
        ("1.0.post1", 1, "1.0.post1"),
        ("1.0.dev20240101", 1, "1.0.dev20240101"),
        ("v2.1", 1, None),
        ("2.1.", 1, None),
        ("", 1, None),
        ("1" * 101, 1, None),
        ("1" * 9, 1, "1" * 9),
        ("1" * 10, 1, None),
        ("2.1 ", 1, None),
        ("abc", 1, None),
    ],
)
def test_version_or_none(text: str, min_parts: int, expected: str | None) -> None:
    assert version_or_none(text, min_parts) == expected


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("transformer-engine", "packages.transformer_engine"),
        ("Transformer_Engine", "packages.transformer_engine"),
        ("flash.attn", "packages.flash_attn"),
        ("nvidia-cudnn-cu12", "packages.nvidia_cudnn_cu12"),
        ("_private", "packages._private"),
        ("-leading-dash", None),
        ("", None),
        ("a b", None),
        ("a" * 121, "packages." + "a" * 121),
        ("a" * 122, None),
    ],
)
def test_package_path(name: str, path: str | None) -> None:
    assert package_path(name) == path


def test_snippets_and_sources_collapse_and_cut() -> None:
    assert snippet("a \t b\n c") == "a b c"
    assert snippet("x" * 160) == "x" * 160
    assert snippet("x" * 161) == "x" * 157 + "..."
    assert source("pip-list", "torch   2.1.0") == "pip-list: 'torch 2.1.0'"


def test_findings_merge_touching_spans_and_cap_observations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = Findings()
    found.own(0, 2)
    found.own(2, 4)
    found.own(5, 6)
    assert found.owned_lines == [(0, 4), (5, 6)]
    found.recognised("pip-list")
    found.recognised("pip-list")
    assert found.formats == ["pip-list"]
    monkeypatch.setattr(parse_common, "MAX_OBSERVATIONS", 2)
    for n in range(3):
        found.add("packages.torch", str(n), "here")
    assert [o.value for o in found.observations] == ["0", "1"]
