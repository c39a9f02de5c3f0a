"""rules/README.md carries generated tables of every rule; they must match the rule files."""

from __future__ import annotations

import os
from pathlib import Path

from te_doctor.check.pipeline import load_rule_set
from te_doctor.plan.data import load_plan_rules
from te_doctor.render.rules_list import rules_markdown

README = Path(__file__).parents[1] / "rules" / "README.md"


def replace_table(text: str, marker: str, table: str) -> str:
    start, end = f"<!-- {marker}:start -->\n", f"<!-- {marker}:end -->"
    head, rest = text.split(start)
    _, tail = rest.split(end)
    return head + start + table + end + tail


def test_rules_tables_are_current() -> None:
    text = README.read_text(encoding="utf-8")
    rules, _ = load_rule_set()
    expected = replace_table(text, "rules-table", rules_markdown(rules))
    expected = replace_table(expected, "plan-rules-table", rules_markdown(load_plan_rules()))
    if os.environ.get("TE_DOCTOR_UPDATE_README") == "1":
        README.write_text(expected, encoding="utf-8")
    assert text == expected, "stale: TE_DOCTOR_UPDATE_README=1 pytest tests/test_rules_readme.py"
