"""The condition language: every operator and type, three-valued logic, and parse errors."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from te_doctor.engine.condition_parser import ConditionError, parse_leaf
from te_doctor.engine.conditions import Condition, Truth, all_of, any_of, negate
from te_doctor.engine.flatten import FlatFacts
from te_doctor.snapshot.facts import Fact
from te_doctor.triage.diagnose import pasted_facts

T, F, U = Truth.TRUE, Truth.FALSE, Truth.UNKNOWN


def facts(values: dict[str, Any], gpus: list[dict[str, Any]] | None = None) -> FlatFacts:
    def fact(value: Any) -> Fact[Any]:
        if value == "<absent>":
            return Fact.absent("not there", "test")
        if value == "<unknown>":
            return Fact.unknown("could not tell", "test")
        return Fact.of(value, "test")

    per_gpu = tuple({k: fact(v) for k, v in gpu.items()} for gpu in gpus or [])
    return FlatFacts({k: fact(v) for k, v in values.items()}, per_gpu)


def truth(leaf: str, values: dict[str, Any], gpus: list[dict[str, Any]] | None = None) -> Truth:
    return parse_leaf(leaf).evaluate(facts(values, gpus))[0]


@pytest.mark.parametrize(
    ("leaf", "value", "expected"),
    [
        # versions: packaging semantics, prereleases and local versions included
        ("torch.version >= 2.1", "2.6.0a0+ecf3bae40a", T),
        ("torch.version < 2.5", "2.4.0+cu121", T),
        ("cuda.runtime_version > 12.9", "12.10", T),
        ("cuda.runtime_version == 12.4", "12.4.0", T),
        ("cuda.runtime_version != 12.4", "12.4.1", T),
        ("cuda.runtime_version <= 12.1", "12.1.105", F),
        ('packages.torch satisfies ">=2.1,<2.8"', "2.6.0a0+ecf3bae40a", T),
        ('packages.torch satisfies ">=2.1,<2.8"', "2.8.0", F),
        ('torch.version in ["2.4.0", "2.5.1"]', "2.5.1", T),
        ('torch.version not in ["2.4.0", "2.5.1"]', "2.5.1", F),
        # compute capability: integer tuples, never floats or strings
        ("gpu.compute_capability >= 8.9", "12.0", T),
        ("gpu.compute_capability < 9.0", "12.0", F),
        ("gpu.compute_capability == 8.9", "8.9", T),
        ("gpu.compute_capability > 8.10", "8.9", F),
        ('gpu.compute_capability in ["10.0", "10.3"]', "10.3", T),
        # ints, bools, strings, text, lists
        ("gpus.count > 0", 8, T),
        ("gpus.count in [1, 2]", 8, F),
        ("host.wsl == true", False, F),
        ("host.wsl != true", False, T),
        ('gpu.name == "NVIDIA H100 80GB HBM3"', "NVIDIA H100 80GB HBM3", T),
        ('gpu.name in ["Tesla T4", "Tesla V100-SXM2-32GB"]', "Tesla T4", T),
        ("gpu.name matches /^NVIDIA GeForce RTX 50/", "NVIDIA GeForce RTX 5090", T),
        ("gpu.name not matches /H100/", "NVIDIA H100 PCIe", F),
        ("smoke.error_text matches /undefined symbol/i", "ImportError: Undefined Symbol: _ZN", T),
        ('torch.cuda_arch_list contains "sm_90"', ("sm_80", "sm_90"), T),
        ('torch.cuda_arch_list not contains "sm_120"', ("sm_80", "sm_90"), T),
        ('env.NVTE_FUSED_ATTN == "0"', "0", T),
    ],
)
def test_operators_by_type(leaf: str, value: Any, expected: Truth) -> None:
    path = parse_leaf(leaf).path
    assert truth(leaf, {path: value}) is expected


@pytest.mark.parametrize(
    "leaf",
    [
        "torch.version >= 2.1",
        "gpu.compute_capability < 8.9",
        "gpus.count > 0",
        "smoke.error_text matches /x/",
        'torch.cuda_arch_list contains "sm_90"',
    ],
)
def test_unknown_facts_are_unknown_and_absent_facts_are_false(leaf: str) -> None:
    path = parse_leaf(leaf).path
    assert truth(leaf, {path: "<unknown>"}) is U
    assert truth(leaf, {path: "<absent>"}) is F
    assert truth(leaf, {}) is U  # not recorded at all: unknown, never passed


def test_presence_absence_and_unknown() -> None:
    assert truth("driver.version is missing", {"driver.version": "<absent>"}) is T
    assert truth("driver.version is missing", {"driver.version": "550.54.15"}) is F
    assert truth("driver.version is present", {"driver.version": "550.54.15"}) is T
    assert truth("packages.flash_attn is present", {"packages.duplicate_count": 0}) is F
    # a probe that could not tell: neither missing nor present, but "is unknown"
    assert truth("driver.version is missing", {"driver.version": "<unknown>"}) is U
    assert truth("driver.version is present", {"driver.version": "<unknown>"}) is U
    assert truth("driver.version is unknown", {"driver.version": "<unknown>"}) is T
    assert truth("driver.version is unknown", {"driver.version": "<absent>"}) is F
    assert truth("packages.flash_attn is present", {}) is U  # no package list at all


def test_fact_to_fact_comparison() -> None:
    leaf = "driver.cuda_version < torch.cuda_version"
    assert truth(leaf, {"driver.cuda_version": "12.2", "torch.cuda_version": "12.4"}) is T
    assert truth(leaf, {"driver.cuda_version": "12.8", "torch.cuda_version": "12.4"}) is F
    assert truth(leaf, {"driver.cuda_version": "12.2", "torch.cuda_version": "<unknown>"}) is U
    assert truth(leaf, {"driver.cuda_version": "12.2", "torch.cuda_version": "<absent>"}) is F


def test_unparsable_fact_value_is_unknown_not_a_crash() -> None:
    assert truth("torch.version >= 2.1", {"torch.version": "not-a-version!"}) is U


def test_quantifiers_over_gpus() -> None:
    gpus = [{"gpu.compute_capability": "9.0"}, {"gpu.compute_capability": "8.0"}]
    count = {"gpus.count": 2}
    assert truth("gpus.any.compute_capability < 8.9", count, gpus) is T
    assert truth("gpus.all.compute_capability >= 8.9", count, gpus) is F
    assert truth("gpus.all.compute_capability >= 8.0", count, gpus) is T
    partly = [{"gpu.compute_capability": "9.0"}, {"gpu.compute_capability": "<unknown>"}]
    assert truth("gpus.all.compute_capability >= 8.9", count, partly) is U
    assert truth("gpus.any.compute_capability >= 8.9", count, partly) is T
    assert truth("gpus.any.compute_capability < 8.9", {"gpus.count": "<unknown>"}) is U
    assert truth("gpus.any.compute_capability < 8.9", {"gpus.count": 0}, []) is F


@pytest.mark.parametrize(("a", "b"), list(itertools.product([T, F, U], repeat=2)))
def test_kleene_logic(a: Truth, b: Truth) -> None:
    both, either = all_of([a, b]), any_of([a, b])
    assert both is (F if F in (a, b) else U if U in (a, b) else T)
    assert either is (T if T in (a, b) else U if U in (a, b) else F)
    assert negate(all_of([a, b])) is any_of([negate(a), negate(b)])  # De Morgan


def test_condition_parts_and_missing_facts() -> None:
    condition = Condition(
        all=(parse_leaf("gpus.count > 0"),),
        any=(parse_leaf("gpu.compute_capability < 8.9"), parse_leaf("driver.version is missing")),
        none=(parse_leaf("host.wsl == true"),),
    )
    ok = {
        "gpus.count": 1,
        "gpu.compute_capability": "8.0",
        "driver.version": "550",
        "host.wsl": False,
    }
    assert condition.evaluate(facts(ok)) == (T, ())
    assert condition.evaluate(facts({**ok, "host.wsl": True}))[0] is F
    unknown = {**ok, "gpu.compute_capability": "<unknown>"}
    assert condition.evaluate(facts(unknown)) == (U, ("gpu.compute_capability",))


@pytest.mark.parametrize(
    ("leaf", "message"),
    [
        ("gpu.compute_capabilty >= 8.9", "did you mean 'gpu.compute_capability'"),
        ("gpu.compute_capability matches /9/", "operator 'matches' does not fit cc"),
        ("smoke.error_text matches /(unclosed/", "bad regular expression"),
        # found by fuzzing: a regex a future Python reads otherwise warned on every load
        ("smoke.error_text matches /[a--b]/", "Possible set difference"),
        ("smoke.error_text matches undefined", "expected /regex/"),
        ("torch.version >= banana", "is not a version"),
        ("gpu.compute_capability >= 9", "not a compute capability"),
        ('packages.torch satisfies ">=>2"', "not a version specifier"),
        ("packages.torch satisfies >=2.1", "expected a quoted string"),
        ("gpus.count in 1", "needs a JSON list"),
        ("host.wsl == yes", "not true or false"),
        ("driver.version is missing now", "takes no value"),
        ("driver.cuda_version < torch.version_", "unknown fact"),
        ("driver.cuda_version < gpus.count", "cannot compare version"),
        ("gpus.count >", "needs a value"),
        ("eval('1')", "cannot parse"),
    ],
)
def test_parse_errors_say_what_is_wrong(leaf: str, message: str) -> None:
    with pytest.raises(ConditionError, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse_leaf(leaf)


# --------------------------------------------------------------------------- edges


@pytest.mark.parametrize(
    ("leaf", "text", "expected"),
    [
        ("smoke.error_text matches /^undefined/m", "ImportError\nundefined symbol", T),
        ("smoke.error_text matches /^undefined/", "ImportError\nundefined symbol", F),
        ("smoke.error_text matches /Undefined/", "undefined symbol", F),
        ("smoke.error_text matches /Undefined/i", "undefined symbol", T),
        ("smoke.error_text matches /^undefined/im", "ImportError\nUndefined symbol", T),
    ],
)
def test_regex_flags_i_and_m_each_do_their_own_thing(leaf: str, text: str, expected: Truth) -> None:
    assert truth(leaf, {"smoke.error_text": text}) is expected


@pytest.mark.parametrize(
    ("leaf", "message"),
    [
        ("smoke.error_text matches /(/i", "bad regular expression /(/: "),
        ("gpus.count == many", "'many' is not an integer"),
        ("host.wsl > true", "operator '>' does not fit bool fact 'host.wsl' (use: "),
        ("zzqx.qqqq == 1", "unknown fact 'zzqx.qqqq'"),
        ("gpus.any.name.extra is present", "unknown fact 'gpu.name.extra'"),
    ],
)
def test_parse_error_messages_name_the_culprit(leaf: str, message: str) -> None:
    with pytest.raises(ConditionError) as raised:
        parse_leaf(leaf)
    assert str(raised.value).startswith(message), str(raised.value)


def test_a_wrong_operator_lists_the_ones_that_fit() -> None:
    with pytest.raises(ConditionError) as raised:
        parse_leaf("host.wsl > true")
    allowed = str(raised.value).split("(use: ")[1].rstrip(")")
    assert allowed.split(", ") == ["!=", "==", "is missing", "is present", "is unknown"]


def test_an_unknown_fact_suggests_only_a_real_path() -> None:
    with pytest.raises(ConditionError) as raised:
        parse_leaf("pakages.t is present")
    assert "*" not in str(raised.value)
    with pytest.raises(ConditionError) as nothing_close:
        parse_leaf("zzqx.qqqq == 1")
    assert str(nothing_close.value) == "unknown fact 'zzqx.qqqq'"


@pytest.mark.parametrize(
    "text",
    [
        "te.version is present",
        "driver.cuda_version < torch.cuda_version",
        "gpus.all.compute_capability >= 8.9",
        "gpus.any.name is missing",
    ],
)
def test_a_leaf_keeps_its_text_and_a_presence_test_reads_one_fact(text: str) -> None:
    leaf = parse_leaf(text)
    assert leaf.text == text
    expected = ["torch.cuda_version"] if "<" in text else []
    assert [ref for ref in (leaf.ref,) if ref] == expected


def test_an_empty_quoted_string_is_the_empty_string() -> None:
    assert truth('host.container == ""', {"host.container": ""}) is T
    assert truth('host.container != ""', {"host.container": "docker"}) is T


def test_a_list_of_strings_is_taken_verbatim() -> None:
    leaf = 'gpu.name in ["NVIDIA RTX A6000 \\"Ada\\"", "Tesla T4 Ünïcode"]'
    assert truth(leaf, {"gpu.name": 'NVIDIA RTX A6000 "Ada"'}) is T
    assert truth(leaf, {"gpu.name": "Tesla T4 Ünïcode"}) is T


def test_a_reference_to_a_fact_in_upper_case_is_a_reference() -> None:
    leaf = "env.CUDA_HOME == env.CUDA_PATH"
    assert parse_leaf(leaf).ref == "env.CUDA_PATH"
    same = {"env.CUDA_HOME": "/usr/local/cuda", "env.CUDA_PATH": "/usr/local/cuda"}
    assert truth(leaf, same) is T


def test_a_bare_major_compute_capability_is_major_dot_zero() -> None:
    assert truth("gpu.compute_capability == 9.0", {"gpu.compute_capability": "9"}) is T


def test_quantified_presence_and_reference_leaves_look_at_every_gpu() -> None:
    gpus = [
        {"gpu.compute_capability": "9.0", "gpu.name": "<absent>"},
        {"gpu.compute_capability": "10.0", "gpu.name": "NVIDIA B200"},
    ]
    machine = {"gpus.count": 2, "gpu.compute_capability": "9.0", "gpu.name": "<absent>"}
    assert truth("gpus.any.name is present", machine, gpus) is T
    assert truth("gpus.all.name is present", machine, gpus) is F
    newer = "gpus.any.compute_capability > gpu.compute_capability"
    assert truth(newer, machine, gpus) is T
    assert truth("gpus.all.compute_capability > gpu.compute_capability", machine, gpus) is F


def test_an_unknown_gpu_count_is_the_missing_fact_of_a_quantified_leaf() -> None:
    leaf = parse_leaf("gpus.any.compute_capability >= 8.9")
    assert leaf.evaluate(facts({"gpus.count": "<unknown>"})) == (U, ("gpus.count",))


def test_a_gpu_fact_a_paste_did_not_state_is_unknown_for_each_gpu() -> None:
    """A pasted report's one GPU holds only the gpu.* facts it stated; the rest are unknown."""
    pasted = pasted_facts({"gpu.name": "NVIDIA H100", "gpus.count": 1}, {}, "")
    leaf = parse_leaf("gpus.any.compute_capability >= 8.9")
    assert leaf.evaluate(pasted) == (U, ("gpu.compute_capability",))
