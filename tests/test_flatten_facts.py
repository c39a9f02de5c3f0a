"""The values flatten() derives, on a recorded H100 with one section edited at a time, and the
derived-fact functions on their own (CUDA majors, the PyTorch build a driver runs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from te_doctor.engine.derived import add_majors, major_of, runs_on, torch_cuda_build
from te_doctor.engine.flatten import FlatFacts, flatten
from te_doctor.snapshot.facts import Fact, FactState, Version
from te_doctor.snapshot.file import load
from te_doctor.snapshot.model import (
    GpuFacts,
    LibraryCopy,
    NeededLibrary,
    PackageFacts,
    ProbeStatus,
    Snapshot,
)
from te_doctor.snapshot.smoke_model import LoadedLibrary
from tests.test_core_edges import with_check_status

FIXTURES = Path(__file__).parent / "fixtures"
H100 = load(FIXTURES / "h100-smoke-verified.json")
KNOWN = FactState.KNOWN


def edit(snapshot: Snapshot, section: str, **changes: Any) -> Snapshot:
    """``snapshot`` with fields of one section replaced."""
    return dataclasses.replace(
        snapshot, **{section: dataclasses.replace(getattr(snapshot, section), **changes)}
    )


def failed(snapshot: Snapshot, probe: str) -> Snapshot:
    """``snapshot`` as if ``probe`` had raised."""
    status = ProbeStatus(name=probe, state="error", detail="probe failed", duration_ms=1.0)
    return dataclasses.replace(snapshot, probes=(*snapshot.probes, status))


def value(facts: FlatFacts, path: str) -> Any:
    fact = facts.get(path)
    assert fact.state is KNOWN, (path, fact)
    return fact.value


def copy(name: str, path: str, version: str = "12.4.127") -> LibraryCopy:
    return LibraryCopy(
        name=name, path=path, version=Fact.of(Version(version), "t"), origin="system"
    )


def gpu(index: int, name: str, cc: str | None, visible: bool = True) -> GpuFacts:
    base = H100.gpus[0]
    capability: Fact[Any] = Fact.of(cc, "t") if cc else Fact.unknown("NVML: GPU is lost", "t")
    return dataclasses.replace(
        base, index=index, name=Fact.of(name, "t"), compute_capability=capability, visible=visible
    )


def with_gpus(snapshot: Snapshot, *gpus: GpuFacts) -> Snapshot:
    count = Fact.of(sum(g.visible for g in gpus), "t")
    return edit(dataclasses.replace(snapshot, gpus=gpus), "driver", visible_gpu_count=count)


def test_library_copies_are_counted() -> None:
    libraries = (
        copy("cudart", "/usr/local/cuda/lib64/libcudart.so.12"),
        copy("cudart", "/opt/venv/nvidia/cuda_runtime/lib/libcudart.so.12"),
        copy("cublas", "/usr/local/cuda/lib64/libcublas.so.12"),
    )
    facts = flatten(edit(H100, "cuda", libraries=libraries, toolkits=H100.cuda.toolkits * 2))
    assert value(facts, "cuda.cudart_copies") == 2
    assert value(facts, "cuda.toolkit_count") == 2 * len(H100.cuda.toolkits)


@pytest.mark.parametrize(
    ("versions", "distinct"),
    [
        (("9.1.0", "9.1.0"), 1),
        (("8.9.2", "8.9.7"), 1),  # patch releases of one minor are one cuDNN
        (("8.9.7", "9.1.0"), 2),
        (("9", "9.1.0"), 2),
        ((), 0),
    ],
)
def test_cudnn_versions_count_by_major_and_minor(versions: tuple[str, ...], distinct: int) -> None:
    copies = tuple(copy("cudnn", f"/lib{i}/libcudnn.so.9", v) for i, v in enumerate(versions))
    facts = flatten(edit(H100, "cudnn", copies=copies, distinct_versions=versions))
    assert value(facts, "cudnn.distinct_versions") == distinct
    assert value(facts, "cudnn.copy_count") == len(versions)


@pytest.mark.parametrize(
    ("probe", "paths"),
    [
        ("cuda", ("cuda.toolkit_count", "cuda.cudart_copies")),
        ("cudnn", ("cudnn.copy_count", "cudnn.distinct_versions")),
        (
            "packages",
            (
                "packages.duplicate_count",
                "packages.duplicates",
                "packages.conflicts",
                "packages.unreadable_count",
                "packages.unreadable",
            ),
        ),
        ("transformer_engine", ("te.missing_libraries", "te.core_library_count")),
    ],
)
def test_counts_of_a_failed_probe_are_unknown(probe: str, paths: tuple[str, ...]) -> None:
    facts = flatten(failed(H100, probe))
    for path in paths:
        fact = facts.get(path)
        assert fact.state is FactState.UNKNOWN, (path, fact)
        assert (fact.reason, fact.source) == (f"the {probe} probe failed", probe)
    other = flatten(failed(H100, "host"))
    assert all(other.get(path).state is KNOWN for path in paths)


def test_packages_by_canonical_name_first_copy_wins_and_duplicates_listed() -> None:
    def package(name: str, version: str) -> PackageFacts:
        return PackageFacts(
            name=name,
            version=Fact.of(Version(version), "t"),
            location="/site",
            install_kind="wheel",
            installer=Fact.of("pip", "t"),
        )

    installed = (
        package("Transformer_Engine", "2.9.0"),
        package("transformer-engine", "1.13.0"),
        package("nvidia.cudnn-cu12", "9.1.0.70"),
    )
    duplicates = ("transformer-engine: 2.9.0, 1.13.0", "torch: 2.4.0, 2.5.1")
    packages = edit(H100, "packages", installed=installed, duplicates=duplicates, conflicts=("x",))
    facts = flatten(packages)
    assert value(facts, "packages.transformer_engine") == "2.9.0"
    assert value(facts, "packages.nvidia_cudnn_cu12") == "9.1.0.70"
    assert value(facts, "packages.duplicate_count") == 2
    assert value(facts, "packages.duplicates") == "\n".join(duplicates)
    assert value(facts, "packages.conflicts") == "x"
    absent = facts.get("packages.flash_attn")
    assert (absent.state, absent.reason) == (FactState.ABSENT, "flash-attn is not installed")
    unknown = flatten(failed(packages, "packages")).get("packages.flash_attn")
    assert (unknown.state, unknown.reason) == (FactState.UNKNOWN, "the packages probe failed")


def test_te_missing_libraries_are_the_absent_ones_needed_or_loaded() -> None:
    def lib(name: str, found: bool) -> NeededLibrary:
        resolved: Fact[str] = Fact.of(f"/lib/{name}", "t") if found else Fact.absent("no", "t")
        return NeededLibrary(name=name, resolved=resolved)

    te = edit(
        H100,
        "transformer_engine",
        needed_libraries=(lib("libcudart.so.12", True), lib("libcublas.so.12", False)),
        loaded_at_import=(lib("libcudnn", False), lib("libnvrtc", True)),
        core_library_copies=("/a/libtransformer_engine.so", "/b/libtransformer_engine.so"),
    )
    facts = flatten(te)
    assert value(facts, "te.missing_libraries") == ("libcublas.so.12", "libcudnn")
    assert value(facts, "te.core_library_count") == 2


def test_smoke_checks_are_grouped_by_status() -> None:
    smoke = with_check_status(
        with_check_status(H100, "te-fp8-current", "numerics"), "te-fp8-block", "failed"
    )
    facts = flatten(smoke)
    verified = value(facts, "smoke.verified")
    assert "te-fp8-delayed" in verified and "te-fp8-current" not in verified
    assert value(facts, "smoke.failed_checks") == ("te-fp8-block",)
    assert value(facts, "smoke.numerics_failures") == ("te-fp8-current",)
    assert value(facts, "smoke.failed_check_count") == 1
    assert value(facts, "smoke.numerics_failure_count") == 1


def test_loaded_cudnn_copies_count_directories() -> None:
    def loaded(name: str, path: str) -> LoadedLibrary:
        return LoadedLibrary(
            name=name, path=path, version=Fact.of(Version("9.1.0"), "t"), origin="maps"
        )

    libraries = (
        loaded("cudnn", "/venv/nvidia/cudnn/lib/libcudnn.so.9"),
        loaded("cudnn", "/venv/nvidia/cudnn/lib/libcudnn_ops.so.9"),
        loaded("cudnn", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"),
        loaded("cudart", "/usr/local/cuda/lib64/libcudart.so.12"),
    )
    facts = flatten(edit(H100, "smoke", loaded_libraries=libraries))
    assert value(facts, "smoke.loaded_cudnn_copies") == 2


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "Traceback:\n  File x\nRuntimeError: CUDA error: no kernel image\n\n  \n",
            "RuntimeError: CUDA error: no kernel image",
        ),
        ("  ImportError: undefined symbol: cublasLt  ", "ImportError: undefined symbol: cublasLt"),
        ("\n \n", ""),
        ("E" * 400, "E" * 300),
    ],
)
def test_the_error_line_is_the_last_non_blank_line_cut_to_300(text: str, line: str) -> None:
    facts = flatten(edit(H100, "smoke", error_text=Fact.of(text, "smoke")))
    assert value(facts, "smoke.error_line") == line


def test_an_unrun_smoke_test_leaves_every_smoke_fact_missing_for_its_reason() -> None:
    laptop = load(FIXTURES / "no-gpu-laptop.json")
    facts = flatten(laptop)
    outcome = laptop.smoke.outcome
    assert outcome.state is FactState.ABSENT
    for path in ("smoke.verified", "smoke.failed_check_count", "smoke.loaded_cudnn_copies"):
        fact = facts.get(path)
        assert (fact.state, fact.reason, fact.source) == (outcome.state, outcome.reason, "smoke")
    assert facts.get("smoke.error_line") == laptop.smoke.error_text


def test_gpu_aggregates_over_visible_gpus() -> None:
    machine = with_gpus(
        H100,
        gpu(0, "NVIDIA A100", "8.0", visible=False),
        gpu(1, "NVIDIA H100", "9.0"),
        gpu(2, "NVIDIA B200", "10.0"),
        gpu(3, "NVIDIA H100", "9.0"),
    )
    facts = flatten(machine)
    assert value(facts, "gpus.count") == 3
    assert value(facts, "gpus.distinct_names") == 2
    assert value(facts, "gpus.min_compute_capability") == "9.0"  # 10.0 is newer, not smaller
    assert [g["gpu.index"].value for g in facts.gpus] == [1, 2, 3]
    assert value(facts, "gpu.name") == "NVIDIA H100"
    assert value(facts, "gpu.index") == 1
    chosen = flatten(machine, device=0)  # --device picks any GPU by index, hidden or not
    assert (value(chosen, "gpu.index"), value(chosen, "gpu.name")) == (0, "NVIDIA A100")
    assert value(chosen, "gpus.count") == 3


def test_a_gpu_of_unknown_capability_makes_the_minimum_unknown() -> None:
    facts = flatten(with_gpus(H100, gpu(0, "NVIDIA H100", "9.0"), gpu(1, "NVIDIA H100", None)))
    fact = facts.get("gpus.min_compute_capability")
    assert (fact.state, fact.reason) == (
        FactState.UNKNOWN,
        "a GPU's compute capability is unknown",
    )


def test_no_visible_gpu_makes_gpu_facts_absent() -> None:
    facts = flatten(with_gpus(H100, gpu(0, "NVIDIA H100", "9.0", visible=False)))
    assert value(facts, "gpus.count") == 0
    fact = facts.get("gpus.min_compute_capability")
    assert (fact.state, fact.reason) == (FactState.ABSENT, "no visible GPU")
    for path in ("gpu.index", "gpu.name", "gpu.te_has_kernels"):
        fact = facts.get(path)
        assert (fact.state, fact.reason, fact.source) == (
            FactState.ABSENT,
            "no visible GPU",
            "nvidia",
        )


def test_an_unknown_gpu_count_makes_gpu_facts_unknown_for_its_reason() -> None:
    wedged = load(FIXTURES / "wedged-driver.json")
    count = wedged.driver.visible_gpu_count
    assert count.state is FactState.UNKNOWN
    facts = flatten(wedged)
    for path in ("gpus.distinct_names", "gpus.min_compute_capability", "gpu.name", "gpu.index"):
        fact = facts.get(path)
        assert (fact.state, fact.reason) == (FactState.UNKNOWN, count.reason), path


def test_per_gpu_facts_come_from_that_gpu() -> None:
    facts = flatten(H100)
    first = H100.gpus[0]
    assert facts.gpus[0]["gpu.memory_total_mib"] == first.memory_total_mib
    assert facts.gpus[0]["gpu.mig_mode"] == first.mig_mode
    assert facts.gpus[0]["gpu.persistence_mode"] == first.persistence_mode
    assert facts.gpus[0]["gpu.compute_capability"] == first.compute_capability
    assert value(facts, "gpu.te_has_kernels") is True
    assert value(facts, "gpu.torch_has_kernels") is True


def test_plan_facts_are_absent_and_build_and_env_facts_copied() -> None:
    facts = flatten(edit(H100, "environment", variables={"NVTE_FLASH_ATTN": "0"}))
    plan = facts.get("plan.te_version")
    assert (plan.state, plan.reason) == (FactState.ABSENT, "no install plan")
    assert facts.get("build.cxx") == H100.build.cxx
    assert value(facts, "env.NVTE_FLASH_ATTN") == "0"
    unset = facts.get("env.NVTE_FUSED_ATTN")
    assert (unset.state, unset.reason) == (FactState.ABSENT, "NVTE_FUSED_ATTN is not set")
    assert value(facts, "driver.cuda_major") == 12
    assert value(facts, "driver.torch_cuda_build").startswith("cu12")


@pytest.mark.parametrize(
    ("cuda", "build"),
    [
        ("13.0", "cu130"),
        ("13.1", "cu130"),
        ("12.9", "cu129"),
        ("12.8", "cu128"),
        ("12.7", "cu126"),
        ("12.6", "cu126"),
        ("12.5", "cu124"),
        ("12.4", "cu124"),
        ("12.3", "cu121"),
        ("12.1", "cu121"),
        ("12.0", "cu118"),
        ("11.8", "cu118"),
    ],
)
def test_the_newest_pytorch_build_a_driver_runs(cuda: str, build: str) -> None:
    assert torch_cuda_build(Fact.of(cuda, "nvidia")) == Fact.of(build, "derived")


def test_a_driver_too_old_for_any_build_or_not_a_version() -> None:
    old = torch_cuda_build(Fact.of("11.7", "nvidia"))
    assert old == Fact.absent(
        "a driver for CUDA 11.7 runs no current PyTorch CUDA build", "derived"
    )
    junk = torch_cuda_build(Fact.of("twelve", "nvidia"))
    assert junk == Fact.unknown("'twelve' is not a version", "derived")
    gone = torch_cuda_build(Fact.absent("no NVIDIA driver", "nvidia"))
    assert gone == Fact.absent("no NVIDIA driver", "nvidia")


def test_majors_are_derived_only_where_missing() -> None:
    values: dict[str, Fact[Any]] = {
        "driver.cuda_version": Fact.of("12.4", "nvidia"),
        "torch.cuda_version": Fact.unknown("torch/version.py unreadable", "torch"),
        "cudnn.version": Fact.of("9.1.0", "cudnn"),
        "cudnn.major": Fact.of(8, "pasted"),
        "cuda.runtime_version": Fact.of("not-a-version", "cuda"),
    }
    add_majors(values)
    assert values["driver.cuda_major"] == Fact.of(12, "derived")
    assert values["torch.cuda_major"] == Fact.unknown("torch/version.py unreadable", "torch")
    assert values["cudnn.major"] == Fact.of(8, "pasted")  # a stated major is kept
    assert values["cuda.runtime_major"] == Fact.unknown(
        "'not-a-version' is not a version", "derived"
    )
    assert "cuda.toolkit_major" not in values  # no version, no major
    assert major_of(Fact.of("13", "t")) == Fact.of(13, "derived")


def test_every_fact_names_the_probe_that_found_it_or_derived() -> None:
    """A fact's source starts with its probe's name; facts computed from others say "derived"."""
    facts = flatten(H100)
    # Shared by several probes: "process", the loader's model of the diagnosed process
    # (probes/process.py), and "libcuda", the libcuda.so.1 it would load (probes/libcuda.py).
    shared = {"libraries", "smoke", "plan", "derived", "process", "libcuda"}
    probes = {p.name for p in H100.probes} | shared
    for path, fact in [*facts.values.items(), *facts.gpus[0].items()]:
        assert fact.source.split(":")[0] in probes, (path, fact.source)
    for path in ("gpu.index", "gpu.name", "gpu.compute_capability"):
        assert facts.gpus[0][path].source.split(":")[0] == "nvidia", path
    for path in ("gpu.torch_has_kernels", "gpu.te_has_kernels", "gpus.distinct_names"):
        assert facts.get(path).source == "derived", path


@pytest.mark.parametrize(
    ("archs", "cc", "runs"),
    [
        (("compute_90",), "9.0", True),  # PTX runs on its own GPU too
        (("compute_100",), "9.0", False),  # and never on an older one
        (("compute_120f",), "12.1", True),  # family PTX: its family only
        (("compute_120f",), "13.0", False),
        (("sm_61",), "6", False),  # a bare major is major.0
        (("sm_90",), "9", True),
    ],
)
def test_ptx_and_family_code_run_where_cuda_runs_them(
    archs: tuple[str, ...], cc: str, runs: bool
) -> None:
    assert runs_on(Fact.of(archs, "t"), Fact.of(cc, "t")) == Fact.of(runs, "derived")


def test_code_fit_is_missing_for_the_reason_of_what_is_missing() -> None:
    archs: Fact[tuple[str, ...]] = Fact.of(("sm_90",), "t")
    cc = Fact.of("9.0", "t")
    no_te: Fact[tuple[str, ...]] = Fact.absent("transformer_engine is not installed", "te")
    hung: Fact[str] = Fact.unknown("nvidia-smi did not answer", "nvidia")
    assert runs_on(no_te, cc) == Fact.absent("transformer_engine is not installed", "derived")
    assert runs_on(archs, hung) == Fact.unknown("nvidia-smi did not answer", "derived")
    assert runs_on(no_te, hung) == Fact.absent("transformer_engine is not installed", "derived")


@pytest.mark.parametrize(
    ("values", "complete", "path", "expected"),
    [
        (
            {"packages.duplicate_count": Fact.of(0, "packages")},
            True,
            "packages.flash_attn",
            Fact.absent("flash-attn is not installed", "packages"),
        ),
        (
            {"packages.duplicate_count": Fact.unknown("probe packages failed", "packages")},
            True,
            "packages.flash_attn",
            Fact.unknown("probe packages failed", "packages"),
        ),
        ({}, True, "packages.flash_attn", Fact.unknown("no complete package list", "packages")),
        ({}, True, "env.NVTE_FUSED_ATTN", Fact.absent("NVTE_FUSED_ATTN is not set", "environment")),
        (
            {},
            False,
            "env.NVTE_FUSED_ATTN",
            Fact.unknown("env.NVTE_FUSED_ATTN was not recorded", "snapshot"),
        ),
        ({}, True, "cudnn.version", Fact.unknown("cudnn.version was not recorded", "snapshot")),
        (
            {"cudnn.version": Fact.of("9.1.0", "cudnn")},
            True,
            "cudnn.version",
            Fact.of("9.1.0", "cudnn"),
        ),
    ],
)
def test_a_fact_nobody_recorded_is_absent_only_where_the_list_was_complete(
    values: dict[str, Fact[Any]], complete: bool, path: str, expected: Fact[Any]
) -> None:
    assert FlatFacts(values, (), environment_complete=complete).get(path) == expected


def lost(index: int) -> GpuFacts:
    """A GPU NVML could not reach: its name is unknown."""
    return dataclasses.replace(
        gpu(index, "?", None), name=Fact.unknown("NVML: GPU is lost", "nvidia:nvml")
    )


def test_a_lost_gpu_is_not_another_model() -> None:
    one_named = flatten(with_gpus(H100, gpu(0, "NVIDIA H100", "9.0"), lost(1)))
    names = one_named.get("gpus.distinct_names")
    assert (names.state, names.reason, names.source) == (
        FactState.UNKNOWN,
        "a GPU's name is unknown",
        "derived",
    )
    two_named = flatten(
        with_gpus(H100, gpu(0, "NVIDIA H100", "9.0"), gpu(1, "NVIDIA L4", "8.9"), lost(2))
    )
    assert value(two_named, "gpus.distinct_names") == 2  # two models, whatever the lost one is


def test_an_unknown_gpu_count_carries_its_source_to_the_aggregates() -> None:
    wedged = load(FIXTURES / "wedged-driver.json")
    count = wedged.driver.visible_gpu_count
    facts = flatten(wedged)
    for path in ("gpus.distinct_names", "gpus.min_compute_capability"):
        assert facts.get(path).source == count.source, path


def test_what_the_driver_said_is_one_text_and_a_crashed_probe_said_nothing() -> None:
    said = ("NVML: GPU is lost", "nvidia-smi: not found")
    facts = flatten(edit(H100, "driver", evidence=said))
    assert facts.get("driver.evidence") == Fact.of(
        "NVML: GPU is lost\nnvidia-smi: not found", "nvidia"
    )
    silent = flatten(edit(H100, "driver", evidence=()))
    assert silent.get("driver.evidence") == Fact.absent(
        "the NVIDIA probe recorded no evidence", "nvidia"
    )
    crashed = failed(
        edit(H100, "driver", version=Fact.unknown("probe nvidia failed", "nvidia")), "nvidia"
    )
    assert flatten(crashed).get("driver.evidence") == Fact.unknown("probe nvidia failed", "nvidia")


def test_unreadable_metadata_and_conflicts_are_one_line_each() -> None:
    packages = edit(
        H100, "packages", unreadable=("a.dist-info: x", "b.dist-info: y"), conflicts=("c", "d")
    )
    facts = flatten(packages)
    assert value(facts, "packages.unreadable") == "a.dist-info: x\nb.dist-info: y"
    assert value(facts, "packages.conflicts") == "c\nd"
