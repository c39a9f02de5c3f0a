"""The corpus of real reports that measures triage (tests/data/reports, see SOURCES.md there).

The reports are data: each must be well-formed and labelled by shared/cases/CATEGORIES.md,
appear once, and stay apart from the development cases the signatures were first written from.
The corpus figure (top-3) must not fall below the one recorded when the corpus landed.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.triage_accuracy import (
    CORPUS,
    DECISIVE_LINES,
    Scored,
    load_corpus,
    pasted_text,
    rates,
    score,
    undecidable,
    wave_number,
)
from te_doctor.engine.rule_model import CATEGORIES
from tests.conftest import skip_unless_shared

REPORTS = load_corpus()
DEV_CASES = Path(__file__).resolve().parents[2] / "shared" / "cases" / "dev-cases.json"
_KEYS = {
    "source", "url", "title", "category", "confidence", "error_excerpt", "environment_text",
    "root_cause", "fix", "notes",
}  # fmt: skip
#: Top-3 floors, as last measured (benchmarks/triage_accuracy.py): over the whole corpus, and
#: over the waves it held before the representative waves 7 and later were added. A new, harder
#: wave may lower the first, before its rules: wave 12 took it from 84.0% to 80.7% (82.8% after),
#: wave 13 from 84.2% to 81.9% (83.7% after), wave 14 to 81.2% (82.6% after), wave 15 to 80.0%
#: (82.2% after, 83.4% with the signatures written from the misses that carry a decisive line),
#: wave 16 to 81.2% (82.1% after), wave 17 to 79.7% (81.0% after);
#: the second keeps what was already learnt from the earlier reports from being lost (87.4% at
#: 460 reports, now 89.3%).
CORPUS_TOP3_FLOOR = 0.809
EARLIER_WAVES = frozenset(f"wave{n}" for n in range(1, 7))
EARLIER_WAVES_TOP3_FLOOR = 0.89


@pytest.mark.parametrize("report", [r for _, r in REPORTS], ids=[r["source"] for _, r in REPORTS])
def test_report_is_well_formed(report: dict[str, Any]) -> None:
    assert {"source", "url", "title", "category", "confidence", "root_cause"} <= set(report)
    assert set(report) <= _KEYS, set(report) - _KEYS
    assert re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", report["source"]), report["source"]
    owner_repo, number = report["source"].split("#")
    assert re.fullmatch(
        rf"https://github\.com/{re.escape(owner_repo)}/(issues|pull)/{number}", report["url"]
    ), report["url"]
    assert report["category"] in CATEGORIES
    assert report["confidence"] in ("high", "medium")
    assert (report.get("error_excerpt") or "").strip() or (
        report.get("environment_text") or ""
    ).strip()


def test_the_corpus_is_large_and_has_no_duplicates() -> None:
    sources = Counter(r["source"] for _, r in REPORTS)
    assert len(sources) >= 200
    assert [s for s, n in sources.items() if n > 1] == []
    assert {w for w, _ in REPORTS} == {f"wave{n}" for n in range(1, 18)}
    # the waves scored before any rule was written for them: a quarter of the corpus at least,
    # and each large enough for its figure to mean something
    held_out = Counter(w for w, _ in REPORTS if w != "wave1")
    assert sum(held_out.values()) >= len(REPORTS) // 4
    assert min(held_out.values()) >= 50


def test_no_report_is_a_development_case() -> None:
    skip_unless_shared(DEV_CASES)
    dev = {case["source"] for case in json.loads(DEV_CASES.read_text(encoding="utf-8"))}
    assert dev.isdisjoint(r["source"] for _, r in REPORTS)


def test_the_corpus_figure_does_not_fall() -> None:
    scored = score(REPORTS)
    top1, top3 = rates(scored)
    assert top3 >= CORPUS_TOP3_FLOOR, f"top-3 {top3:.1%} fell below {CORPUS_TOP3_FLOOR:.1%}"
    assert top1 <= top3
    _, earlier = rates([s for s in scored if s.wave in EARLIER_WAVES])
    assert earlier >= EARLIER_WAVES_TOP3_FLOOR, (
        f"waves 1-6 top-3 {earlier:.1%} fell below {EARLIER_WAVES_TOP3_FLOOR:.1%}"
    )


def test_the_before_rules_figures_are_recorded() -> None:
    """One record per held-out wave, oldest first; the last is the newest wave's."""
    recorded = json.loads((CORPUS / "before-rules.json").read_text(encoding="utf-8"))
    waves = sorted({w for w, _ in REPORTS}, key=wave_number)
    assert [r["wave"] for r in recorded] == waves[1:]
    for record in recorded:
        assert record["reports"] == sum(w == record["wave"] for w, _ in REPORTS)
        assert 0 <= record["top1"] <= record["top3"] <= 1


def test_the_paste_only_verdicts_quote_the_paste() -> None:
    """Each verdict names a corpus report with its label, and its evidence is the paste's own
    words: the judgement was made from what triage sees, nothing else."""
    reports = {r["source"]: r for _, r in REPORTS}
    verdicts = json.loads(DECISIVE_LINES.read_text(encoding="utf-8"))
    assert len({v["source"] for v in verdicts}) == len(verdicts)
    for verdict in verdicts:
        report = reports[verdict["source"]]
        assert verdict["category"] == report["category"], verdict["source"]
        assert verdict["decisive"] in {"yes", "weak", "no"}
        assert verdict["evidence"] in pasted_text(report), verdict["source"]
        assert verdict["why"].strip()


def test_the_paste_only_ceiling_counts_the_undecidable_misses() -> None:
    def scored(source: str, rank: int) -> Scored:
        return Scored(source, "wave1", "config", rank, (), True)

    reports = [scored("a", 1), scored("b", 0), scored("c", 0), scored("d", 2)]
    verdicts = [{"source": "b", "decisive": "no"}, {"source": "d", "decisive": "no"}]
    verdicts.append({"source": "c", "decisive": "weak"})
    assert undecidable(reports, verdicts) == {"reports": 2, "in_top3": 1, "top3_ceiling": 0.75}
    assert undecidable([], [])["top3_ceiling"] == 0.0


def test_waves_are_read_in_number_order(tmp_path: Path) -> None:
    """Wave 10 comes after wave 9 (a string sort would put it after wave 1)."""
    for name in ("wave10-a", "wave9-b", "wave9-a", "wave1-x"):
        (tmp_path / f"{name}.json").write_text(json.dumps([{"source": name}]), encoding="utf-8")
    loaded = [(wave, report["source"]) for wave, report in load_corpus(tmp_path)]
    assert loaded == [
        ("wave1", "wave1-x"), ("wave9", "wave9-a"), ("wave9", "wave9-b"), ("wave10", "wave10-a")
    ]  # fmt: skip
    assert sorted(["wave10", "wave9", "wave2"], key=wave_number) == ["wave2", "wave9", "wave10"]
