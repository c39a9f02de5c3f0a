"""What the property-based fuzzing runs: each target, the inputs hypothesis builds for it, and the
exceptions it may raise (te-doctor's own error types; a triage parser may raise nothing).

Inputs are generated (text from a bait alphabet of the characters and words the parsers look
for) and mutated (real snapshots, rule files, condition leaves and pasted reports with spans
deleted, duplicated, replaced or cut off; parsed JSON with any node replaced). Shared by
``tests/test_fuzz.py`` (a short, derandomized CI profile) and ``benchmarks/fuzz.py`` (10,000
examples per target).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from te_doctor.engine.condition_parser import ConditionError, parse_leaf
from te_doctor.engine.conditions import Leaf
from te_doctor.engine.error_capture import capture_errors
from te_doctor.engine.rule_examples import BASELINE
from te_doctor.engine.rule_fields import parse_rule
from te_doctor.engine.rules import builtin_rules_dir, load_rule_text
from te_doctor.errors import TeDoctorError
from te_doctor.snapshot.file import from_json_data, loads
from te_doctor.triage import parsers
from te_doctor.triage.parse_common import prepare
from te_doctor.triage.parsers import parse_report

ROOT = Path(__file__).parents[1]
PROFILES: dict[str, dict[str, Any]] = {
    # CI: short and the same every run (no example database, derandomized).
    "ci": {"max_examples": 40, "derandomize": True},
    "dev": {"max_examples": 300},
    # benchmarks/fuzz.py: at least 10,000 examples per target.
    "fuzz": {"max_examples": 10_000},
}
#: Characters and words the parsers key on, so generated text reaches their branches.
BAIT = (
    "\n",
    "\r\n",
    "\t",
    " ",
    "|",
    ":",
    "=",
    "==",
    ",",
    ".",
    "/",
    "\\",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    '"',
    "'",
    "`",
    "#",
    "-",
    "+",
    "*",
    ">",
    "<",
    "0",
    "1",
    "8",
    "9",
    "12.4",
    "2.7.0",
    "+cu128",
    "sm_90",
    "9.0",
    "\x00",
    "\ufeff",
    "é",
    "\u2028",
    "GPU 0: ",
    "NVIDIA H100",
    "Driver Version: ",
    "CUDA Version: ",
    "NVIDIA-SMI ",
    "PyTorch version: ",
    "Is CUDA available: ",
    "cuDNN version: ",
    "[pip3] ",
    "torch",
    "transformer-engine",
    "transformer_engine",
    "Traceback (most recent call last):\n",
    '  File "x.py", line 1, in f\n',
    "RuntimeError: ",
    "ImportError: ",
    "undefined symbol: _ZN3c10",
    ".so",
    "libcudnn.so.9",
    "CUDNN_STATUS_",
    "```",
    "<details>",
    "</details>",
    "> ",
    "- ",
    "Name: ",
    "Version: ",
    "schema_version",
    "te-doctor",
    "Attached GPUs",
    "Product Name",
    " : ",
    "MIG",
    "N/A",
    "Cuda compilation tools, release ",
    "V12.4.131",
    "conda",
    "pip",
    "Package",
    "----",
)
OPERATORS = (
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "in",
    "not in",
    "satisfies",
    "matches",
    "not matches",
    "contains",
    "not contains",
    "is missing",
    "is present",
    "is unknown",
)


def register_profiles() -> None:
    """The hypothesis profiles above, with no deadline (timing is the linear-time tests' job)."""
    for name, options in PROFILES.items():
        settings.register_profile(name, deadline=None, print_blob=True, **options)


def bait_text(max_size: int = 2000) -> st.SearchStrategy[str]:
    """Text from bait words and any characters."""
    piece = st.one_of(st.sampled_from(BAIT), st.text(max_size=8))
    return st.lists(piece, max_size=max_size // 8).map("".join)


@st.composite
def mutated(draw: st.DrawFn, samples: tuple[str, ...]) -> str:
    """A sample with up to six edits: a span deleted, duplicated, replaced by bait, or the
    text cut off (a truncated paste or file)."""
    text = draw(st.sampled_from(samples))
    for _ in range(draw(st.integers(0, 6))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 200)))
        edit = draw(st.sampled_from(("delete", "duplicate", "replace", "insert", "cut")))
        if edit == "delete":
            text = text[:start] + text[end:]
        elif edit == "duplicate":
            text = text[:end] + text[start:end] * draw(st.integers(1, 5)) + text[end:]
        elif edit in ("replace", "insert"):
            new = draw(bait_text(64))
            text = text[:start] + new + text[end if edit == "replace" else start :]
        else:
            text = text[:start]
    return text


def samples(folder: Path, pattern: str, limit: int = 6000) -> tuple[str, ...]:
    """The files under ``folder`` matching ``pattern``, each cut to ``limit`` characters."""
    return tuple(
        p.read_text(encoding="utf-8", errors="replace")[:limit]
        for p in sorted(folder.glob(pattern))
    )


@cache
def reports() -> tuple[str, ...]:
    return samples(ROOT / "tests" / "data" / "triage", "*.txt")


@cache
def snapshot_texts() -> tuple[str, ...]:
    return samples(ROOT / "tests" / "fixtures", "*.json", limit=1_000_000)


@cache
def rule_file_texts() -> tuple[str, ...]:
    """Each rule file's header and its first three rules (a whole file is slow to mutate)."""
    texts = []
    for path in sorted(builtin_rules_dir().glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        tables = text.split("[[rule]]")
        texts.append("[[rule]]".join(tables[:4]))
    return tuple(texts)


@cache
def rule_tables() -> tuple[dict[str, Any], ...]:
    """Every built-in rule's table as the loader reads it."""
    from te_doctor.toml_compat import tomllib

    tables: list[dict[str, Any]] = []
    for path in sorted(builtin_rules_dir().glob("*.toml")):
        tables += tomllib.loads(path.read_text(encoding="utf-8")).get("rule", [])
    return tuple(tables)


@cache
def real_leaves() -> tuple[str, ...]:
    leaves: list[str] = []
    for table in rule_tables():
        for part in ("all", "any", "none"):
            leaves += table.get("when", {}).get(part, [])
    return tuple(leaves)


def _json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    _json_containers,
    max_leaves=12,
)


@st.composite
def mutated_data(draw: st.DrawFn, documents: tuple[Any, ...]) -> Any:
    """A parsed JSON document with one to four nodes (anywhere) replaced, removed or added."""
    data = json.loads(json.dumps(draw(st.sampled_from(documents))))
    for _ in range(draw(st.integers(1, 4))):
        node = data
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(
                st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node)))
            )
            child = node[key]
            if not isinstance(child, (dict, list)) or not child:
                break
            node = child
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            if draw(st.booleans()):
                node[key] = draw(JSON)
            else:
                del node[key]
        elif isinstance(node, list) and node:
            node[draw(st.integers(0, len(node) - 1))] = draw(JSON)
        elif isinstance(node, dict):
            node[draw(st.text(max_size=10))] = draw(JSON)
    return data


@st.composite
def generated_leaf(draw: st.DrawFn) -> str:
    """``path OP operand`` from real fact paths and operators, with a bait operand."""
    from te_doctor.engine.fact_paths import FACT_TYPES

    path = draw(st.sampled_from(sorted(FACT_TYPES)).map(lambda p: p.replace("*", "x")))
    operand = draw(
        st.one_of(
            st.sampled_from(('"2.7"', "12.4", "9.0", "true", '["a", "b"]', "/x(/", "/a+/i", "")),
            bait_text(40),
        )
    )
    return f"{path} {draw(st.sampled_from(OPERATORS))} {operand}"


def _parse_rule_table(table: Any) -> None:
    parse_rule(table, "fuzz: rule[0]", "fuzz.toml", None)


def _evaluate_leaf(text: str) -> None:
    from te_doctor.engine.flatten import FlatFacts
    from te_doctor.snapshot.facts import Fact

    leaf: Leaf = parse_leaf(text)
    facts = FlatFacts({p: Fact.of(v, "fuzz") for p, v in BASELINE.items()}, ())
    leaf.evaluate(facts)  # a leaf that parses evaluates without raising


@dataclass(frozen=True)
class Target:
    """One thing to fuzz: the function, its inputs, and what it may raise."""

    name: str
    run: Callable[[Any], object]
    inputs: Callable[[], st.SearchStrategy[Any]]
    allowed: tuple[type[BaseException], ...] = ()


#: Every triage parser (and the shared error capture), on pasted text.
TEXT_PARSERS: dict[str, Callable[[str], object]] = {
    "triage-collect-env": lambda t: parsers.parse_collect_env.parse(prepare(t)),
    "triage-nvidia": lambda t: parsers.parse_nvidia.parse(prepare(t)),
    "triage-packages": lambda t: parsers.parse_packages.parse(prepare(t)),
    "triage-te-doctor": lambda t: parsers.parse_te_doctor.parse(prepare(t)),
    "triage-freeform": lambda t: parsers.parse_freeform.parse(prepare(t)),
    "triage-errors": lambda t: parsers.parse_errors.parse(prepare(t), []),
    "error-capture": lambda t: capture_errors(t.splitlines()),
    "triage-report": parse_report,
}


TARGETS: tuple[Target, ...] = (
    Target(
        "snapshot-decoder-text",
        lambda text: loads(text, name="fuzz.json"),
        lambda: st.one_of(mutated(snapshot_texts()), bait_text()),
        (TeDoctorError,),
    ),
    Target(
        "snapshot-decoder-data",
        lambda data: from_json_data(data, name="fuzz.json"),
        lambda: st.one_of(mutated_data(tuple(json.loads(t) for t in snapshot_texts())), JSON),
        (TeDoctorError,),
    ),
    Target(
        "rule-loader-text",
        lambda text: load_rule_text(text, Path("fuzz.toml")),
        lambda: st.one_of(mutated(rule_file_texts()), bait_text()),
        (TeDoctorError,),
    ),
    Target(
        "rule-loader-tables",
        _parse_rule_table,
        lambda: st.one_of(mutated_data(rule_tables()), JSON),
        (TeDoctorError,),
    ),
    Target(
        "condition-parser",
        _evaluate_leaf,
        lambda: st.one_of(mutated(real_leaves()), generated_leaf(), bait_text(200)),
        (ConditionError,),
    ),
    Target("triage-prepare", prepare, lambda: triage_text()),
    *(Target(name, parse, lambda: triage_text()) for name, parse in TEXT_PARSERS.items()),
)


def triage_text() -> st.SearchStrategy[str]:
    """Pasted reports, mutated, and generated text."""
    return st.one_of(mutated(reports()), bait_text())


def fuzz_once(target: Target, value: Any) -> None:
    """Run ``target`` on ``value``; anything but an allowed error type is a failure, and so is
    a warning (it would reach the user's terminal)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            target.run(value)
        except target.allowed:
            pass


#: Linear-time checks: each text parser, the character (or word) it is baited with.
LINEAR: dict[str, Callable[[str], object]] = {
    **TEXT_PARSERS,
    "condition-parser": lambda t: _quietly(parse_leaf, t),
}


def _quietly(parse: Callable[[str], object], text: str) -> None:
    try:
        parse(text)
    except ConditionError:
        pass


def profile() -> str:
    """The hypothesis profile to load: $HYPOTHESIS_PROFILE, else ``ci``."""
    return os.environ.get("HYPOTHESIS_PROFILE", "ci")
