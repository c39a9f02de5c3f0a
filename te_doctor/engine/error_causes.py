"""Error text as facts, and the error signatures that name its cause.

One path for every error te-doctor reads: a pasted report (``triage``), the smoke child's
failure and a ``--python`` interpreter that cannot start (``check``). The text becomes
``smoke.error_text`` and ``smoke.error_line`` (the line a reader looks at first, found by the
shared capture in :mod:`te_doctor.engine.error_capture`), and the error signatures
(``rules/signatures.toml``: every rule that reads those facts) are evaluated on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from te_doctor.engine.error_capture import error_facts
from te_doctor.engine.evaluate import Finding, evaluate
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_model import Rule


def signatures(rules: Sequence[Rule]) -> list[Rule]:
    """The error signatures among ``rules``."""
    return [rule for rule in rules if rule.reads_error_text()]


def causes_of(text: str, rules: Sequence[Rule]) -> tuple[Finding, ...]:
    """The error signatures that fire on ``text`` alone, worst first (nothing else is known, so a
    signature that also needs another fact stays undecided and is left out)."""
    if not text.strip():
        return ()
    facts = FlatFacts(error_facts(text, "error text"), (), environment_complete=False)
    return tuple(f for f in evaluate(facts, signatures(rules)) if f.fired)
