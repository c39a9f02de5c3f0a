"""``te-doctor fleet --format prometheus``: the Prometheus text format, as node-exporter's
textfile collector reads it (no timestamps; one HELP and TYPE per metric; all gauges).

Per node: healthy, FP8 viable, the recommended path (a label), findings by severity, and an
info metric with te-doctor's version and the verdict; per fleet: nodes by verdict, the gate,
reports set aside and tasks that never reported. Nodes that were not probed have only
``healthy`` and ``info``: their other values are unknown, so they are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from te_doctor.fleet.aggregate import Fleet
from te_doctor.fleet.node import VERDICTS

PREFIX = "te_doctor_"
SEVERITIES = ("error", "warning", "info")
#: Every verdict a node can have, so that a count of zero is a sample, not a gap.
ALL_VERDICTS = ("pass", "fail", *(word for word in VERDICTS.values() if word))

Labels = Mapping[str, str]


@dataclass(slots=True)
class Metric:
    """One metric family: its name (without the prefix), help text and samples."""

    name: str
    help: str
    samples: list[tuple[Labels, float]] = field(default_factory=list)

    def add(self, value: float, **labels: str) -> None:
        self.samples.append((labels, value))


def fleet_prometheus(fleet: Fleet) -> str:
    """The fleet as Prometheus gauges, ready for ``--output DIR/te_doctor.prom``."""
    healthy = Metric("node_healthy", "1 when the node passed te-doctor's gate, else 0.")
    fp8 = Metric("node_fp8_viable", "1 when an FP8 execution path is viable on the node.")
    path = Metric(
        "node_recommended_path_info",
        "The execution path te-doctor recommends on the node (path label; none: nothing runs).",
    )
    findings = Metric("node_findings", "Findings that fired on the node, by severity.")
    info = Metric("node_info", "The te-doctor version that judged the node, and its verdict.")
    for node in fleet.nodes:
        healthy.add(int(node.passed), node=node.name)
        info.add(1, node=node.name, te_doctor_version=fleet.te_doctor_version, verdict=node.verdict)
        if node.state != "ok":
            continue
        fp8.add(int(node.fp8_viable), node=node.name)
        path.add(1, node=node.name, path=node.recommended or "none")
        for severity in SEVERITIES:
            findings.add(node.severities.get(severity, 0), node=node.name, severity=severity)
    nodes = Metric("fleet_nodes", "Nodes by te-doctor verdict (pass, fail, timed out, ...).")
    for verdict in ALL_VERDICTS:
        nodes.add(len(fleet.by_verdict.get(verdict, ())), verdict=verdict)
    gate = Metric("fleet_gate_passed", "1 when the fleet passed te-doctor's gate, else 0.")
    gate.add(int(fleet.gate.passed))
    aside = Metric("fleet_reports_set_aside", "Report files that could not be used.")
    aside.add(len(fleet.skipped))
    missing = Metric("fleet_missing_reports", "Launched tasks or expected nodes with no report.")
    missing.add(len(fleet.missing))
    return render([healthy, fp8, path, findings, info, nodes, gate, aside, missing])


def render(metrics: Sequence[Metric]) -> str:
    """The text format: ``# HELP``, ``# TYPE ... gauge``, then the samples, per metric."""
    lines: list[str] = []
    for metric in metrics:
        name = PREFIX + metric.name
        lines += [f"# HELP {name} {escape_help(metric.help)}", f"# TYPE {name} gauge"]
        lines += [f"{name}{_labels(labels)} {_number(value)}" for labels, value in metric.samples]
    return "\n".join(lines) + "\n"


def escape_label(value: str) -> str:
    """A label value's escapes: backslash, double quote and line feed."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    """A HELP text's escapes: backslash and line feed."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{key}="{escape_label(v)}"' for key, v in labels.items()) + "}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
