"""The package stays light to import, and the wheel carries rules/ and the snapshot schema."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
#: The development tools: in [dependency-groups], never in the published requirements.
DEV_TOOLS = {"pytest", "jsonschema", "ruff", "mypy", "build", "hatchling", "mutmut", "pyyaml"}


@pytest.mark.parametrize("module", ["te_doctor.cli.main", "te_doctor.probes"])
def test_import_pulls_in_neither_torch_nor_numpy(module: str) -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line
    }
    heavy = {
        name
        for name in imported
        if name.split(".")[0] in {"torch", "numpy", "transformer_engine", "pynvml"}
    }
    assert heavy == set()


@pytest.mark.slow
def test_wheel_ships_rules_and_schema(built_wheel: Path) -> None:
    names = zipfile.ZipFile(built_wheel).namelist()
    rules = {p.name for p in (ROOT / "rules").iterdir() if p.is_file()}
    assert rules and {f"te_doctor/rules/{name}" for name in rules} <= set(names)
    assert "te_doctor/snapshot.schema.json" in names


@pytest.mark.slow
def test_wheel_metadata_is_release_ready(built_wheel: Path) -> None:
    """No torch anywhere in the published metadata (dev tools are dependency groups), the
    licence as an SPDX expression with its file, py.typed, classifiers and project URLs."""
    wheel = zipfile.ZipFile(built_wheel)
    names = wheel.namelist()
    metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    headers = [line for line in metadata.split("\n\n", 1)[0].splitlines() if ": " in line]
    fields: dict[str, list[str]] = {}
    for line in headers:
        key, _, value = line.partition(": ")
        fields.setdefault(key, []).append(value)

    requirements = fields.get("Requires-Dist", [])
    assert requirements and not [r for r in requirements if "torch" in r or "transformer" in r]
    assert not [r for r in requirements if r.split(";")[0].split(">")[0].strip() in DEV_TOOLS]
    assert fields["Provides-Extra"] == ["plot"]
    assert fields["License-Expression"] == ["Apache-2.0"]
    assert fields["License-File"] == ["LICENSE"]
    licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert "Apache License" in wheel.read(licence).decode()
    assert "te_doctor/py.typed" in names
    assert "Typing :: Typed" in fields["Classifier"]
    versions = {c.rsplit(" :: ", 1)[1] for c in fields["Classifier"] if "Python :: 3." in c}
    assert versions == {"3.10", "3.11", "3.12", "3.13"}
    assert {url.split(",")[0] for url in fields["Project-URL"]} >= {"Source", "Issues"}
    assert fields["Requires-Python"] == [">=3.10"]
