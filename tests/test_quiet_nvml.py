"""NVML is imported quietly, and a deprecated ``pynvml`` beside nvidia-ml-py is a finding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from te_doctor.check.pipeline import run_check
from te_doctor.check.report import GateOptions
from te_doctor.probes.collect import collect_snapshot
from tests.fakes import FakeMachine

#: What pynvml 12/13 install: a .pth that imports a meta-path hook warning on ``import pynvml``
#: (the same mechanism and message as its ``_pynvml_redirector``, written here for the test).
REDIRECTOR = """
import importlib.abc, sys, warnings

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("pynvml"):
            warnings.warn(
                "The pynvml package is deprecated. Please install nvidia-ml-py instead.",
                FutureWarning,
                stacklevel=2,
            )
        return None

sys.meta_path.insert(0, Finder())
"""


def _run_with_redirector(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "_fake_pynvml_redirector.py").write_text(REDIRECTOR, encoding="utf-8")
    (site / "_fake_pynvml_redirector.pth").write_text(
        "import _fake_pynvml_redirector\n", encoding="utf-8"
    )
    prelude = f"import site; site.addsitedir({str(site)!r})\n"
    return subprocess.run(
        [sys.executable, "-W", "default", "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def test_the_hook_warns_on_a_plain_import(tmp_path: Path) -> None:
    """The control: without te-doctor's filter the other package's warning is printed."""
    result = _run_with_redirector(tmp_path, "import pynvml")
    assert "FutureWarning: The pynvml package is deprecated" in result.stderr


def test_te_doctor_loads_nvml_without_printing_it(tmp_path: Path) -> None:
    code = (
        "from te_doctor.probes.real import _nvml_bindings\n"
        "import warnings\n"
        "module = _nvml_bindings()\n"
        "print(module.__name__, hasattr(module, 'nvmlInit'))\n"
        "warnings.warn('still shown', UserWarning)\n"  # the filter does not outlive the import
    )
    result = _run_with_redirector(tmp_path, code)
    assert result.stdout.split() == ["pynvml", "True"]
    assert "pynvml package is deprecated" not in result.stderr
    assert "UserWarning: still shown" in result.stderr


@pytest.mark.parametrize(
    ("distributions", "fires"),
    [
        ({"pynvml": "13.0.1", "nvidia-ml-py": "13.580.82"}, True),
        ({"pynvml": "11.5.0", "nvidia-ml-py": "12.575.51"}, True),
        ({"nvidia-ml-py": "13.580.82"}, False),
        ({"pynvml": "11.5.0"}, False),
    ],
)
def test_deprecated_pynvml_beside_nvidia_ml_py_is_a_finding(
    tmp_path: Path, distributions: dict[str, str], fires: bool
) -> None:
    machine = FakeMachine(tmp_path)
    for name, version in distributions.items():
        machine.add_dist(name, version)
    report = run_check(collect_snapshot(machine.context()), GateOptions())
    fired = {f.rule_id: f.message for f in report.fired()}
    assert ("TED425" in fired) is fires
    if fires:
        assert f"pynvml` distribution {distributions['pynvml']}" in fired["TED425"]
