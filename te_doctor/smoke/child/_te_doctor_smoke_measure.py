"""How a smoke check measures: seeded inputs, float64 references on the CPU, and skips."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from _te_doctor_smoke_record import State

#: How far off the injected fault makes the scale (or the output).
FAULT_FACTOR = 1.5
SEED = 0
#: M = K = N of every GEMM.
SIZE = 128


class Skip(Exception):
    """The check does not apply here; the message says why."""


@dataclass
class Measured:
    """How far a check's outputs were from their references."""

    max_abs_error: float | None
    rel_error: float | None
    detail: str


def generator(torch: Any) -> Any:
    return torch.Generator().manual_seed(SEED)


def randn(torch: Any, generator: Any, *shape: int) -> Any:
    return torch.randn(*shape, generator=generator, dtype=torch.float32)


def measure(torch: Any, parts: list[tuple[str, Any, Any]], note: str = "") -> Measured:
    """Compare each (label, output, reference) in float64 on the CPU; the worst one counts.

    A non-finite output gives ``rel_error`` None (status "numerics").
    """
    worst_abs: float | None = 0.0
    worst_rel: float | None = 0.0
    texts = []
    for label, output, reference in parts:
        out = output.detach().to(device="cpu", dtype=torch.float64)
        ref = reference.detach().to(device="cpu", dtype=torch.float64)
        if not bool(torch.isfinite(out).all()):
            worst_abs = worst_rel = None
            texts.append(f"{label}: non-finite values")
            continue
        diff = out - ref
        max_abs = float(diff.abs().max())
        rel = float(diff.norm() / ref.norm())
        texts.append(f"{label}: rel {rel:.3g}, max abs {max_abs:.3g}")
        if worst_abs is not None and worst_rel is not None:
            worst_abs, worst_rel = max(worst_abs, max_abs), max(worst_rel, rel)
    if worst_rel is not None and not math.isfinite(worst_rel):
        worst_abs = worst_rel = None
    detail = "; ".join(texts) + (f" ({note})" if note else "")
    return Measured(worst_abs, worst_rel, detail)


def need_cuda(state: State) -> None:
    if not state.cuda_ok:
        raise Skip(state.no_cuda or "no CUDA device")


def need_capability(state: State, minimum: tuple[int, int], what: str) -> None:
    capability = state.capability or (0, 0)
    if capability < minimum:
        raise Skip(
            f"{what} needs compute capability {minimum[0]}.{minimum[1]} or higher; "
            f"cuda:0 is {capability[0]}.{capability[1]}"
        )


def backward_with(output: Any, grad: Any) -> None:
    """Backpropagate ``grad`` from ``output`` through a scalar loss, as a training step does.

    The loss ``(output * grad).sum()`` has exactly ``grad`` as its gradient with respect to
    ``output``. ``output.backward(grad)`` would do the same but, from torch 2.x, imports sympy
    on its first call (a second or more of the smoke test's time, and nothing a real training
    step with a scalar loss pays).
    """
    (output * grad).sum().backward()
