"""Help text shared by every command."""

from __future__ import annotations

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  check: the gate failed; plan: a blocker remains; bench: nothing measured
  2  bad input: a flag, rule file or snapshot
  3  internal error (a te-doctor bug: please report it)
  130 interrupted
"""
