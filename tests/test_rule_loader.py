"""Malformed rule files fail with one line naming the file, the rule and the field (exit 2)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from te_doctor.check.pipeline import load_rule_set
from te_doctor.engine.rule_model import RuleFileError
from te_doctor.engine.rules import load_rule_file

GOOD = """
schema = 1

[[rule]]
id = "ORG101"
name = "cluster-needs-h100"
severity = "error"
category = "config"
since = "1.0.0"
summary = "{gpu.name} is not an H100."
why = "Our training jobs are tuned for H100."
fix = "Submit to the h100 partition."
source = "ACME platform runbook, section 4"
when.all = ['gpus.count > 0', 'gpu.name not matches /H100/']
examples.fires = [{ "gpu.name" = "NVIDIA A100-SXM4-80GB" }]
examples.clear = [{ "gpu.name" = "NVIDIA H100 80GB HBM3" }]
"""


def write(tmp_path: Path, text: str) -> Path:
    directory = tmp_path / "org-rules"
    directory.mkdir(exist_ok=True)
    (directory / "acme.toml").write_text(text)
    return directory


def test_an_organisation_rule_loads_and_runs(tmp_path: Path) -> None:
    rules, _ = load_rule_set([write(tmp_path, GOOD)])
    assert rules[-1].id == "ORG101" and rules[-1].file.endswith("acme.toml")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace("schema = 1", "schema = 1\n[oops"), "not valid TOML"),
        (
            lambda t: t.replace('since = "1.0.0"', 'since = "1.0.0"\nseverty = "error"'),
            "rule[0] (ORG101): unknown key 'severty' (did you mean 'severity'?)",
        ),
        (
            lambda t: t.replace("gpu.name not matches", "gpu.nam not matches"),
            "when.all[1]: unknown fact 'gpu.nam' (did you mean 'gpu.name'?)",
        ),
        (lambda t: t.replace("/H100/", "/H100(/"), "when.all[1]: bad regular expression"),
        (
            lambda t: t.replace(
                '"NVIDIA A100-SXM4-80GB"', '"NVIDIA A100", "driver.version" = 550.54'
            ),
            "write version-like values as strings",
        ),
        (lambda t: t.replace('since = "1.0.0"', "since = 1.0"), "since: write it as a string"),
        (
            lambda t: t.replace('fix = "Submit to the h100 partition."\n', ""),
            "fix: an error must say how to fix it",
        ),
        (
            lambda t: t.replace('category = "config"', 'category = "confg"'),
            "(did you mean 'config'?)",
        ),
        (lambda t: t.replace('severity = "error"', 'severity = "fatal"'), "severity: 'fatal'"),
        (
            lambda t: t.replace('name = "cluster-needs-h100"', 'name = "Cluster_Needs"'),
            "kebab-case",
        ),
        (
            lambda t: t.replace("examples.clear = [", "examples.clear = []\nx = ["),
            "unknown key 'x'",
        ),
        (lambda t: t.replace('id = "ORG101"\n', ""), "missing required key 'id'"),
        (
            lambda t: t.replace('since = "1.0.0"', 'since = "1.0.0"\nblocks = ["te-fp9"]'),
            "unknown execution path 'te-fp9'",
        ),
        (lambda t: t.replace("{gpu.name} is", "{gpu.nam} is"), "summary: unknown fact '{gpu.nam}'"),
        (lambda t: t + t[t.index("[[rule]]") :], "id 'ORG101' is already used"),
        (lambda t: t.replace("examples.clear", "examples.clearly"), "unknown key 'clearly'"),
        (
            lambda t: t.replace('since = "1.0.0"', 'since = "1.0.0"\ngeneric = "yes"'),
            "generic: expected true or false, got 'yes'",
        ),
        (
            lambda t: t.replace('since = "1.0.0"', 'since = "1.0.0"\ngeneric = true').replace(
                "'gpus.count > 0'", "'smoke.error_text matches /boom/'"
            ),
            "generic: an error signature cannot step back for itself",
        ),
    ],
)
def test_malformed_rule_files_name_the_place(
    tmp_path: Path, change: Callable[[str], str], message: str
) -> None:
    directory = write(tmp_path, change(GOOD))
    with pytest.raises(RuleFileError) as caught:
        load_rule_set([directory])
    text = str(caught.value)
    assert "acme.toml" in text and message in text, text
    assert "\n" not in text


def test_a_directory_that_is_not_there_or_has_no_rules(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    rules, _ = load_rule_set([empty])  # no files: nothing added, no error
    assert all(r.id.startswith("TED") for r in rules)
    with pytest.raises(RuleFileError, match="not a directory"):
        load_rule_set([tmp_path / "missing"])


def test_wrong_schema_version(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("schema = 1", "schema = 2")) / "acme.toml"
    with pytest.raises(RuleFileError, match="schema: expected 1, got 2"):
        load_rule_file(path)


def test_cli_reports_a_bad_rule_file_in_one_line_with_exit_2(tmp_path: Path) -> None:
    directory = write(tmp_path, GOOD.replace("gpu.name not matches", "gpu.nam not matches"))
    for command in (["check"], ["rules"], ["explain", "ORG101"]):
        result = subprocess.run(
            [sys.executable, "-m", "te_doctor", *command, "--rules-dir", str(directory)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert "acme.toml: rule[0] (ORG101): when.all[1]: unknown fact 'gpu.nam'" in result.stderr
