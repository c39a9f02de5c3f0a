"""``te-doctor fleet --format prometheus``, read back by a strict parser of the Prometheus text
format: metric and label names, label escaping, one HELP and one TYPE per metric, and values
that match the fleet."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from te_doctor.check.pipeline import load_rule_set
from te_doctor.fleet.aggregate import aggregate
from te_doctor.fleet.node_report import NodeIdentity
from te_doctor.fleet.reading import report_files
from te_doctor.fleet.sample import node_report, write_fleet
from te_doctor.render.fleet_prometheus import fleet_prometheus

FIXTURES = Path(__file__).parent / "fixtures"
H100 = FIXTURES / "h100-cuda12-te-ok.json"
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}


class FormatError(ValueError):
    """The text is not valid Prometheus text format (line number and why)."""


@dataclass
class Family:
    help: str | None = None
    type: str | None = None
    samples: dict[tuple[tuple[str, str], ...], float] = field(default_factory=dict)


def parse(text: str) -> dict[str, Family]:
    """Families by name; raises ``FormatError`` on anything the format does not allow here."""
    if not text.endswith("\n"):
        raise FormatError("the text does not end with a line feed")
    families: dict[str, Family] = {}
    current = ""
    for line_no, line in enumerate(text.splitlines(), 1):
        where = f"line {line_no}"
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) < 3 or parts[1] not in ("HELP", "TYPE"):
                raise FormatError(f"{where}: a comment te-doctor should not write: {line!r}")
            kind, name = parts[1], parts[2]
            if not METRIC_NAME.fullmatch(name):
                raise FormatError(f"{where}: bad metric name {name!r}")
            family = families.setdefault(name, Family())
            if family.samples:
                raise FormatError(f"{where}: {kind} for {name} after its samples")
            if getattr(family, kind.lower()) is not None:
                raise FormatError(f"{where}: a second {kind} for {name}")
            value = parts[3] if len(parts) == 4 else ""
            if kind == "TYPE" and value not in TYPES:
                raise FormatError(f"{where}: unknown type {value!r}")
            if kind == "HELP":
                value = _unescape_help(value, where)
            setattr(family, kind.lower(), value)
            current = name
            continue
        name, labels, number = _sample(line, where)
        if name != current or name not in families:
            raise FormatError(f"{where}: sample of {name} outside its HELP/TYPE block")
        if labels in families[name].samples:
            raise FormatError(f"{where}: the series {name}{dict(labels)} appears twice")
        families[name].samples[labels] = number
    for name, family in families.items():
        if family.help is None or family.type is None:
            raise FormatError(f"{name}: HELP or TYPE missing")
    return families


def _sample(line: str, where: str) -> tuple[str, tuple[tuple[str, str], ...], float]:
    found = METRIC_NAME.match(line)
    if found is None:
        raise FormatError(f"{where}: no metric name: {line!r}")
    name, rest = found.group(), line[found.end() :]
    labels: list[tuple[str, str]] = []
    if rest.startswith("{"):
        rest = rest[1:]
        while not rest.startswith("}"):
            label = LABEL_NAME.match(rest)
            if label is None or rest[label.end() : label.end() + 2] != '="':
                raise FormatError(f"{where}: bad label in {line!r}")
            rest = rest[label.end() + 2 :]
            value, rest = _label_value(rest, where)
            labels.append((label.group(), value))
            if rest.startswith(","):
                rest = rest[1:]
            elif not rest.startswith("}"):
                raise FormatError(f"{where}: expected , or }} in {line!r}")
        rest = rest[1:]
        if len({key for key, _ in labels}) != len(labels):
            raise FormatError(f"{where}: a label given twice")
    parts = rest.split(" ")
    if len(parts) != 2 or parts[0] != "":
        raise FormatError(f"{where}: expected one space and a value (no timestamp): {line!r}")
    return name, tuple(sorted(labels)), float(parts[1])


def _label_value(rest: str, where: str) -> tuple[str, str]:
    """The escaped value up to its closing quote, unescaped, and what follows it."""
    chars: list[str] = []
    index = 0
    while index < len(rest):
        char = rest[index]
        if char == '"':
            return "".join(chars), rest[index + 1 :]
        if char == "\\":
            escaped = rest[index + 1 : index + 2]
            if escaped not in ESCAPES:
                raise FormatError(f"{where}: bad escape \\{escaped} in a label value")
            chars.append(ESCAPES[escaped])
            index += 2
            continue
        if char == "\n":
            raise FormatError(f"{where}: a raw line feed in a label value")
        chars.append(char)
        index += 1
    raise FormatError(f"{where}: unterminated label value")


def _unescape_help(text: str, where: str) -> str:
    """HELP text allows two escapes: a backslash and a line feed."""
    chars: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "\\":
            escaped = text[index + 1 : index + 2]
            if escaped not in ("\\", "n"):
                raise FormatError(f"{where}: bad escape \\{escaped} in HELP")
            chars.append(ESCAPES[escaped])
            index += 2
        else:
            chars.append(text[index])
            index += 1
    return "".join(chars)


def one_fleet(tmp_path: Path) -> Path:
    """Four H100 nodes (every second one with an old driver) and one that timed out."""
    write_fleet(H100, tmp_path, 4, old_driver_every=2)
    odd = NodeIdentity('rack "7"\\gpu\nnode', "4242", "9")
    report = node_report(odd, {}, status="timed-out")
    (tmp_path / odd.file_name()).write_text(json.dumps(report), encoding="utf-8")
    return tmp_path


def series(families: dict[str, Family], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return families[f"te_doctor_{name}"].samples


def test_every_metric_parses_with_one_help_and_type(tmp_path: Path) -> None:
    rules, paths = load_rule_set()
    fleet = aggregate(report_files([one_fleet(tmp_path)]), rules, paths)
    families = parse(fleet_prometheus(fleet))
    assert set(families) == {
        f"te_doctor_{name}"
        for name in (
            "node_healthy",
            "node_fp8_viable",
            "node_recommended_path_info",
            "node_findings",
            "node_info",
            "fleet_nodes",
            "fleet_gate_passed",
            "fleet_reports_set_aside",
            "fleet_missing_reports",
        )
    }
    assert all(f.type == "gauge" and f.help for f in families.values())
    odd = 'rack "7"\\gpu\nnode'  # label escaping: the name comes back as it was
    assert series(families, "node_healthy")[(("node", odd),)] == 0
    assert series(families, "node_healthy")[(("node", "node00000"),)] == 1
    assert (
        series(families, "node_info")[
            (
                ("node", odd),
                ("te_doctor_version", fleet.te_doctor_version),
                ("verdict", "timed out"),
            )
        ]
        == 1
    )
    # A node that was not probed has no FP8, path or finding values (unknown is not 0).
    assert all(("node", odd) not in key for key in series(families, "node_fp8_viable"))
    assert series(families, "node_fp8_viable")[(("node", "node00001"),)] == 1
    path = series(families, "node_recommended_path_info")
    assert path[(("node", "node00002"), ("path", "te-fp8-current"))] == 1
    findings = series(families, "node_findings")
    old_driver = next(n for n in fleet.nodes if n.name == "node00001")
    assert old_driver.severities.get("warning", 0) >= 1
    for severity in ("error", "warning", "info"):
        key = (("node", "node00001"), ("severity", severity))
        assert findings[key] == old_driver.severities.get(severity, 0)
    assert series(families, "fleet_nodes") == {
        (("verdict", "pass"),): 4,
        (("verdict", "fail"),): 0,
        (("verdict", "timed out"),): 1,
        (("verdict", "probe failed"),): 0,
    }
    assert series(families, "fleet_gate_passed") == {(): 0}


def test_fp8_viable_and_severities_come_from_each_node(tmp_path: Path) -> None:
    """A T4 (no FP8) next to an H100, both as node reports and as check reports."""
    for name in ("t4.json", "h100-cuda12-te-ok.json"):
        snapshot = json.loads((FIXTURES / name).read_text())
        snapshot["meta"]["te_doctor_version"] = "0.1.0"
        identity = NodeIdentity(Path(name).stem, "1", "0")
        (tmp_path / identity.file_name()).write_text(json.dumps(node_report(identity, snapshot)))
    check = subprocess.run(
        [sys.executable, "-m", "te_doctor", "check", "--snapshot", str(FIXTURES / "t4.json")]
        + ["--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    (tmp_path / "t4-report.json").write_text(check.stdout)
    rules, paths = load_rule_set()
    fleet = aggregate(report_files([tmp_path]), rules, paths)
    families = parse(fleet_prometheus(fleet))
    viable = {dict(k)["node"]: v for k, v in series(families, "node_fp8_viable").items()}
    assert viable == {"t4": 0, "h100-cuda12-te-ok": 1, "t4-report": 0}
    errors = {
        dict(k)["node"]: v
        for k, v in series(families, "node_findings").items()
        if dict(k)["severity"] == "error"
    }
    # The node report and the node's own check report agree.
    assert errors["t4"] == errors["t4-report"] >= 1
    assert errors["h100-cuda12-te-ok"] == 0


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("# HELP te_doctor_x a\n# TYPE te_doctor_x gauge\n# HELP te_doctor_x b\n", "second HELP"),
        ("# TYPE te_doctor_x gauge\nte_doctor_x 1\n", "HELP or TYPE missing"),
        ('# HELP x a\n# TYPE x gauge\nx{a="b"c"} 1\n', "expected , or }"),
        ('# HELP x a\n# TYPE x gauge\nx{a="\\t"} 1\n', "bad escape"),
        ("# HELP 1x a\n", "bad metric name"),
        ("# HELP x a\\t\n", "bad escape"),
        ("# HELP x a\n# TYPE x gauge\nx 1 1700000000\n", "no timestamp"),
        ("# HELP x a\n# TYPE x gauge\nx 1\nx 2\n", "appears twice"),
        ("# HELP x a\n# TYPE x gauge\ny 1\n", "outside its HELP/TYPE block"),
        ("# HELP x a\n# TYPE x gauge\nx 1\n# HELP y b\n# TYPE y gauge\nx 2\n", "outside"),
    ],
)
def test_the_parser_rejects_what_prometheus_would(text: str, why: str) -> None:
    with pytest.raises(FormatError, match=re.escape(why)):
        parse(text)


def test_cli_writes_the_textfile_even_when_the_gate_fails(tmp_path: Path) -> None:
    reports = one_fleet(tmp_path / "reports")
    target = tmp_path / "te_doctor.prom"
    result = subprocess.run(
        [sys.executable, "-m", "te_doctor", "fleet", str(reports), "--format", "prometheus"]
        + ["--output", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1  # a node timed out: the gate fails, the metrics say so
    families = parse(target.read_text(encoding="utf-8"))
    assert series(families, "fleet_gate_passed") == {(): 0}


def test_escaping_round_trips_every_special_character(tmp_path: Path) -> None:
    rules, paths = load_rule_set()
    fleet = aggregate(report_files([one_fleet(tmp_path)]), rules, paths)
    for name in ("a\\b", 'say "hi"', "two\nlines", "\\n literally", 'end\\"'):
        renamed = replace(fleet, nodes=(replace(fleet.nodes[0], name=name),))
        healthy = series(parse(fleet_prometheus(renamed)), "node_healthy")
        assert list(healthy) == [(("node", name),)]
