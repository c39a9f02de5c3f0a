"""The benchmarked workload: one transformer layer's shapes, its GEMMs and their FLOP counts.

Pure arithmetic, no torch. A training step is one forward and one backward pass; every GEMM
``(M, K) x (K, N)`` costs ``2*M*N*K`` FLOPs forward and twice that backward (input gradient
and weight gradient), so a step costs three times the forward. Attention's two batched
matmuls (``Q K^T`` and ``P V``, no causal mask) count ``4 * batch * seq^2 * hidden`` forward,
also tripled. Normalisation, activation, softmax, casts and FP8 scaling are not counted
(they cost time, which is measured, but not tensor-core FLOPs).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

ACTIVATIONS = ("gelu", "swiglu")
#: The components each path measures, cheapest first.
COMPONENTS = ("gemms", "mlp", "layer")
FP32_BYTES = 4


@dataclass(frozen=True, slots=True)
class Workload:
    """One transformer layer: sizes as in Megatron/TE (``ffn_hidden_size`` before gating)."""

    name: str
    hidden_size: int
    ffn_hidden_size: int
    num_heads: int
    num_kv_heads: int
    seq_len: int
    batch_size: int
    activation: str = "gelu"

    @property
    def tokens(self) -> int:
        """Rows of every GEMM: sequence length times batch size."""
        return self.seq_len * self.batch_size

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def qkv_size(self) -> int:
        """Output features of the fused QKV projection (grouped-query attention aware)."""
        return self.hidden_size + 2 * self.num_kv_heads * self.head_dim

    @property
    def fc1_size(self) -> int:
        """Output features of FC1: doubled for a gated (SwiGLU) unit."""
        return self.ffn_hidden_size * (2 if self.activation == "swiglu" else 1)

    def gemms(self) -> tuple[Gemm, ...]:
        """The four GEMMs of the layer, in execution order."""
        m, h = self.tokens, self.hidden_size
        return (
            Gemm("qkv", m, h, self.qkv_size),
            Gemm("attention-out", m, h, h),
            Gemm("fc1", m, h, self.fc1_size),
            Gemm("fc2", m, self.ffn_hidden_size, h),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Gemm:
    """``(m, k) x (k, n)``: m tokens, k input features, n output features."""

    name: str
    m: int
    k: int
    n: int

    @property
    def forward_flops(self) -> int:
        return 2 * self.m * self.n * self.k


def attention_forward_flops(workload: Workload) -> int:
    """``Q K^T`` and ``P V`` over every head, without a causal mask."""
    return 4 * workload.batch_size * workload.seq_len**2 * workload.hidden_size


def step_flops(workload: Workload, component: str) -> int:
    """FLOPs of one forward + backward step of ``component`` (see the module docstring)."""
    gemms = {g.name: g.forward_flops for g in workload.gemms()}
    if component == "gemms":
        forward = sum(gemms.values())
    elif component == "mlp":
        forward = gemms["fc1"] + gemms["fc2"]
    elif component == "layer":
        forward = sum(gemms.values()) + attention_forward_flops(workload)
    else:
        raise ValueError(f"unknown component {component!r}")
    return 3 * forward


def estimate_memory_bytes(workload: Workload) -> int:
    """A generous upper bound of the memory one component needs, in FP32.

    Weights three times (master copy, gradient, low-precision copy), the activations a step
    keeps for backward and their gradients, and the attention scores should the attention
    kernel materialise them.
    """
    w = workload
    weights = sum(g.k * g.n for g in w.gemms())
    activations = w.tokens * (4 * w.hidden_size + w.qkv_size + 2 * w.fc1_size + w.ffn_hidden_size)
    scores = w.batch_size * w.num_heads * w.seq_len**2
    return FP32_BYTES * (3 * weights + 2 * activations + 2 * scores)


#: Well-known shapes: (hidden, ffn, heads, kv heads, seq, batch, activation) and the source.
PRESETS: dict[str, tuple[Workload, str]] = {
    "gpt2-small": (
        Workload("gpt2-small", 768, 3072, 12, 12, 1024, 1, "gelu"),
        "GPT-2 small (124M): huggingface.co/openai-community/gpt2 config.json",
    ),
    "llama-3-8b": (
        Workload("llama-3-8b", 4096, 14336, 32, 8, 4096, 1, "swiglu"),
        "Llama 3 8B: huggingface.co/meta-llama/Meta-Llama-3-8B config.json",
    ),
    "llama-3-70b": (
        Workload("llama-3-70b", 8192, 28672, 64, 8, 4096, 1, "swiglu"),
        "Llama 3 70B, one layer: huggingface.co/meta-llama/Meta-Llama-3-70B config.json",
    ),
}
DEFAULT_PRESET = "gpt2-small"


class WorkloadError(ValueError):
    """A workload that cannot be benchmarked at all; the message names the option."""


def build_workload(preset: str | None, **overrides: int | str | None) -> Workload:
    """The preset (default gpt2-small) with every option the user gave replacing its value."""
    base, _ = PRESETS[preset or DEFAULT_PRESET]
    given = {key: value for key, value in overrides.items() if value is not None}
    fields = base.to_json() | given
    if given and preset is None:
        fields["name"] = "custom"
    elif given:
        fields["name"] = f"{preset} (modified)"
    if "num_heads" in given and "num_kv_heads" not in given:
        fields["num_kv_heads"] = fields["num_heads"]
    workload = Workload(**fields)
    validate(workload)
    return workload


def validate(workload: Workload) -> None:
    """Reject shapes no path can run, naming the option; alignment is a per-path matter."""
    sizes = {
        "--hidden-size": workload.hidden_size,
        "--ffn-hidden-size": workload.ffn_hidden_size,
        "--num-heads": workload.num_heads,
        "--num-kv-heads": workload.num_kv_heads,
        "--seq-len": workload.seq_len,
        "--batch-size": workload.batch_size,
    }
    for option, value in sizes.items():
        if value <= 0:
            raise WorkloadError(f"{option} must be a positive integer, not {value}")
    if workload.hidden_size % workload.num_heads:
        raise WorkloadError(
            f"--hidden-size {workload.hidden_size} is not divisible by "
            f"--num-heads {workload.num_heads}"
        )
    if workload.num_heads % workload.num_kv_heads:
        raise WorkloadError(
            f"--num-heads {workload.num_heads} is not divisible by "
            f"--num-kv-heads {workload.num_kv_heads}"
        )
    if workload.activation not in ACTIVATIONS:
        raise WorkloadError(f"--activation must be one of {', '.join(ACTIVATIONS)}")


#: Alignment that each low-precision path needs of every GEMM dimension (te-facts §5).
ALIGNMENT = {
    "te-nvfp4": 128,
    "te-mxfp8": 32,
    "te-fp8-block": 128,
    "te-fp8-current": 16,
    "te-fp8-delayed": 16,
    "torch-fp8": 16,
}


def misalignment(workload: Workload, path_id: str) -> str:
    """Why ``path_id`` cannot run these shapes, or "" when they are aligned for it."""
    alignment = ALIGNMENT.get(path_id)
    if alignment is None:
        return ""
    dims = {"tokens (seq x batch)": workload.tokens, "hidden size": workload.hidden_size}
    dims |= {"QKV size": workload.qkv_size, "FFN hidden size": workload.ffn_hidden_size}
    bad = [f"{name} {value}" for name, value in dims.items() if value % alignment]
    if not bad:
        return ""
    verb = "is" if len(bad) == 1 else "are"
    return f"needs every GEMM dimension divisible by {alignment}: {', '.join(bad)} {verb} not"
