"""The shipped JSON Schemas (snapshot and check report), and the command that writes them.

They ship as ``te_doctor/snapshot.schema.json`` and ``te_doctor/report.schema.json``; a test
checks both are current. Regenerate with ``python -m te_doctor.check.schemas``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from te_doctor.check.report import REPORT_SCHEMA, Report
from te_doctor.snapshot.schema import document_schema, snapshot_schema


def report_schema() -> dict[str, Any]:
    """The JSON Schema of ``te-doctor check --format json`` output."""
    return document_schema(Report, "te-doctor check report", REPORT_SCHEMA, "schema", REPORT_SCHEMA)


SCHEMA_FILES = {"snapshot.schema.json": snapshot_schema, "report.schema.json": report_schema}


def schema_text(name: str = "snapshot.schema.json") -> str:
    """A shipped schema file's exact text."""
    return json.dumps(SCHEMA_FILES[name](), indent=2) + "\n"


if __name__ == "__main__":
    for filename in SCHEMA_FILES:
        target = Path(__file__).parents[1] / filename
        target.write_text(schema_text(filename), encoding="utf-8")
