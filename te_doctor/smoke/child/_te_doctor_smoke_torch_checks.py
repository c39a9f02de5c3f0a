"""The smoke checks of torch's own paths: CPU, FP32/TF32, autocast BF16/FP16, _scaled_mm FP8."""

from __future__ import annotations

from typing import Any

from _te_doctor_smoke_measure import (
    FAULT_FACTOR,
    SIZE,
    Measured,
    Skip,
    backward_with,
    generator,
    measure,
    need_capability,
    need_cuda,
    randn,
)
from _te_doctor_smoke_record import State, describe

TOL_CPU = 1e-5
TOL_FP32 = 0.01
TOL_BF16 = 0.02
TOL_FP16 = 0.01
TOL_TORCH_FP8 = 0.08


def seeded_operands(torch: Any) -> tuple[Any, Any, Any, Any]:
    """(a, b, an nn.Linear, its generator): the CPU checks' inputs, from the fixed seed."""
    gen = generator(torch)
    a, b = randn(torch, gen, SIZE, SIZE), randn(torch, gen, SIZE, SIZE)
    layer = torch.nn.Linear(SIZE, SIZE)
    with torch.no_grad():
        layer.weight.copy_(randn(torch, gen, SIZE, SIZE))
        layer.bias.copy_(randn(torch, gen, SIZE))
    return a, b, layer, gen


def check_cpu(state: State) -> Measured:
    """FP32 matmul and an nn.Linear forward and backward on the CPU."""
    torch = state.torch
    a, b, layer, gen = seeded_operands(torch)
    x = randn(torch, gen, SIZE, SIZE).requires_grad_()
    grad = randn(torch, gen, SIZE, SIZE)
    y = layer(x)
    backward_with(y, grad)
    w64, b64 = layer.weight.detach().double(), layer.bias.detach().double()
    return measure(
        torch,
        [
            ("matmul", a @ b, a.double() @ b.double()),
            ("linear forward", y, x.detach().double() @ w64.t() + b64),
            ("linear input grad", x.grad, grad.double() @ w64),
        ],
    )


def check_cpu_bf16(state: State) -> Measured:
    """An FP32 matmul and an nn.Linear forward under torch.autocast("cpu", bfloat16)."""
    torch = state.torch
    a, b, layer, gen = seeded_operands(torch)
    x = randn(torch, gen, SIZE, SIZE)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        product, y = a @ b, layer(x)
    w64, b64 = layer.weight.detach().double(), layer.bias.detach().double()
    return measure(
        torch,
        [
            ("matmul", product, a.double() @ b.double()),
            ("linear forward", y, x.double() @ w64.t() + b64),
        ],
        f"output {product.dtype}",
    )


def check_torch_fp32(state: State) -> Measured:
    """FP32 matmul on cuda:0, TF32 as the user's settings have it."""
    need_cuda(state)
    torch = state.torch
    gen = generator(torch)
    a, b = randn(torch, gen, SIZE, SIZE), randn(torch, gen, SIZE, SIZE)
    out = a.to(state.cuda_device) @ b.to(state.cuda_device)
    tf32 = bool(getattr(torch.backends.cuda.matmul, "allow_tf32", False))
    return measure(torch, [("matmul", out, a.double() @ b.double())], f"allow_tf32={tf32}")


def check_amp(state: State, dtype_name: str) -> Measured:
    """An FP32 matmul under torch.autocast("cuda", dtype)."""
    need_cuda(state)
    if dtype_name == "bfloat16":
        need_capability(state, (8, 0), "BF16")
    torch = state.torch
    gen = generator(torch)
    a, b = randn(torch, gen, SIZE, SIZE), randn(torch, gen, SIZE, SIZE)
    with torch.autocast(state.cuda_device.split(":")[0], dtype=getattr(torch, dtype_name)):
        out = a.to(state.cuda_device) @ b.to(state.cuda_device)
    return measure(torch, [("matmul", out, a.double() @ b.double())], f"output {out.dtype}")


def check_torch_fp8(state: State, device: str) -> Measured:
    """torch._scaled_mm on e4m3 inputs with per-tensor (amax) float32 scales, bf16 output."""
    torch = state.torch
    e4m3 = torch.float8_e4m3fn  # AttributeError on torch < 2.1: the check fails with it
    scaled_mm = torch._scaled_mm
    gen = generator(torch)
    a, w = randn(torch, gen, SIZE, SIZE), randn(torch, gen, SIZE, SIZE)
    fp8_max = float(torch.finfo(e4m3).max)
    scale_a, scale_w = float(a.abs().max()) / fp8_max, float(w.abs().max()) / fp8_max
    a8, w8 = (a / scale_a).to(e4m3), (w / scale_w).to(e4m3)
    given_a = scale_a * (FAULT_FACTOR if state.fault else 1.0)
    try:
        out = scaled_mm(
            a8.to(device),
            w8.to(device).t(),  # b must be column-major: the transpose of a contiguous (N, K)
            scale_a=torch.tensor(given_a, dtype=torch.float32, device=device),
            scale_b=torch.tensor(scale_w, dtype=torch.float32, device=device),
            out_dtype=torch.bfloat16,
        )
    except NotImplementedError as exc:
        if device == "cpu":
            raise Skip(f"this torch has no CPU kernel for _scaled_mm: {describe(exc)}") from exc
        raise
    if isinstance(out, tuple):  # torch < 2.5 returned (out, amax)
        out = out[0]
    a_deq = a8.to(torch.float64) * scale_a
    w_deq = w8.to(torch.float64) * scale_w
    exact = a.double() @ w.double().t()
    quantized = a_deq @ w_deq.t()
    input_error = float((quantized - exact).norm() / exact.norm())
    note = f"e4m3 per-tensor scales, bf16 out; input quantization alone: rel {input_error:.3g}"
    if device == "cpu" and state.cuda_ok:
        note += "; cuda:0 is below compute capability 8.9, ran on the CPU"
    if state.fault:
        note += f"; fault injected: scale_a x{FAULT_FACTOR}"
    return measure(torch, [("scaled_mm", out, quantized)], note)
