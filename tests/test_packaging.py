"""The package stays light to import, and the wheel carries rules/ and the snapshot schema."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


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
def test_wheel_ships_rules_and_schema(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    (wheel,) = tmp_path.glob("te_doctor-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    rules = {p.name for p in (ROOT / "rules").iterdir() if p.is_file()}
    assert rules and {f"te_doctor/rules/{name}" for name in rules} <= set(names)
    assert "te_doctor/snapshot.schema.json" in names
    metadata = (
        zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    )
    requirements = [
        line
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert not any("torch" in r or "transformer" in r for r in requirements), requirements
