"""The bench components (the layer's GEMMs, an MLP, a whole layer) in torch, torch FP8 and TE."""

from __future__ import annotations

from typing import Any

from _te_doctor_bench_path import Path


def activate(torch: Any, hidden: Any, activation: str) -> Any:
    functional = torch.nn.functional
    if activation == "swiglu":
        gate, value = hidden.chunk(2, dim=-1)
        return functional.silu(gate) * value
    return functional.gelu(hidden, approximate="tanh")


def native_modules(path: Path, workload: dict[str, Any]) -> tuple[Any, Any]:
    """(MLP, transformer layer) built from torch modules and ``path.linear``."""
    torch = path.torch
    hidden, ffn = workload["hidden_size"], workload["ffn_hidden_size"]
    heads, kv_heads = workload["num_heads"], workload["num_kv_heads"]
    activation = workload["activation"]
    fc1_size = ffn * (2 if activation == "swiglu" else 1)
    head_dim = hidden // heads

    module: Any = torch.nn.Module

    class Mlp(module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(hidden)
            self.fc1, self.fc2 = path.linear(hidden, fc1_size), path.linear(ffn, hidden)

        def forward(self, x: Any) -> Any:
            return self.fc2(activate(torch, self.fc1(self.norm(x)), activation))

    class Layer(module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(hidden)
            self.qkv = path.linear(hidden, hidden + 2 * kv_heads * head_dim)
            self.proj = path.linear(hidden, hidden)
            self.mlp = Mlp()

        def forward(self, x: Any) -> Any:  # x: [seq, batch, hidden]
            seq, batch, _ = x.shape
            q, k, v = self.qkv(self.norm(x)).split(
                [hidden, kv_heads * head_dim, kv_heads * head_dim], dim=-1
            )
            q = q.reshape(seq, batch, heads, head_dim).permute(1, 2, 0, 3)
            k = k.reshape(seq, batch, kv_heads, head_dim).permute(1, 2, 0, 3)
            v = v.reshape(seq, batch, kv_heads, head_dim).permute(1, 2, 0, 3)
            if kv_heads != heads:
                k = k.repeat_interleave(heads // kv_heads, dim=1)
                v = v.repeat_interleave(heads // kv_heads, dim=1)
            attention = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            x = x + self.proj(attention.permute(2, 0, 1, 3).reshape(seq, batch, hidden))
            return x + self.mlp(x)

    return Mlp().to(path.device), Layer().to(path.device)


def te_modules(path: Path, workload: dict[str, Any]) -> tuple[Any, Any]:
    """(te.LayerNormMLP, te.TransformerLayer) in the path's parameter dtype."""
    te = path.te
    common = {"params_dtype": path.params_dtype, "device": path.device}
    mlp = te.LayerNormMLP(
        workload["hidden_size"],
        workload["ffn_hidden_size"],
        bias=False,
        activation=workload["activation"],
        **common,
    )
    layer = te.TransformerLayer(
        workload["hidden_size"],
        workload["ffn_hidden_size"],
        workload["num_heads"],
        num_gqa_groups=workload["num_kv_heads"],
        hidden_dropout=0.0,
        attention_dropout=0.0,
        self_attn_mask_type="no_mask",
        activation=workload["activation"],
        **common,
    )
    return mlp, layer


class Component:
    """Modules and inputs of one component; ``step`` is one training step."""

    def __init__(self, path: Path, name: str, workload: dict[str, Any]) -> None:
        torch = path.torch
        self.path, self.name = path, name
        torch.manual_seed(0)
        tokens = workload["seq_len"] * workload["batch_size"]
        hidden, ffn = workload["hidden_size"], workload["ffn_hidden_size"]
        if name == "gemms":
            qkv = hidden + 2 * workload["num_kv_heads"] * (hidden // workload["num_heads"])
            fc1 = ffn * (2 if workload["activation"] == "swiglu" else 1)
            shapes = [(hidden, qkv), (hidden, hidden), (hidden, fc1), (ffn, hidden)]
            self.modules = [path.linear(k, n) for k, n in shapes]
            self.inputs = [self._input(tokens, k) for k, _ in shapes]
        else:
            maker = te_modules if path.family == "te" else native_modules
            mlp, layer = maker(path, workload)
            if name == "mlp":
                self.modules, self.inputs = [mlp], [self._input(tokens, hidden)]
            else:
                shape = (workload["seq_len"], workload["batch_size"], hidden)
                self.modules, self.inputs = [layer], [self._input(*shape)]
        self.grads: list[Any] = []

    def _input(self, *shape: int) -> Any:
        torch = self.path.torch
        return torch.randn(*shape, device=self.path.device, dtype=self.path.input_dtype)

    def forward(self) -> list[Any]:
        dtype = self.path.input_dtype
        inputs = [x.detach().to(dtype).requires_grad_() for x in self.inputs]
        with self.path.forward_context():
            return [module(x) for module, x in zip(self.modules, inputs)]  # noqa: B905 -- Python 3.8

    def step(self) -> None:
        for module in self.modules:
            for parameter in module.parameters():
                parameter.grad = None
        outputs = self.forward()
        if not self.grads:
            torch = self.path.torch
            self.grads = [torch.randn_like(out) for out in outputs]
        for out, grad in zip(outputs, self.grads):  # noqa: B905 -- Python 3.8
            out.backward(grad)
