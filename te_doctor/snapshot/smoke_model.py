"""The smoke section of a snapshot: what running the real GEMMs in a child process showed."""

from __future__ import annotations

from dataclasses import dataclass

from te_doctor.snapshot.facts import ComputeCapability, Fact, Version

_FROZEN = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**_FROZEN)
class SupportCheck:
    """One of TE's own support checks (``is_fp8_available`` ...), as the smoke child saw it."""

    recipe: str
    available: bool
    reason: str


@dataclass(**_FROZEN)
class SmokeCheck:
    """One smoke GEMM: which execution path it exercises, where, and how close to FP32 it was."""

    name: str
    device: str
    status: str
    max_abs_error: Fact[float]
    rel_error: Fact[float]
    tolerance: float
    detail: str
    duration_ms: float


@dataclass(**_FROZEN)
class LoadedLibrary:
    """A shared library the smoke child actually had mapped (from /proc/self/maps)."""

    name: str
    path: str
    version: Fact[Version]
    origin: str


@dataclass(**_FROZEN)
class SmokeFacts:
    """What running the real thing in an isolated child process showed.

    ``outcome``: ok, failed, signal, timeout, oom or crashed (absent when not run);
    ``stage``: where it stopped (import-torch, device, import-te, te-support, gemm).
    """

    outcome: Fact[str]
    stage: Fact[str]
    error_text: Fact[str]
    python: str
    duration_ms: float
    torch_cuda_available: Fact[bool]
    torch_device_capability: Fact[ComputeCapability]
    torch_cudnn_version: Fact[Version]
    te_support: tuple[SupportCheck, ...]
    checks: tuple[SmokeCheck, ...]
    loaded_libraries: tuple[LoadedLibrary, ...]
