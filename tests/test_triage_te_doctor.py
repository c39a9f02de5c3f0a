"""te-doctor's own reports pasted into a bug report: every fact they state comes back, and no other.

``tests/test_triage_parsers.py`` checks that the text report states only true facts; these tests
check the other half (nothing the report prints is lost) and where the parser finds a snapshot
in the JSON: at a line's start or after words, several in one paste, a broken one before a good
one. Written from the survivors of mutation testing (group triage-parsers).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from te_doctor.engine.flatten import flatten
from te_doctor.render.text import render_snapshot_text
from te_doctor.snapshot.file import load
from te_doctor.triage.parse_common import prepare
from te_doctor.triage.parse_te_doctor import JSON_FORMAT, TEXT_FORMAT, _labels, parse
from te_doctor.triage.parsers import parse_report

FIXTURES = Path(__file__).parent / "fixtures"
H100 = FIXTURES / "h100-cuda12-te-ok.json"
#: Facts the text report does not print on one line with their value: lists printed item by
#: item below their label, and facts derived from others (te-doctor derives them again).
NOT_ON_ONE_LINE = frozenset(
    {
        "driver.evidence",
        "cudnn.distinct_versions",
        "gpus.min_compute_capability",
        "gpu.forward_compatible",
        "gpu.torch_has_kernels",
        "gpu.te_has_kernels",
        "gpu.te_has_arch_specific_kernels",
    }
)


def printed_facts(path: Path) -> dict[str, object]:
    """The known facts of a fixture that its text report prints as ``label value [source]``."""
    labelled = {p for labels in _labels().values() for p in labels.values()}
    facts = flatten(load(path)).values
    printed = {
        p: f.value
        for p, f in facts.items()
        if f.known
        and f.value is not None
        and (p in labelled or p.startswith(("gpu.", "gpus.")))
        and p not in NOT_ON_ONE_LINE
    }
    if printed.get("gpu.persistence_mode") is False:
        del printed["gpu.persistence_mode"]  # printed "off", as an unknown mode is too
    return printed


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_the_text_report_loses_no_fact_it_prints(fixture: Path) -> None:
    parsed = parse_report(render_snapshot_text(load(fixture)))
    expected = printed_facts(fixture)
    assert {p: parsed.facts.get(p) for p in expected} == expected


def test_the_text_report_of_an_h100_gives_its_gpu_facts_from_one_line() -> None:
    found = parse(prepare(render_snapshot_text(load(H100)) + "\n"))
    gpu = {o.path: (o.value, o.source) for o in found.observations if o.path.startswith("gpu")}
    where = f"{TEXT_FORMAT}: '#0 NVIDIA H100 80GB HBM3, compute capability 9.0'"
    assert gpu["gpus.count"] == (8, where)
    assert gpu["gpus.distinct_names"] == (1, where)
    assert gpu["gpu.index"] == (0, where)
    assert gpu["gpu.memory_total_mib"][0] == 81559
    assert found.formats == [TEXT_FORMAT]
    assert len(found.owned_lines) == 1


def snapshot_json() -> str:
    return H100.read_text(encoding="utf-8")


def json_facts() -> dict[str, object]:
    return {p: f.value for p, f in flatten(load(H100)).values.items() if f.known}


def one_line(text: str) -> str:
    return json.dumps(json.loads(text))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", ""),  # the paste is the snapshot
        ("te-doctor probe --format json said:\n\n", "\nthen it failed.\n"),
        ("output: ", "\n"),  # after words on the same line
    ],
    ids=["alone", "between-lines", "after-words"],
)
def test_a_json_snapshot_anywhere_in_the_paste(before: str, after: str) -> None:
    text = before + one_line(snapshot_json()) + after
    found = parse(prepare(text))
    facts = {o.path: o.value for o in found.observations}
    assert facts == json_facts()
    assert found.formats == [JSON_FORMAT]
    line = before.count("\n")
    assert found.owned_lines == [(line, line + 1)]
    assert {o.source for o in found.observations if o.path == "driver.version"} == {
        f"{JSON_FORMAT}: nvidia:nvml"
    }


def test_every_line_of_a_pretty_printed_snapshot_is_owned() -> None:
    text = "Here it is:\n" + snapshot_json().rstrip("\n") + "\nThanks\n"
    found = parse(prepare(text))
    assert found.owned_lines == [(1, 1 + snapshot_json().rstrip("\n").count("\n") + 1)]


def test_a_broken_snapshot_before_a_good_one() -> None:
    good = one_line(snapshot_json())
    text = good[: len(good) // 2] + "\n" + good + "\n"
    found = parse(prepare(text))
    assert {o.path: o.value for o in found.observations} == json_facts()
    assert found.owned_lines == [(1, 2)]


def test_at_most_three_snapshots_are_read() -> None:
    good = one_line(snapshot_json())
    per_snapshot = len(parse(prepare(good + "\n")).observations)
    for count in (2, 3, 4):
        found = parse(prepare((good + "\n") * count))
        assert len(found.observations) == per_snapshot * min(count, 3)
        assert len(found.owned_lines) == min(count, 3)


def test_json_that_is_not_a_snapshot_gives_nothing() -> None:
    for text in ('{"schema_version": 4, "hello": 1}\n', '"schema_version": 4\n', "{}\n"):
        found = parse(prepare(text))
        assert (found.observations, found.formats, found.owned_lines) == ([], [], [])


def gpu_line(index: int, name: str, cc: str = "9.0", memory: str = "81559 MiB") -> str:
    return (
        f"  #{index} {name}, compute capability {cc}, {memory}, MIG disabled, persistence off, "
        "visible, uuid GPU-0"
    )


def text_report(*body: str, probes: bool = True) -> str:
    head = "te-doctor 0.3.0 snapshot (schema 4), recorded 2026-12-02T00:00:00+00:00"
    return "\n".join([head, "", *body, *(["Probes", "  host ok"] if probes else [])]) + "\n"


def gpu_facts(text: str) -> dict[str, tuple[object, str]]:
    found = parse(prepare(text))
    return {o.path: (o.value, o.source) for o in found.observations if o.path.startswith("gpu")}


def test_a_text_report_owns_its_lines_from_header_to_probes() -> None:
    text = "I ran it:\n" + text_report("GPUs", gpu_line(0, "NVIDIA L4", "8.9")) + "and then\n"
    assert parse(prepare(text)).owned_lines == [(1, 6)]


def test_gpu_facts_of_a_text_report_cut_before_its_probes() -> None:
    facts = gpu_facts(text_report("GPUs", gpu_line(0, "NVIDIA L4", "8.9"), probes=False))
    assert facts["gpu.name"][0] == "NVIDIA L4"
    assert facts["gpus.count"][0] == 1


def test_distinct_gpu_names_memory_and_an_unknown_name() -> None:
    where = f"{TEXT_FORMAT}: '#0 NVIDIA H100 PCIe, compute capability 9.0'"
    facts = gpu_facts(
        text_report("GPUs", gpu_line(0, "NVIDIA H100 PCIe"), gpu_line(1, "NVIDIA H100 80GB HBM3"))
    )
    assert facts["gpus.distinct_names"] == (2, where)
    assert facts["gpu.memory_total_mib"] == (81559, where)
    unnamed = gpu_facts(text_report("GPUs", gpu_line(0, "?", "?", "memory ?")))
    where = f"{TEXT_FORMAT}: '#0 ?, compute capability ?'"
    assert unnamed == {
        "gpus.count": (1, where),
        "gpu.index": (0, where),
        "gpu.mig_mode": ("disabled", where),
    }


def test_environment_and_package_lines_of_a_text_report() -> None:
    found = parse(
        prepare(
            text_report(
                "Environment",
                "  NVTE_FLASH_ATTN=0",
                "  not an assignment",
                "  2BAD=1",
                "Python packages",
                "  - torch 2.6.0+cu124 (wheel) in /opt/site-packages",
                "  - torch not-a-version (wheel) in /opt/site-packages",
            )
        )
    )
    assert [(o.path, o.value, o.source) for o in found.observations] == [
        ("env.NVTE_FLASH_ATTN", "0", f"{TEXT_FORMAT}: 'NVTE_FLASH_ATTN=0'"),
        (
            "packages.torch",
            "2.6.0+cu124",
            f"{TEXT_FORMAT}: '- torch 2.6.0+cu124 (wheel) in /opt/site-packages'",
        ),
    ]


def test_a_json_snapshot_after_a_leading_blank_line() -> None:
    found = parse(prepare("\n" + one_line(snapshot_json()) + "\n"))
    assert found.owned_lines == [(1, 2)]
