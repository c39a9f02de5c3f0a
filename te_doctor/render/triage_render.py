"""``te-doctor triage`` output: likely causes with fixes, then what to ask the reporter for."""

from __future__ import annotations

import json
from typing import Any

from te_doctor.render.wrap import flow
from te_doctor.snapshot.codec import to_data
from te_doctor.triage.diagnose import Diagnosis

TRIAGE_SCHEMA = "te-doctor/triage/v1"
_SHOWN_FACTS = 12


def triage_text(diagnosis: Diagnosis) -> str:
    """For a terminal."""
    kinds = ", ".join(diagnosis.formats) or "nothing te-doctor recognises"
    lines = [f"te-doctor triage: read {kinds}; {len(diagnosis.facts_found)} facts found.", ""]
    if diagnosis.causes:
        lines.append("Likely causes, most likely first:")
        for number, finding in enumerate(diagnosis.causes, 1):
            lines.append(
                f"{number}. [{finding.severity.value}] {finding.rule_id} {finding.name}: "
                f"{flow(finding.message)}"
            )
            if finding.fix:
                lines.append(f"   fix: {flow(finding.fix)}")
    else:
        lines.append("No rule matches what was pasted.")
    if diagnosis.ask_for:
        lines += ["", "To settle more, ask the reporter for:"]
        lines += [f"  - {r.what} (decides {r.settles} more rule(s))" for r in diagnosis.ask_for]
    if diagnosis.facts_found:
        lines += ["", "Facts read from the text:"]
        items = list(diagnosis.facts_found.items())
        lines += [f"  {path} = {value}" for path, value in items[:_SHOWN_FACTS]]
        if len(items) > _SHOWN_FACTS:
            lines.append(f"  ... and {len(items) - _SHOWN_FACTS} more (--format json lists them)")
    return "\n".join(lines) + "\n"


def triage_markdown(diagnosis: Diagnosis) -> str:
    """To paste back into the issue."""
    lines = ["### te-doctor triage", ""]
    if diagnosis.causes:
        lines += ["**Likely causes**, most likely first:", ""]
        for number, finding in enumerate(diagnosis.causes, 1):
            lines.append(
                f"{number}. `{finding.rule_id}` **{finding.name}** ({finding.severity.value}): "
                f"{flow(finding.message)}"
            )
            if finding.fix:
                lines.append(f"   - Fix: {flow(finding.fix)}")
    else:
        lines.append("No known cause matches the text yet.")
    if diagnosis.ask_for:
        lines += ["", "**Could you also share:**", ""]
        lines += [f"- {r.what}" for r in diagnosis.ask_for[:4]]
    lines += ["", "<sub>Diagnosed with `te-doctor triage` from the text above.</sub>"]
    return "\n".join(lines) + "\n"


def triage_json(diagnosis: Diagnosis) -> str:
    """Everything, versioned."""
    data: dict[str, Any] = {"schema": TRIAGE_SCHEMA, **to_data(diagnosis)}
    return json.dumps(data, indent=2) + "\n"


TRIAGE_RENDERERS = {"text": triage_text, "markdown": triage_markdown, "json": triage_json}
