"""Run every probe in isolation and assemble the Snapshot.

A probe that raises does not stop the run: its sections are filled with facts that are
unknown for that reason, and its status records the error (flutter doctor's "crash" result).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from te_doctor import __version__
from te_doctor.background import in_background
from te_doctor.probes.build import probe_build
from te_doctor.probes.context import ProbeContext
from te_doctor.probes.cuda import probe_cuda
from te_doctor.probes.cudnn import probe_cudnn
from te_doctor.probes.environment import probe_environment
from te_doctor.probes.host import probe_host
from te_doctor.probes.nvidia import probe_nvidia
from te_doctor.probes.packages import probe_packages
from te_doctor.probes.torch_build import probe_torch
from te_doctor.probes.transformer_engine import probe_transformer_engine
from te_doctor.snapshot.absent import not_run
from te_doctor.snapshot.codec import field_types, unknown_record
from te_doctor.snapshot.model import SCHEMA_VERSION, Meta, ProbeStatus, SmokeFacts, Snapshot
from te_doctor.snapshot.redact import scrub_secrets


@dataclass(frozen=True, slots=True)
class Probe:
    """A named probe and the snapshot sections its result fills. An ``early`` probe starts
    in the background before the others, because it mostly waits: on NVML's start-up and
    nvidia-smi, or on compilers answering ``--version``."""

    name: str
    sections: tuple[str, ...]
    run: Callable[[ProbeContext], Any]
    early: bool = False


def _nvidia_sections(ctx: ProbeContext) -> dict[str, Any]:
    result = probe_nvidia(ctx)
    return {"driver": result.driver, "gpus": result.gpus}


#: Every probe, in the order they run. Section names are ``Snapshot`` fields.
PROBES: tuple[Probe, ...] = (
    Probe("host", ("host",), probe_host),
    Probe("nvidia", ("driver", "gpus"), _nvidia_sections, early=True),
    Probe("cuda", ("cuda",), probe_cuda),
    Probe("cudnn", ("cudnn",), probe_cudnn),
    Probe("packages", ("packages",), probe_packages),
    Probe("torch", ("torch",), probe_torch),
    Probe("transformer_engine", ("transformer_engine",), probe_transformer_engine),
    Probe("environment", ("environment",), probe_environment),
    Probe("build", ("build",), probe_build, early=True),
)


def collect_snapshot(
    ctx: ProbeContext,
    probes: tuple[Probe, ...] = PROBES,
    *,
    smoke: SmokeFacts | None = None,
) -> Snapshot:
    """Run ``probes`` against ``ctx`` and return the secret-free snapshot.

    ``smoke`` is the smoke test's result when one was run (it is not a probe: it takes
    seconds, so callers decide).
    """
    sections: dict[str, Any] = {}
    statuses: list[ProbeStatus] = []
    started_early = {
        probe.name: in_background(partial(_run, probe, ctx), f"te-doctor-probe-{probe.name}")
        for probe in probes
        if probe.early
    }
    for probe in probes:
        wait = started_early.get(probe.name)
        found, status = wait() if wait else _run(probe, ctx)
        sections.update(found)
        statuses.append(status)
    snapshot = Snapshot(
        schema_version=SCHEMA_VERSION,
        meta=Meta(
            te_doctor_version=__version__,
            created_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            redacted=False,
        ),
        probes=tuple(statuses),
        smoke=smoke or not_run("the smoke test was not run (te-doctor probe without --smoke)"),
        **sections,
    )
    return scrub_secrets(snapshot, ctx.env)


def _run(probe: Probe, ctx: ProbeContext) -> tuple[dict[str, Any], ProbeStatus]:
    """The sections ``probe`` fills and its status; a probe that raises fills them with facts
    that are unknown for that reason."""
    started = time.perf_counter()
    try:
        value = probe.run(ctx)
        found = value if len(probe.sections) > 1 else {probe.sections[0]: value}
        state, detail = "ok", ""
    except Exception as exc:  # noqa: BLE001 - a probe bug becomes a fact, never a crash
        detail = f"{type(exc).__name__}: {exc}"
        found = {
            s: _unknown_section(s, f"probe {probe.name} failed: {detail}", probe.name)
            for s in probe.sections
        }
        state = "error"
    elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    return found, ProbeStatus(name=probe.name, state=state, detail=detail, duration_ms=elapsed_ms)


def _unknown_section(section: str, reason: str, source: str) -> Any:
    section_type = field_types(Snapshot)[section]
    if getattr(section_type, "__origin__", None) is tuple:
        return ()
    return unknown_record(section_type, reason, source)
