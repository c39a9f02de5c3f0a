"""Error-signature rules (TED7xx): real failure reports are recognised, unrelated errors are not.

The real reports live in the workplace's ``shared/cases/dev-cases.json`` (next to this
repository); outside the workplace those tests skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from te_doctor.engine.conditions import Truth
from te_doctor.engine.paths import load_paths
from te_doctor.engine.rule_examples import example_facts
from te_doctor.engine.rule_model import CATEGORIES, Example, Rule
from te_doctor.engine.rules import load_rules
from tests.conftest import skip_unless_shared

CASES_FILE = Path(__file__).resolve().parents[2] / "shared" / "cases" / "dev-cases.json"
RULES = load_rules(known_paths=[p.id for p in load_paths()])
SIGNATURES = tuple(rule for rule in RULES if rule.id.startswith("TED7"))

#: Cases whose error text cannot honestly lead to a rule of the case's category.
CATEGORY_XFAIL = {
    "pytorch/pytorch#149845": (
        "'no kernel image is available' says the binary lacks code for the GPU (a CUDA/arch"
        " mismatch, TED741); the case files it under driver-too-old because the reporter fixed"
        " it by reinstalling the driver and a cu128 torch, and notes the root cause was never"
        " confirmed. The text alone cannot tell a driver problem apart."
    ),
}


def _case_params() -> list[Any]:
    """One param per case with an error excerpt; a single ``None`` when the file is absent."""
    if not CASES_FILE.is_file():
        return [pytest.param(None, id="dev-cases-absent")]
    cases: list[dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return [
        pytest.param(case, id=str(case["source"]))
        for case in cases
        if str(case.get("error_excerpt") or "").strip()
    ]


def _category_params() -> list[Any]:
    params = []
    for param in _case_params():
        case = param.values[0]
        reason = CATEGORY_XFAIL.get(case["source"]) if case is not None else None
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(case, id=param.id, marks=marks))
    return params


def _require(case: dict[str, Any] | None) -> dict[str, Any]:
    skip_unless_shared(CASES_FILE)
    assert case is not None
    return case


def _fired(error_text: str) -> list[Rule]:
    """The signature rules that fire on the healthy baseline with this error text."""
    facts = example_facts(Example({"smoke.error_text": error_text}, None))
    return [rule for rule in SIGNATURES if rule.when.evaluate(facts)[0] is Truth.TRUE]


def test_there_are_at_least_20_signature_rules() -> None:
    assert len(SIGNATURES) >= 20, [rule.id for rule in SIGNATURES]


@pytest.mark.parametrize("rule", SIGNATURES, ids=[rule.id for rule in SIGNATURES])
def test_signature_rules_read_the_error_text(rule: Rule) -> None:
    assert "smoke.error_text" in rule.facts_used()


@pytest.mark.parametrize("case", _case_params())
def test_a_signature_fires_on_each_real_report(case: dict[str, Any] | None) -> None:
    case = _require(case)
    assert _fired(case["error_excerpt"]), f"no TED7xx rule recognises {case['source']}"


@pytest.mark.parametrize("case", _category_params())
def test_a_signature_of_the_reports_category_fires(case: dict[str, Any] | None) -> None:
    case = _require(case)
    assert case["category"] in CATEGORIES, f"{case['source']}: unknown category"
    fired = _fired(case["error_excerpt"])
    assert case["category"] in {rule.category for rule in fired}, (
        f"{case['source']} ({case['category']}): fired {[(r.id, r.category) for r in fired]}"
    )


UNRELATED = (
    "KeyError: 'foo'",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total"
    " capacity of 79.19 GiB of which 512.00 MiB is free.",
    "ValueError: too many values to unpack (expected 2)",
    "ModuleNotFoundError: No module named 'numpy'",
    "ImportError: cannot import name 'LlamaConfig' from 'transformers'",
    "RuntimeError: Expected all tensors to be on the same device, but found at least two"
    " devices, cuda:0 and cpu!",
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x100 and 96x32)",
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled"
    " system error (run with NCCL_DEBUG=INFO for details)",
    'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
    "    main()\nAssertionError",
)


@pytest.mark.parametrize("text", UNRELATED)
def test_unrelated_errors_fire_no_signature(text: str) -> None:
    allowed = {rule.id for rule in SIGNATURES if "out-of-memory" in rule.name}
    fired = [rule.id for rule in _fired(text) if rule.id not in allowed]
    assert fired == []


#: One cause, worded by different tools: each text must reach a rule of that category.
REWORDED = (
    (
        "unsupported-gpu-fp8",
        "ERROR: FP8 models require a GPU with Compute Capability 8.9 or higher",
    ),
    ("unsupported-gpu-fp8", "AssertionError: Float8 quantization is only supported on CUDA>=8.9"),
    ("unsupported-gpu-fp8", "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89"),
    ("missing-lib", "ImportError: libcuda.so.1: cannot open shared object file: No such file"),
    ("missing-lib", "/usr/bin/ld: cannot find -lcuda: No such file or directory"),
    ("missing-lib", "ModuleNotFoundError: No module named 'transformer_engine'"),
    ("install-build", "c++: fatal error: Killed signal terminated program cc1plus"),
    ("install-build", "CMake Error: CMAKE_CUDA_COMPILER not set, after EnableLanguage"),
    ("install-build", "CMake Error: Could NOT find CUDNN (missing: CUDNN_INCLUDE_DIR)"),
    ("install-build", "nvcc fatal   : Unsupported gpu architecture 'compute_120'"),
    (
        "install-build",
        "x.cpp:9:10: fatal error: experimental/filesystem: No such file or directory",
    ),
    ("import-abi", "undefined symbol: _ZNK3c106SymInt22maybe_as_int_slow_pathEv"),
    ("import-abi", "libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by x.so)"),
    ("multiple-installs", "Failed to initialize NVML: Driver/library version mismatch"),
    ("multiple-installs", "RuntimeError: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"),
    ("driver-too-old", "The NVIDIA driver on your system is too old (found version 11040)."),
    ("driver-too-old", "cudaGetDeviceCount(). Error 803: system has unsupported display driver"),
    (
        "cuda-mismatch",
        "The detected CUDA version (12.9) mismatches the version that was used to compile"
        "\n> PyTorch",
    ),
    ("runtime-numerics", "iteration 10 | lm loss: nan | grad norm: nan"),
    ("config", "RuntimeError: No CUDA GPUs are available"),
    ("config", "requires setting the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1"),
    ("flash-attn", "ImportError: Requires Flash-Attention version >=2.7.1,<=2.8.0 but got 2.8.3."),
)


@pytest.mark.parametrize(("category", "text"), REWORDED)
def test_a_cause_is_caught_in_other_words(category: str, text: str) -> None:
    assert category in {rule.category for rule in _fired(text)}
