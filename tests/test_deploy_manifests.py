"""The Kubernetes manifests under deploy/: the fields a te-doctor fleet sweep depends on, and
the DaemonSet's export of each node's metrics to node-exporter's textfile collector.

Each check collects problems instead of stopping at the first; the tests assert that the
shipped manifests have none, and ``test_checks_catch`` breaks one field of a copy at a time
to show that every check can fail. Not checked here: the Kubernetes API schemas themselves
(deploy/README.md says how to run kubernetes-validate for that).
"""

from __future__ import annotations

import copy
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from te_doctor.cli.fleet import aggregate as aggregate_command
from te_doctor.cli.fleet import node as node_command
from tests.command_lines import parse

ROOT = Path(__file__).parents[1]
DEPLOY = ROOT / "deploy"
Doc = dict[str, Any]

KNOWN_KINDS = {
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Pod"),
    ("batch/v1", "Job"),
    ("apps/v1", "DaemonSet"),
}
REPORTS = "/reports"
NODE_COMMAND = ["te-doctor", "fleet", "node", "--dir", REPORTS]
#: ``te-doctor fleet node``'s options, read from the click command itself: name -> takes a value.
NODE_OPTIONS = {
    name: not param.is_flag
    for param in node_command.params
    if isinstance(param, click.Option)
    for name in param.opts
    if name != "--dir"
}
#: Where the DaemonSet writes its metrics: node-exporter's textfile collector, a hostPath.
TEXTFILE = "/textfile"
GPU = "nvidia.com/gpu"
HOSTNAME = "kubernetes.io/hostname"
NODE_NAME_PATH = "spec.nodeName"
JOB_NAME_PATHS = {
    "metadata.labels['batch.kubernetes.io/job-name']",  # Kubernetes >= 1.27
    "metadata.labels['job-name']",  # the legacy label, still set
}
INDEX_PATH = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash"}
SEPARATORS = {";", "&&", "||", "|", "&"}


# -- loading ---------------------------------------------------------------------------------


def manifest_files() -> list[Path]:
    return sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")])


def load(path: Path) -> list[Doc]:
    with path.open(encoding="utf-8") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc is not None]


def documents() -> list[Doc]:
    return [doc for path in manifest_files() for doc in load(path)]


def one(kind: str) -> Doc:
    found = [doc for doc in documents() if doc.get("kind") == kind]
    assert len(found) == 1, f"expected one {kind} under deploy/, found {len(found)}"
    return found[0]


def pod_spec(doc: Doc) -> Doc:
    spec: Doc = doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]
    return spec


def pod_labels(doc: Doc) -> dict[str, str]:
    metadata = doc["metadata"] if doc["kind"] == "Pod" else doc["spec"]["template"]["metadata"]
    labels: dict[str, str] = metadata.get("labels") or {}
    return labels


def containers(spec: Doc) -> list[Doc]:
    return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


# -- commands --------------------------------------------------------------------------------


def argv(container: Doc) -> list[str]:
    return [
        str(part) for part in [*(container.get("command") or []), *(container.get("args") or [])]
    ]


def shell_script(container: Doc) -> str | None:
    """The script of a ``sh -c SCRIPT`` container, else None."""
    words = argv(container)
    if len(words) >= 3 and words[0] in SHELLS and words[1] == "-c":
        return words[2]
    return None


def shell_commands(script: str) -> list[list[str]]:
    """The simple commands of a one-line shell script, split at ``;``, ``&&``, ``|``..."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token in SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [command for command in commands if command]


def te_doctor_invocations(container: Doc) -> list[list[str]]:
    """Every te-doctor command line the container runs (a wrapper such as ``exec`` dropped)."""
    script = shell_script(container)
    commands = shell_commands(script) if script is not None else [argv(container)]
    found = []
    for command in commands:
        names = [Path(word).name for word in command]
        if "te-doctor" in names:
            found.append(command[names.index("te-doctor") :])
    return found


def command_problems(words: list[str]) -> list[str]:
    """What is wrong with one te-doctor command line: ``fleet node`` writing a report, or
    ``fleet REPORT... --format prometheus --output FILE`` exporting metrics."""
    where = shlex.join(words)
    if words[:2] == ["te-doctor", "fleet"] and words[2:3] != ["node"]:
        return export_problems(words)
    if words[: len(NODE_COMMAND)] != NODE_COMMAND:
        return [f"{where}: does not start with {shlex.join(NODE_COMMAND)}"]
    problems = []
    seen: dict[str, str] = {}
    rest = words[len(NODE_COMMAND) :]
    while rest:
        name, equals, value = rest.pop(0).partition("=")
        if name not in NODE_OPTIONS:
            problems.append(f"{where}: {name} is not an option of te-doctor fleet node here")
            continue
        if name in seen:
            problems.append(f"{where}: {name} given twice")
        if not NODE_OPTIONS[name]:
            if equals:
                problems.append(f"{where}: {name} takes no value")
        elif not equals:
            if not rest or rest[0].startswith("-"):
                problems.append(f"{where}: {name} needs a value")
                continue
            value = rest.pop(0)
        seen[name] = value
    timeout = seen.get("--timeout")
    if timeout is not None and not (timeout.isdigit() and int(timeout) > 0):
        problems.append(f"{where}: --timeout {timeout!r} is not a positive number of seconds")
    return problems


def export_problems(words: list[str]) -> list[str]:
    """A manifest aggregates only to export metrics: ``--format prometheus --output FILE``."""
    where = shlex.join(words)
    line = parse(words[2:], aggregate_command, where)
    sources, options, problems = line.arguments, line.options, line.problems
    if not sources:
        problems.append(f"{where}: names no report to read")
    if options.get("--format") != "prometheus":
        problems.append(f"{where}: aggregates without --format prometheus (only metrics here)")
    if not (options.get("--output") or options.get("-o")):
        problems.append(f"{where}: writes the metrics to stdout, not --output FILE")
    return problems


def node_timeout(words: list[str]) -> int | None:
    for index, word in enumerate(words):
        if word == "--timeout" and index + 1 < len(words) and words[index + 1].isdigit():
            return int(words[index + 1])
        if word.startswith("--timeout=") and word.partition("=")[2].isdigit():
            return int(word.partition("=")[2])
    return None


def loop_problems(container: Doc) -> list[str]:
    """A DaemonSet's container must run te-doctor in ``while true; do ...; sleep N; done``."""
    script = shell_script(container)
    if script is None:
        return [f"command {argv(container)} is not `/bin/sh -c SCRIPT`"]
    commands = shell_commands(script)
    if len(commands) < 3 or commands[0] != ["while", "true"] or commands[-1] != ["done"]:
        return [f"{script!r} is not `while true; do ...; done`"]
    body = [commands[1][1:] if commands[1][:1] == ["do"] else [], *commands[2:-1]]
    if commands[1][:1] != ["do"] or not body[0]:
        return [f"{script!r}: the loop has no `do COMMAND`"]
    problems = []
    if not any("te-doctor" in [Path(word).name for word in command] for command in body):
        problems.append(f"{script!r}: te-doctor does not run inside the loop")
    sleeps = [command for command in body if command[0] == "sleep"]
    if not any(len(c) == 2 and c[1].isdigit() and int(c[1]) > 0 for c in sleeps):
        problems.append(f"{script!r}: the loop does not sleep a positive number of seconds")
    return problems


# -- pod specs -------------------------------------------------------------------------------


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a non-empty Kubernetes LabelSelector selects these labels."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values") or []
        matched = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }.get(operator, False)
        if not matched:
            return False
    return True


def one_pod_per_node_problems(
    spec: Doc, own: Mapping[str, str], others: Mapping[str, str]
) -> list[str]:
    """A required anti-affinity, or a hard spread of maxSkew 1, over host names, on own pods."""
    terms = ((spec.get("affinity") or {}).get("podAntiAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or []
    spreads = [
        constraint
        for constraint in spec.get("topologySpreadConstraints") or []
        if constraint.get("maxSkew") == 1 and constraint.get("whenUnsatisfiable") == "DoNotSchedule"
    ]
    candidates = [*terms, *spreads]
    keyed = [term for term in candidates if term.get("topologyKey") == HOSTNAME]
    if not keyed:
        return ["no required podAntiAffinity or DoNotSchedule spread (maxSkew 1) on " + HOSTNAME]
    problems = []
    if not any(selects(term.get("labelSelector"), own) for term in keyed):
        problems.append(f"the one-pod-per-node constraint does not select the pod labels {own}")
    if any(selects(term.get("labelSelector"), others) for term in keyed):
        problems.append(f"the one-pod-per-node constraint also selects other pods {others}")
    return problems


def env_problems(container: Doc, expected: Mapping[str, Any]) -> list[str]:
    """``expected``: variable -> the fieldPaths it may come from, or None for a literal value."""
    entries = container.get("env") or []
    names = [entry.get("name") for entry in entries]
    problems = [f"env {name} is set twice" for name in set(names) if names.count(name) > 1]
    by_name = {entry.get("name"): entry for entry in entries}
    for name, paths in expected.items():
        entry = by_name.get(name)
        if entry is None:
            problems.append(f"env {name} is not set")
        elif paths is None:
            if not (isinstance(entry.get("value"), str) and entry["value"]) or "valueFrom" in entry:
                problems.append(f"env {name} should be a non-empty literal value: {entry}")
        else:
            field_path = ((entry.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
            if field_path not in paths:
                problems.append(f"env {name} comes from {field_path!r}, not one of {sorted(paths)}")
    return problems


def gpu_count(container: Doc) -> int:
    resources = container.get("resources") or {}
    limit: object = (resources.get("limits") or {}).get(GPU)
    if isinstance(limit, int) and not isinstance(limit, bool):
        return limit
    return int(limit) if isinstance(limit, str) and limit.isdigit() else 0


def gpu_pod_problems(doc: Doc, claim: str, env: Mapping[str, Any]) -> list[str]:
    """GPU nodes only, every GPU of them, the environment te-doctor reads, the report volume."""
    spec = pod_spec(doc)
    problems = []
    if (spec.get("nodeSelector") or {}).get("nvidia.com/gpu.present") != "true":
        problems.append('nodeSelector nvidia.com/gpu.present is not "true" (a string)')
    if not any(
        toleration.get("key") == GPU
        and toleration.get("operator") == "Exists"
        and toleration.get("effect") in (None, "NoSchedule")
        for toleration in spec.get("tolerations") or []
    ):
        problems.append(f"no toleration for {GPU} (operator Exists, effect NoSchedule)")
    runners = [c for c in containers(spec) if te_doctor_invocations(c)]
    if len(runners) != 1:
        return [*problems, f"{len(runners)} containers run te-doctor, not 1"]
    container = runners[0]
    if gpu_count(container) <= 0:
        problems.append(f"the te-doctor container's limits.{GPU} is not a positive integer")
    requested = ((container.get("resources") or {}).get("requests") or {}).get(GPU)
    if requested is not None and str(requested) != str(gpu_count(container)):
        problems.append(f"requests.{GPU} differs from limits.{GPU}")
    problems += env_problems(container, env)
    mounts = [m for m in container.get("volumeMounts") or [] if m.get("mountPath") == REPORTS]
    volumes = {volume.get("name"): volume for volume in spec.get("volumes") or []}
    if len(mounts) != 1:
        problems.append(f"{len(mounts)} volumeMounts at {REPORTS}, not 1")
    else:
        volume = volumes.get(mounts[0].get("name")) or {}
        claim_name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if claim_name != claim:
            problems.append(f"{REPORTS} is not backed by the claim {claim!r}: {volume}")
    return problems


# -- the workloads ---------------------------------------------------------------------------


def job_problems(job: Doc, claim: str, others: Mapping[str, str]) -> list[str]:
    spec = job["spec"]
    problems = []
    if spec.get("completionMode") != "Indexed":
        problems.append("completionMode is not Indexed")
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    if not (isinstance(completions, int) and completions > 0 and completions == parallelism):
        problems.append(f"completions {completions} and parallelism {parallelism} differ")
    if spec.get("backoffLimit") != 0:
        problems.append(f"backoffLimit is {spec.get('backoffLimit')}, not 0")
    deadline = spec.get("activeDeadlineSeconds")
    if not (isinstance(deadline, int) and deadline > 0):
        problems.append("activeDeadlineSeconds is not set")
    if not isinstance(spec.get("ttlSecondsAfterFinished"), int):
        problems.append("ttlSecondsAfterFinished is not set")
    template = pod_spec(job)
    if template.get("restartPolicy") != "Never":
        problems.append(f"restartPolicy is {template.get('restartPolicy')}, not Never")
    problems += one_pod_per_node_problems(template, pod_labels(job), others)
    problems += gpu_pod_problems(
        job,
        claim,
        {
            "TE_DOCTOR_NODE_NAME": {NODE_NAME_PATH},
            "TE_DOCTOR_JOB_ID": JOB_NAME_PATHS,
            "TE_DOCTOR_TASK_ID": {INDEX_PATH},
        },
    )
    for container in containers(template):
        for words in te_doctor_invocations(container):
            timeout = node_timeout(words)
            if isinstance(deadline, int) and timeout is not None and timeout >= deadline:
                problems.append(f"--timeout {timeout} leaves no time in the Job's deadline")
    return problems


def daemonset_problems(daemonset: Doc, claim: str) -> list[str]:
    spec = daemonset["spec"]
    problems = []
    labels = pod_labels(daemonset)
    if not labels or (spec.get("selector") or {}).get("matchLabels") != labels:
        problems.append(f"selector.matchLabels is not the template's labels {labels}")
    if pod_spec(daemonset).get("restartPolicy") not in (None, "Always"):
        problems.append("restartPolicy is not Always")
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type") != "RollingUpdate":
        problems.append("updateStrategy is not RollingUpdate")
    if (strategy.get("rollingUpdate") or {}).get("maxSurge") not in (None, 0, "0", "0%"):
        problems.append("maxSurge is not 0: a surge pod would wait for the old pod's GPUs")
    problems += gpu_pod_problems(
        daemonset,
        claim,
        {
            "TE_DOCTOR_NODE_NAME": {NODE_NAME_PATH},
            # A DaemonSet's pods have no job-name label nor completion index to refer to.
            "TE_DOCTOR_JOB_ID": None,
            "TE_DOCTOR_TASK_ID": None,
        },
    )
    problems += [
        problem
        for container in containers(pod_spec(daemonset))
        if te_doctor_invocations(container)
        for problem in loop_problems(container)
    ]
    return problems + textfile_problems(daemonset)


def textfile_problems(daemonset: Doc) -> list[str]:
    """After each check the loop exports this node's own report as metrics into a hostPath
    directory (node-exporter's textfile collector), under a temporary name renamed to *.prom."""
    spec = pod_spec(daemonset)
    runners = [c for c in containers(spec) if te_doctor_invocations(c)]
    if len(runners) != 1:
        return [f"{len(runners)} containers run te-doctor, not 1"]
    container = runners[0]
    exports = [w for w in te_doctor_invocations(container) if w[2:3] != ["node"]]
    if len(exports) != 1:
        return [f"{len(exports)} `te-doctor fleet REPORT --format prometheus` exports, not 1"]
    line = parse(exports[0][2:], aggregate_command)
    sources, options = line.arguments, line.options
    env = {e.get("name"): e.get("value") for e in container.get("env") or []}
    own = f"{REPORTS}/${{TE_DOCTOR_NODE_NAME}}-{env.get('TE_DOCTOR_JOB_ID')}-"
    own += f"{env.get('TE_DOCTOR_TASK_ID')}.json"
    problems = [] if sources == [own] else [f"the export reads {sources}, not this node's {own}"]
    output = options.get("--output") or options.get("-o") or ""
    directory, _, name = output.rpartition("/")
    mounts = {m.get("mountPath"): m.get("name") for m in container.get("volumeMounts") or []}
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    if "hostPath" not in volumes.get(mounts.get(directory), {}):
        problems.append(f"--output {output}: {directory or '.'} is not a hostPath volume mount")
    if name.endswith(".prom"):
        problems.append(f"--output {output}: node-exporter could read it half-written")
    script = shell_script(container) or ""
    commands = shell_commands(script)
    after = commands[next(i for i, c in enumerate(commands) if exports[0][-1] in c) + 1 :]
    renamed = [c for c in after if c[:1] == ["mv"] and output in c]
    if not (renamed and renamed[0][-1].endswith(".prom") and renamed[0][-1].startswith(directory)):
        problems.append(f"{output} is not then renamed to a *.prom file beside it")
    return problems


def report_subpath(doc: Doc) -> str | None:
    for container in containers(pod_spec(doc)):
        for mount in container.get("volumeMounts") or []:
            if mount.get("mountPath") == REPORTS:
                subpath: str | None = mount.get("subPath")
                return subpath
    return None


# -- tests -----------------------------------------------------------------------------------


def test_every_manifest_parses_to_known_kinds() -> None:
    files = manifest_files()
    assert files, "no manifests under deploy/"
    for path in files:
        docs = load(path)
        assert docs, f"{path} holds no document"
        for doc in docs:
            assert isinstance(doc, dict), f"{path}: a document is not a mapping"
            assert (doc.get("apiVersion"), doc.get("kind")) in KNOWN_KINDS, path
            assert doc.get("metadata", {}).get("name"), f"{path}: {doc['kind']} has no name"
    names = [(doc["kind"], doc["metadata"]["name"]) for doc in documents()]
    assert len(names) == len(set(names)), f"duplicate objects: {names}"


def test_string_valued_maps_hold_strings() -> None:
    """Labels, annotations, nodeSelector and env values are strings to the API: `true`, `0`
    unquoted in YAML are rejected."""
    for doc in documents():
        metadatas = [doc["metadata"]]
        if doc["kind"] != "Pod" and "template" in doc.get("spec", {}):
            metadatas.append(doc["spec"]["template"].get("metadata") or {})
        maps = [m.get(key) or {} for m in metadatas for key in ("labels", "annotations")]
        if doc["kind"] != "PersistentVolumeClaim":
            spec = pod_spec(doc)
            maps.append(spec.get("nodeSelector") or {})
            maps += [
                {e["name"]: e["value"] for e in c.get("env") or [] if "value" in e}
                for c in containers(spec)
            ]
        for mapping in maps:
            for key, value in mapping.items():
                assert isinstance(value, str), f"{doc['metadata']['name']}: {key}: {value!r}"


def test_reports_claim_is_read_write_many() -> None:
    claim = one("PersistentVolumeClaim")
    assert claim["metadata"]["name"] == "te-doctor-reports"
    assert "ReadWriteMany" in claim["spec"]["accessModes"]
    assert claim["spec"]["resources"]["requests"]["storage"]


def test_job_sweeps_each_gpu_node_once() -> None:
    claim = one("PersistentVolumeClaim")["metadata"]["name"]
    assert job_problems(one("Job"), claim, pod_labels(one("DaemonSet"))) == []


def test_daemonset_rechecks_every_gpu_node() -> None:
    claim = one("PersistentVolumeClaim")["metadata"]["name"]
    assert daemonset_problems(one("DaemonSet"), claim) == []


def test_te_doctor_command_lines_follow_the_node_interface() -> None:
    invocations = {
        doc["kind"]: [
            words for c in containers(pod_spec(doc)) for words in te_doctor_invocations(c)
        ]
        for doc in documents()
        if doc["kind"] != "PersistentVolumeClaim"
    }
    assert invocations["Job"], "the Job runs no te-doctor"
    assert invocations["DaemonSet"], "the DaemonSet runs no te-doctor"
    for words in [words for found in invocations.values() for words in found]:
        assert command_problems(words) == []
    assert any("--smoke" in words for words in invocations["Job"]), "the sweep skips --smoke"


def test_reader_pod_sees_both_report_folders() -> None:
    claim = one("PersistentVolumeClaim")["metadata"]["name"]
    reader = one("Pod")
    spec = pod_spec(reader)
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    mounts = [m for c in containers(spec) for m in c.get("volumeMounts") or []]
    assert [m for m in mounts if m.get("mountPath") == REPORTS and "subPath" not in m]
    for mount in mounts:
        assert volumes[mount["name"]]["persistentVolumeClaim"]["claimName"] == claim
    assert all(gpu_count(c) == 0 for c in containers(spec)), "the reader needs no GPU"
    # The Job and the DaemonSet write to separate folders, which the docs aggregate.
    folders = [report_subpath(one("Job")), report_subpath(one("DaemonSet"))]
    assert all(folders) and len(set(folders)) == 2, folders
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    for folder in folders:
        assert f"te-doctor fleet {REPORTS}/{folder}" in readme


def test_selector_evaluation() -> None:
    labels = {"app": "te-doctor", "tier": "sweep"}
    assert selects({"matchLabels": {"app": "te-doctor"}}, labels)
    assert not selects({"matchLabels": {"app": "other"}}, labels)
    assert not selects({}, labels)
    assert selects({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, labels)
    expression = {"key": "tier", "operator": "NotIn", "values": ["sweep"]}
    assert not selects({"matchExpressions": [expression]}, labels)


class _Delete:
    def __repr__(self) -> str:
        return "DELETE"


DELETE = _Delete()
POD: tuple[str | int, ...] = ("spec", "template", "spec")
CONTAINER = (*POD, "containers", 0)
ANTI_AFFINITY = (
    *POD,
    "affinity",
    "podAntiAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    0,
)
COMPONENT = "app.kubernetes.io/component"
LOOP = pod_spec(one("DaemonSet"))["containers"][0]["command"][2]
BREAKAGES: list[tuple[str, tuple[str | int, ...], Any]] = [
    ("Job", ("spec", "completionMode"), "NonIndexed"),
    ("Job", ("spec", "parallelism"), 3),
    ("Job", ("spec", "backoffLimit"), 6),
    ("Job", ("spec", "activeDeadlineSeconds"), DELETE),
    ("Job", ("spec", "activeDeadlineSeconds"), 120),  # shorter than --timeout
    ("Job", ("spec", "ttlSecondsAfterFinished"), DELETE),
    ("Job", (*POD, "restartPolicy"), "OnFailure"),
    ("Job", (*POD, "affinity"), DELETE),
    ("Job", (*ANTI_AFFINITY, "topologyKey"), "topology.kubernetes.io/zone"),
    ("Job", ("spec", "template", "metadata", "labels", COMPONENT), "x"),
    # Selecting the DaemonSet's pods too would keep the sweep off the nodes they run on.
    ("Job", (*ANTI_AFFINITY, "labelSelector", "matchLabels", COMPONENT), DELETE),
    ("Job", (*POD, "nodeSelector", "nvidia.com/gpu.present"), True),
    ("Job", (*POD, "tolerations"), DELETE),
    ("Job", (*CONTAINER, "resources", "limits", GPU), 0),
    ("Job", (*CONTAINER, "env", 0, "valueFrom", "fieldRef", "fieldPath"), "metadata.name"),
    ("Job", (*CONTAINER, "env", 1, "valueFrom", "fieldRef", "fieldPath"), "metadata.uid"),
    ("Job", (*CONTAINER, "env", 2), DELETE),
    ("Job", (*CONTAINER, "volumeMounts", 0, "mountPath"), "/tmp"),
    ("Job", (*POD, "volumes", 0, "persistentVolumeClaim", "claimName"), "x"),
    ("Job", (*CONTAINER, "command", 4), "/tmp/reports"),
    ("Job", (*CONTAINER, "args"), ["--verbose"]),
    ("DaemonSet", (*POD, "restartPolicy"), "Never"),
    ("DaemonSet", ("spec", "selector", "matchLabels", COMPONENT), "x"),
    ("DaemonSet", ("spec", "updateStrategy", "rollingUpdate", "maxSurge"), 1),
    ("DaemonSet", ("spec", "updateStrategy", "type"), "OnDelete"),
    ("DaemonSet", (*CONTAINER, "command", 2), "te-doctor fleet node --dir /reports"),
    ("DaemonSet", (*CONTAINER, "command", 2), "while true; do te-doctor fleet node; done"),
    ("DaemonSet", (*CONTAINER, "command", 2), "while true; do sleep 60; done"),
    ("DaemonSet", (*CONTAINER, "resources", "limits", GPU), DELETE),
    (
        "DaemonSet",
        (*CONTAINER, "env", 1, "valueFrom"),
        {"fieldRef": {"fieldPath": "metadata.name"}},
    ),
    ("DaemonSet", (*POD, "nodeSelector"), DELETE),
    ("DaemonSet", (*POD, "volumes", 1), {"name": "textfile", "emptyDir": {}}),
    ("DaemonSet", (*CONTAINER, "volumeMounts", 1), DELETE),
    ("DaemonSet", (*CONTAINER, "command", 2), LOOP.replace(" --format prometheus", "")),
    ("DaemonSet", (*CONTAINER, "command", 2), LOOP.replace("--format prometheus", "--format yaml")),
    ("DaemonSet", (*CONTAINER, "command", 2), LOOP.replace("${TE_DOCTOR_NODE_NAME}", "node-1")),
    ("DaemonSet", (*CONTAINER, "command", 2), LOOP.replace(".prom.tmp", ".prom")),
    ("DaemonSet", (*CONTAINER, "command", 2), LOOP.replace("mv -f", "cp")),
    ("DaemonSet", (*CONTAINER, "command", 2), LOOP.replace("--output", "--outfile")),
]


def broken(doc: Doc, path: tuple[str | int, ...], value: Any) -> Doc:
    result = copy.deepcopy(doc)
    parent: Any = result
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return result


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    BREAKAGES,
    ids=[f"{kind}:{path[-1]}={value!r}" for kind, path, value in BREAKAGES],
)
def test_checks_catch(kind: str, path: tuple[str | int, ...], value: Any) -> None:
    """Each breakage of a shipped manifest is found by the checks above."""
    claim = one("PersistentVolumeClaim")["metadata"]["name"]
    doc = broken(one(kind), path, value)
    if kind == "Job":
        problems = job_problems(doc, claim, pod_labels(one("DaemonSet")))
    else:
        problems = daemonset_problems(doc, claim)
    problems += [
        problem
        for container in containers(pod_spec(doc))
        for words in te_doctor_invocations(container)
        for problem in command_problems(words)
    ]
    assert problems, f"{kind} with {'.'.join(map(str, path))} = {value!r} passed the checks"


@pytest.mark.parametrize(
    "line",
    [
        "te-doctor fleet /reports",
        "te-doctor fleet /reports --format prometheus",
        "te-doctor fleet --format prometheus -o /textfile/x.prom.tmp",
        "te-doctor fleet /reports --format=prom -o /textfile/x.prom.tmp",
        "te-doctor fleet node --dir /reports --timeout",
        "te-doctor fleet node --dir /reports --timeout -5",
        "te-doctor fleet node --dir /reports --smoke --smoke",
        "te-doctor fleet node --dir /reports --smoke=yes",
        "te-doctor probe --smoke",
    ],
)
def test_command_check_rejects(line: str) -> None:
    assert command_problems(shlex.split(line))


def test_shell_commands_split_a_loop() -> None:
    script = "while true; do exec te-doctor fleet node --dir /reports && sleep 5; done"
    assert shell_commands(script) == [
        ["while", "true"],
        ["do", "exec", "te-doctor", "fleet", "node", "--dir", "/reports"],
        ["sleep", "5"],
        ["done"],
    ]
    container: Doc = {"command": ["/bin/sh", "-c", script]}
    assert te_doctor_invocations(container) == [["te-doctor", "fleet", "node", "--dir", "/reports"]]
    empty_loop: Doc = {"command": ["sh", "-c", "while true; do; done"]}
    assert re.search(r"no `do COMMAND`", loop_problems(empty_loop)[0])
