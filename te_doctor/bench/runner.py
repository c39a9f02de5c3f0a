"""Run one bench child per path, each isolated and killed at a timeout; never raises."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from te_doctor.bench.choose import PlannedPath
from te_doctor.bench.record import BenchSettings, ComponentRun, PathRun
from te_doctor.bench.workload import COMPONENTS, Workload, step_flops
from te_doctor.files import read_json_object
from te_doctor.probes.commands import run_command
from te_doctor.probes.exits import exit_in_words

CHILD = Path(__file__).parent / "child" / "te_doctor_bench_child.py"
#: Seconds a child may spend outside the timed components (imports, setup, references).
SETUP_ALLOWANCE_S = 60.0
STDERR_TAIL = 2000


def child_timeout(settings: BenchSettings) -> float:
    """The budget of every component plus the allowance for imports and setup."""
    return settings.budget_s * len(COMPONENTS) + SETUP_ALLOWANCE_S


def run_paths(
    python: str,
    planned: Sequence[PlannedPath],
    workload: Workload,
    settings: BenchSettings,
    *,
    progress: Callable[[str], None] = lambda line: None,
    child: Path = CHILD,
    env: Mapping[str, str] | None = None,
) -> tuple[PathRun, ...]:
    """Every planned path in turn; skipped ones are recorded with their reason, not run."""
    runs = []
    for number, plan in enumerate(planned, start=1):
        label = f"[{number}/{len(planned)}] {plan.id} on {plan.device}"
        if plan.skip_reason:
            progress(f"{label}: skipped ({plan.skip_reason})")
            runs.append(_skipped(plan, workload))
            continue
        progress(f"{label} ...")
        run = run_path(python, plan, workload, settings, child=child, env=env)
        progress(f"{label}: {run.status} in {run.duration_s:.1f} s")
        runs.append(run)
    return tuple(runs)


def _skipped(plan: PlannedPath, workload: Workload) -> PathRun:
    components = tuple(
        unmeasured(name, "skipped", plan.skip_reason, workload) for name in COMPONENTS
    )
    return PathRun(plan.id, plan.device, "skipped", plan.skip_reason, "", "", "", 0.0, components)


def run_path(
    python: str,
    plan: PlannedPath,
    workload: Workload,
    settings: BenchSettings,
    *,
    child: Path = CHILD,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
) -> PathRun:
    """One child for one path; its result file is read whatever way it ended.

    ``timeout_s`` defaults to ``child_timeout(settings)``.
    """
    spec = {
        "format": 1,
        "path": plan.id,
        "device": plan.device,
        "workload": workload.to_json(),
        "components": {name: step_flops(workload, name) for name in COMPONENTS},
        "warmup": settings.warmup,
        "repeats": settings.repeats,
        "budget_s": settings.budget_s,
        "seed": 0,
    }
    timeout = timeout_s or child_timeout(settings)
    with tempfile.TemporaryDirectory(prefix="te-doctor-bench-") as scratch:
        spec_file, out = Path(scratch) / "spec.json", Path(scratch) / "result.json"
        spec_file.write_text(json.dumps(spec), encoding="utf-8")
        started = time.monotonic()
        result = run_command(
            [python, str(child), "--spec", str(spec_file), "--out", str(out)],
            timeout=timeout,
            env=env,
        )
        duration = time.monotonic() - started
        data = read_json_object(out)
    if result.timed_out:
        ending = f"timed out after {timeout:.0f} s"
        status = "timeout"
    elif result.returncode != 0 or data is None or not data.get("finished"):
        ending = _crash(result.returncode, result.stderr, python)
        status = "crashed"
    else:
        ending, status = "", "ran"
    return _path_run(plan, workload, data or {}, status, ending, duration)


def _crash(returncode: int, stderr: str, python: str) -> str:
    if returncode in (126, 127):
        return f"cannot start {python}: {stderr.strip()}"
    how = exit_in_words(returncode) + (" without a finished result" if returncode == 0 else "")
    tail = stderr.strip().splitlines()[-1:] if stderr.strip() else []
    return how + (f": {tail[0][:STDERR_TAIL]}" if tail else "")


def _path_run(
    plan: PlannedPath,
    workload: Workload,
    data: Mapping[str, Any],
    status: str,
    ending: str,
    duration: float,
) -> PathRun:
    """The child's components, and those it never reached marked with how it ended."""
    reported = {c.get("name"): c for c in data.get("components", []) if isinstance(c, dict)}
    error = data.get("error")
    if isinstance(error, dict) and status == "ran":
        text = str(error.get("text", "")).strip().splitlines()
        status, ending = "failed", (text[-1] if text else str(error.get("type", "failed")))
    running = str(data.get("running", ""))
    components = []
    for name in COMPONENTS:
        if name in reported:
            components.append(_component(reported[name], workload))
            continue
        reason = ending or "not run"
        if status in ("timeout", "crashed") and name == running:
            reason = f"{ending} while running {name}"
        component_status = {"timeout": "timeout", "crashed": "crashed"}.get(status, "failed")
        components.append(unmeasured(name, component_status, reason, workload))
    if status == "ran" and all(c.status == "skipped" for c in components):
        status, ending = "skipped", components[0].reason
    return PathRun(
        id=plan.id,
        device=plan.device,
        status=status,
        reason=ending,
        device_name=str(data.get("device_name") or ""),
        torch_version=str(data.get("torch") or ""),
        te_version=str(data.get("te") or ""),
        duration_s=round(duration, 3),
        components=tuple(components),
    )


def unmeasured(name: str, status: str, reason: str, workload: Workload) -> ComponentRun:
    """A component with no samples: skipped, or never reached by its child."""
    return ComponentRun(
        name, status, reason, step_flops(workload, name), (), (), None, "", None, ""
    )


def _component(entry: Mapping[str, Any], workload: Workload) -> ComponentRun:
    def floats(key: str) -> tuple[float, ...]:
        values = entry.get(key) or []
        return tuple(float(v) for v in values if isinstance(v, (int, float)))

    error = entry.get("rel_error")
    memory = entry.get("memory_bytes")
    name = str(entry["name"])
    return ComponentRun(
        name=name,
        status=str(entry.get("status", "failed")),
        reason=str(entry.get("reason", "")),
        flops=step_flops(workload, name),
        warmup_s=floats("warmup_s"),
        samples_s=floats("samples_s"),
        memory_bytes=int(memory) if isinstance(memory, int) else None,
        memory_kind=str(entry.get("memory_kind", "")),
        rel_error=float(error) if isinstance(error, (int, float)) else None,
        error_detail=str(entry.get("error_detail", "")),
    )
