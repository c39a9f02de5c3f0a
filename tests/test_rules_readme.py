"""rules/README.md carries a generated table of every rule; it must match the rule files."""

from __future__ import annotations

import os
from pathlib import Path

from te_doctor.check import load_rule_set
from te_doctor.render.rules_list import rules_markdown

README = Path(__file__).parents[1] / "rules" / "README.md"
START, END = "<!-- rules-table:start -->\n", "<!-- rules-table:end -->"


def test_rules_table_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(START)
    _, tail = rest.split(END)
    rules, _ = load_rule_set()
    expected = head + START + rules_markdown(rules) + END + tail
    if os.environ.get("TE_DOCTOR_UPDATE_README") == "1":
        README.write_text(expected, encoding="utf-8")
    assert text == expected, "stale: TE_DOCTOR_UPDATE_README=1 pytest tests/test_rules_readme.py"
