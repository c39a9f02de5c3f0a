"""The report's area lines: for each component, what was found in words and how it stands.

``status`` is the worst fired finding of the area (error, warning, info); else "undecided"
when one of its rules could not be decided; else "ok" when the component is here and
"absent" when it is not (no driver, TE not installed, the smoke test not run): absent is not
an error by itself, the findings say when it is one. A GPU line is never "ok" without a
visible GPU, nor a Transformer Engine line without TE.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from te_doctor.check.area_of import (
    AREAS,
    CUDA,
    CUDNN,
    DRIVER,
    FLASH_ATTN,
    GPU,
    PLATFORM,
    SMOKE,
    TE,
    TORCH,
    area_of,
)
from te_doctor.engine.applicability import no_gpu_visible
from te_doctor.engine.evaluate import Finding, Outcome
from te_doctor.engine.flatten import FlatFacts
from te_doctor.engine.rule_model import Rule
from te_doctor.snapshot.facts import Fact, FactState
from te_doctor.snapshot.model import SmokeFacts, Snapshot

_SEVERITY_STATUS = {2: "error", 1: "warning", 0: "info"}


@dataclass(frozen=True, slots=True)
class Area:
    """One component's line: its status, what was found, the next command, its findings."""

    name: str
    status: str
    found: str
    hint: str
    #: Every finding of the area by rule id, in the report's order (fired first).
    findings: tuple[str, ...]


def build_areas(
    facts: FlatFacts, snapshot: Snapshot, findings: Sequence[Finding], rules: Sequence[Rule]
) -> tuple[Area, ...]:
    """Every area, in print order, with its findings."""
    where = {rule.id: area_of(rule) for rule in rules}
    found = _found(facts, snapshot)
    areas = []
    for name in AREAS:
        mine = [f for f in findings if where.get(f.rule_id) == name]
        text, present, hint = found[name]
        status = _status(mine, present)
        if name == SMOKE and _smoke_failed(snapshot.smoke):
            status = "error"  # the test itself failed, wherever its cause's finding sits
        areas.append(Area(name, status, text, hint, tuple(f.rule_id for f in mine)))
    return tuple(areas)


def _smoke_failed(smoke: SmokeFacts) -> bool:
    """The smoke test ran and did not end well (failed, timed out, crashed)."""
    return smoke.outcome.known and smoke.outcome.value != "ok"


def _status(findings: Sequence[Finding], present: bool) -> str:
    fired = [f.severity.rank for f in findings if f.outcome is Outcome.FIRED]
    if fired:
        return _SEVERITY_STATUS[max(fired)]
    if any(f.outcome is Outcome.UNDECIDED for f in findings):
        return "undecided"
    return "ok" if present else "absent"


def _found(facts: FlatFacts, snapshot: Snapshot) -> Mapping[str, tuple[str, bool, str]]:
    """Each area's (what was found, whether the component is here, the next command)."""

    def value(path: str) -> str:
        return str(facts.get(path).get() or "")

    toolkit = value("cuda.toolkit_version")
    cuda_parts = (
        [f"runtime {value('cuda.runtime_version')}"] if value("cuda.runtime_version") else []
    )
    cuda_parts += [f"cuBLAS {value('cuda.cublas_version')}"] if value("cuda.cublas_version") else []
    if toolkit:
        path = snapshot.cuda.toolkit_path.get() or ""
        cuda_parts.append(f"toolkit {toolkit} for builds" + (f" at {path}" if path else ""))
    cudnn = value("cudnn.version")
    distinct = facts.get("cudnn.distinct_versions").get() or 0
    flash = value("packages.flash_attn")
    return {
        GPU: _gpus(facts),
        DRIVER: _driver(value("driver.version"), value("driver.cuda_version")),
        CUDA: (
            ", ".join(cuda_parts) or "no CUDA runtime or toolkit found",
            bool(value("cuda.runtime_version") or toolkit),
            "",
        ),
        CUDNN: (
            (cudnn + (f" ({distinct} versions installed)" if distinct > 1 else ""), True, "")
            if cudnn
            else ("not found", False, "")
        ),
        TORCH: _torch(facts),
        TE: _transformer_engine(facts),
        FLASH_ATTN: (flash, True, "") if flash else ("not installed (optional)", False, ""),
        PLATFORM: (_platform(facts), True, ""),
        SMOKE: _smoke(snapshot.smoke),
    }


def _driver(version: str, cuda: str) -> tuple[str, bool, str]:
    if not version:
        return "not installed", False, ""
    return version + (f" (CUDA {cuda})" if cuda else " (its CUDA version is not known)"), True, ""


def _gpus(facts: FlatFacts) -> tuple[str, bool, str]:
    count = facts.get("gpus.count")
    if count.state is FactState.UNKNOWN:
        return f"could not tell ({count.reason})", False, ""
    if no_gpu_visible(facts):
        return f"none visible ({_why_no_gpu(facts)})", False, ""
    names = [_gpu_name(gpu["gpu.name"], gpu["gpu.compute_capability"]) for gpu in facts.gpus]
    text = ", ".join(f"{names.count(n)}x {n}" for n in dict.fromkeys(names))
    hidden = (facts.get("driver.gpu_count").get() or 0) - int(count.value or 0)
    if hidden > 0:
        text += f"; {hidden} more hidden by CUDA_VISIBLE_DEVICES"
    return text, True, ""


def _gpu_name(name: Fact[Any], capability: Fact[Any]) -> str:
    cc = f" (cc {capability.value})" if capability.known else ""
    return f"{name.get() or 'a GPU without a name'}{cc}"


def _why_no_gpu(facts: FlatFacts) -> str:
    driver = facts.get("driver.version")
    if not driver.known:
        nvml = facts.get("driver.nvml").reason or driver.reason
        detail = nvml.removeprefix("NVML: ").split(":")[0].strip()
        return "no NVIDIA driver" + (f": {detail}" if detail and detail != nvml else "")
    hidden = facts.get("driver.visible_devices")
    if hidden.known:
        return f"CUDA_VISIBLE_DEVICES={hidden.value!r} hides them"
    return f"driver {driver.value} lists no GPU"


def _torch(facts: FlatFacts) -> tuple[str, bool, str]:
    version = facts.get("torch.version")
    if not version.known:
        return "not installed", False, "te-doctor plan"
    cuda, hip = facts.get("torch.cuda_version"), facts.get("torch.hip_version")
    if cuda.known:
        return f"{version.value} (built for CUDA {cuda.value})", True, ""
    if hip.known:
        return f"{version.value} (a ROCm {hip.value} build)", True, ""
    return f"{version.value} (a CPU-only build)", True, ""


def _transformer_engine(facts: FlatFacts) -> tuple[str, bool, str]:
    version = facts.get("te.version")
    if not version.known:
        return "not installed", False, "te-doctor plan"
    major = facts.get("te.core_cuda_major").get()
    parts = [f"CUDA {major} core" if major else "no core library found"]
    parts.append(
        "PyTorch extension" if facts.get("te.torch_extension").known else "no PyTorch extension"
    )
    return f"{version.value} ({', '.join(parts)})", True, ""


def _platform(facts: FlatFacts) -> str:
    def value(path: str) -> str:
        return str(facts.get(path).get() or "")

    parts = [p for p in (value("host.os_name"), value("host.arch")) if p]
    if value("host.python_version"):
        parts.append(f"Python {value('host.python_version')}")
    if value("host.ngc_pytorch_version"):
        parts.append(f"NGC PyTorch {value('host.ngc_pytorch_version')} container")
    elif value("host.container"):
        parts.append(f"in a {value('host.container')} container")
    if facts.get("host.wsl").get():
        parts.append("WSL2")
    return ", ".join(parts) or "not recorded"


def _smoke(smoke: SmokeFacts) -> tuple[str, bool, str]:
    if not smoke.outcome.known:
        why = smoke.outcome.reason.removeprefix("the smoke test was not run").strip(" ()")
        return f"not run ({why})" if why else "not run", False, ""
    checks = [c for c in smoke.checks if c.status != "skipped"]
    good = sum(c.status == "ok" for c in checks)
    took = f"{smoke.duration_ms / 1000:.1f} s"
    if smoke.outcome.value == "ok":
        return f"{good} of {len(checks)} GEMM checks matched FP32 ({took})", True, ""
    stage = f" in stage {smoke.stage.value}" if smoke.stage.known else ""
    return f"{smoke.outcome.value}{stage} ({took})", True, ""
