"""How well `te-doctor triage` names the cause of real reports it was not written from.

Reads the corpus (``tests/data/reports/wave*.json``: public bug reports with the reporter's
error and environment text verbatim, and the category the thread's fix supports), pastes each
report the way a reporter would (environment, then error) into the triage parser and diagnosis,
and counts a hit when the labelled category is the first cause (top-1) or among the first three
(top-3). Prints the whole corpus, its reports with and without pasted error text, each category
and each wave, and the figures recorded for the held-out waves before any rule or parser was
written for them (the last wave's is the generalisation figure), and how far the pasted text
itself lets a rule go: the reports a reader who saw only the paste judged to carry no line or fact
naming their cause (``decisive-lines.json``).

    python benchmarks/triage_accuracy.py [--misses] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from te_doctor.check.pipeline import load_rule_set
from te_doctor.triage.diagnose import diagnose, pasted_facts
from te_doctor.triage.parsers import parse_report

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "reports"
#: Measured on each held-out wave before any rule or parser was written for it (SOURCES.md),
#: oldest first: a JSON list of {wave, reports, top1, top3, date, commit, note}.
RECORDED_BEFORE_RULES = CORPUS / "before-rules.json"
#: Misses judged from the paste alone: a JSON list of {source, category, decisive (yes, weak or
#: no), evidence, why}; "no" means no line or fact in the paste names the labelled cause.
DECISIVE_LINES = CORPUS / "decisive-lines.json"


@dataclass(frozen=True, slots=True)
class Scored:
    """One report and where its category came in the diagnosis (0 = not in the top 3)."""

    source: str
    wave: str
    category: str
    rank: int
    top: tuple[str, ...]
    #: whether the reporter pasted any error text (else the environment alone speaks)
    has_error: bool


def wave_number(wave: str) -> int:
    """The number of a wave's name (``wave10`` -> 10), so that wave 10 sorts after wave 9."""
    return int(wave.removeprefix("wave"))


def load_corpus(directory: Path = CORPUS) -> list[tuple[str, dict[str, Any]]]:
    """Every report with its wave (``wave1``, ``wave2``, ...), wave by wave, file by file."""
    paths = sorted(
        directory.glob("wave*.json"), key=lambda path: (wave_number(_wave_of(path)), path.name)
    )
    return [
        (_wave_of(path), item)
        for path in paths
        for item in json.loads(path.read_text(encoding="utf-8"))
    ]


def _wave_of(path: Path) -> str:
    """``wave10`` for ``wave10-a.json``."""
    return path.stem.split("-", 1)[0]


def pasted_text(report: dict[str, Any]) -> str:
    """The report as a reporter pastes it: the environment block, then the error."""
    parts = [report.get("environment_text") or "", report.get("error_excerpt") or ""]
    return "\n\n".join(part for part in parts if part)


def score(reports: Sequence[tuple[str, dict[str, Any]]]) -> list[Scored]:
    """Triage every report; its rank is 1-3 where the labelled category appears, else 0."""
    rules, _ = load_rule_set()
    scored = []
    for wave, report in reports:
        parsed = parse_report(pasted_text(report))
        facts = pasted_facts(parsed.facts, parsed.sources, parsed.error_text, parsed.absent)
        causes = diagnose(facts, rules, parsed.formats, parsed.unread_text).causes
        top = tuple(dict.fromkeys(c.category for c in causes))[:3]
        rank = top.index(report["category"]) + 1 if report["category"] in top else 0
        has_error = bool((report.get("error_excerpt") or "").strip())
        scored.append(Scored(report["source"], wave, report["category"], rank, top, has_error))
    return scored


def rates(scored: Sequence[Scored]) -> tuple[float, float]:
    """(top-1, top-3) hit rates."""
    if not scored:
        return 0.0, 0.0
    return (
        sum(s.rank == 1 for s in scored) / len(scored),
        sum(s.rank > 0 for s in scored) / len(scored),
    )


def undecidable(scored: Sequence[Scored], verdicts: Sequence[dict[str, str]]) -> dict[str, Any]:
    """The reports judged to carry no decisive line, how many are in the top 3 anyway, and the
    top-3 a rule set could reach if it named every other report's cause."""
    judged_no = {v["source"] for v in verdicts if v["decisive"] == "no"}
    cases = [s for s in scored if s.source in judged_no]
    missed = sum(not s.rank for s in cases)
    ceiling = (len(scored) - missed) / len(scored) if scored else 0.0
    return {"reports": len(cases), "in_top3": len(cases) - missed, "top3_ceiling": ceiling}


def _line(label: str, scored: Sequence[Scored]) -> str:
    top1, top3 = rates(scored)
    return f"{label:<22} {len(scored):>4}   top-1 {top1:6.1%}   top-3 {top3:6.1%}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list the reports not in the top 3")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the reports' directory")
    args = parser.parse_args(argv)
    scored = score(load_corpus(args.corpus))
    names = sorted({s.wave for s in scored}, key=wave_number)
    waves = {w: [s for s in scored if s.wave == w] for w in names}
    categories = {
        c: [s for s in scored if s.category == c] for c in sorted({s.category for s in scored})
    }
    pasted = {
        "with error text": [s for s in scored if s.has_error],
        "environment only": [s for s in scored if not s.has_error],
    }
    groups = {"corpus": scored, **pasted, **waves, **categories}
    recorded = (
        json.loads(RECORDED_BEFORE_RULES.read_text(encoding="utf-8"))
        if RECORDED_BEFORE_RULES.is_file()
        else []
    )
    verdicts = (
        json.loads(DECISIVE_LINES.read_text(encoding="utf-8")) if DECISIVE_LINES.is_file() else []
    )
    paste_only = undecidable(scored, verdicts)
    if args.json:
        figures = {
            name: {"reports": len(g), **dict(zip(("top1", "top3"), rates(g), strict=True))}
            for name, g in groups.items()
        }
        report = {"figures": figures, "before_rules": recorded, "undecidable": paste_only}
        print(json.dumps(report, indent=1))
        return 0
    print(f"{'':<22} {'n':>4}")
    for section in ({"corpus": scored, **pasted}, waves, categories):
        print("\n".join(_line(name, group) for name, group in section.items()), end="\n\n")
    for number, before in enumerate(recorded, 1):
        last = " (the last held-out wave)" if number == len(recorded) else ""
        print(
            f"{before['wave']} before any rule or parser was written for it{last} "
            f"({before['date']}, {before['commit']}): {before['reports']} reports, "
            f"top-1 {before['top1']:.1%}, top-3 {before['top3']:.1%}"
        )
    if verdicts:
        print(
            f"\njudged from the paste alone to name no cause: {paste_only['reports']} reports, "
            f"{paste_only['in_top3']} of them in the top 3 anyway; naming every other report's "
            f"cause would reach top-3 {paste_only['top3_ceiling']:.1%}"
        )
    if args.misses:
        print("\nnot in the top 3:")
        for item in scored:
            if not item.rank:
                print(f"  {item.source:<45} {item.category:<20} got {', '.join(item.top) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
