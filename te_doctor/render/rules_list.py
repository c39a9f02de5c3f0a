"""``te-doctor rules`` and ``te-doctor explain``: the rule set as text, JSON or Markdown."""

from __future__ import annotations

import json
from collections.abc import Sequence

from te_doctor.engine.rule_model import Rule


def rules_text(rules: Sequence[Rule]) -> str:
    """One line per rule."""
    width = max((len(r.name) for r in rules), default=10)
    lines = [f"{r.id}  {r.severity.value:<7}  {r.name:<{width}}  {r.category}" for r in rules]
    return "\n".join(lines) + f"\n{len(rules)} rules\n"


def rules_json(rules: Sequence[Rule]) -> str:
    """Every rule's metadata and condition as JSON."""
    return json.dumps([_rule_data(r) for r in rules], indent=2) + "\n"


def rules_markdown(rules: Sequence[Rule]) -> str:
    """The generated table for ``rules/README.md``."""
    lines = ["| ID | Name | Severity | Category | Summary | Source |", "|---|---|---|---|---|---|"]
    lines += [
        f"| {r.id} | `{r.name}` | {r.severity.value} | {r.category} | {_cell(r.summary)} "
        f"| {_cell(r.source)} |"
        for r in rules
    ]
    return "\n".join(lines) + "\n"


def explain(rule: Rule) -> str:
    """One rule in full, like ``ruff rule``."""
    when = []
    for part, leaves in (
        ("all of", rule.when.all),
        ("any of", rule.when.any),
        ("none of", rule.when.none),
    ):
        if leaves:
            when.append(f"  {part}:")
            when += [f"    {leaf.text}" for leaf in leaves]
    lines = [
        f"{rule.id} {rule.name} ({rule.severity.value}, {rule.category}, since {rule.since})",
        "",
        f"Summary: {rule.summary}",
        "",
        "Why:",
        *[f"  {line}" for line in rule.why.splitlines()],
        "",
        f"Fix: {rule.fix or '(informational: nothing to fix)'}",
        "",
        "Fires when:",
        *when,
    ]
    if rule.blocks:
        lines += ["", "Rules out: " + ", ".join(rule.blocks)]
    lines += ["", f"Source: {rule.source}", f"Defined in: {rule.file}"]
    if rule.docs:
        lines.append(f"Docs: {rule.docs}")
    return "\n".join(lines) + "\n"


def _rule_data(rule: Rule) -> dict[str, object]:
    return {
        "id": rule.id,
        "name": rule.name,
        "severity": rule.severity.value,
        "category": rule.category,
        "since": rule.since,
        "status": rule.status,
        "summary": rule.summary,
        "why": rule.why,
        "fix": rule.fix,
        "source": rule.source,
        "docs": rule.docs,
        "blocks": list(rule.blocks),
        "when": {
            "all": [leaf.text for leaf in rule.when.all],
            "any": [leaf.text for leaf in rule.when.any],
            "none": [leaf.text for leaf in rule.when.none],
        },
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
