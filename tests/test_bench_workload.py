"""The bench workload: shapes, analytic FLOP counts, validation, alignment, memory estimate."""

from __future__ import annotations

import pytest

from te_doctor.bench.workload import (
    PRESETS,
    WorkloadError,
    build_workload,
    estimate_memory_bytes,
    misalignment,
    step_flops,
)


def test_gpt2_small_flops_match_the_hand_count() -> None:
    workload = build_workload("gpt2-small")
    # QKV 768x2304, attention-out 768x768, FC1 768x3072, FC2 3072x768, 1024 tokens.
    forward_gemms = 2 * 1024 * (768 * 2304 + 768 * 768 + 768 * 3072 + 3072 * 768)
    assert forward_gemms == 14_495_514_624
    attention = 4 * 1 * 1024 * 1024 * 768  # QK^T and PV over 12 heads of 64
    assert step_flops(workload, "gemms") == 3 * forward_gemms == 43_486_543_872
    assert step_flops(workload, "mlp") == 3 * 2 * 1024 * (768 * 3072 * 2)
    assert step_flops(workload, "layer") == 3 * (forward_gemms + attention) == 53_150_220_288


def test_llama_presets_use_grouped_query_attention_and_swiglu() -> None:
    workload = build_workload("llama-3-8b")
    assert workload.head_dim == 128
    assert workload.qkv_size == 4096 + 2 * 8 * 128
    assert [(g.name, g.k, g.n) for g in workload.gemms()] == [
        ("qkv", 4096, 6144),
        ("attention-out", 4096, 4096),
        ("fc1", 4096, 2 * 14336),
        ("fc2", 14336, 4096),
    ]
    assert build_workload("llama-3-70b").qkv_size == 8192 + 2 * 8 * 128


def test_every_preset_names_its_source() -> None:
    for name, (workload, source) in PRESETS.items():
        assert workload.name == name and "config.json" in source


def test_options_override_the_preset_and_rename_it() -> None:
    workload = build_workload("llama-3-8b", seq_len=2048, batch_size=None)
    assert (workload.name, workload.seq_len, workload.num_kv_heads) == (
        "llama-3-8b (modified)",
        2048,
        8,
    )
    custom = build_workload(None, hidden_size=64, num_heads=4)
    assert (custom.name, custom.num_kv_heads, custom.ffn_hidden_size) == ("custom", 4, 3072)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"hidden_size": 0}, "--hidden-size must be a positive integer, not 0"),
        ({"seq_len": -8}, "--seq-len must be a positive integer, not -8"),
        (
            {"hidden_size": 100, "num_heads": 12},
            "--hidden-size 100 is not divisible by --num-heads 12",
        ),
        (
            {"num_heads": 12, "num_kv_heads": 5},
            "--num-heads 12 is not divisible by --num-kv-heads 5",
        ),
        ({"activation": "relu"}, "--activation must be one of gelu, swiglu"),
    ],
)
def test_shapes_no_path_can_run_are_rejected_with_the_option(
    overrides: dict[str, int | str], message: str
) -> None:
    with pytest.raises(WorkloadError, match=message):
        build_workload(None, **overrides)


def test_misaligned_shapes_are_reasons_for_fp8_paths_only() -> None:
    workload = build_workload(None, seq_len=1000, hidden_size=768)
    assert misalignment(workload, "te-fp8-current") == (
        "needs every GEMM dimension divisible by 16: tokens (seq x batch) 1000 is not"
    )
    assert misalignment(workload, "te-bf16") == ""
    aligned = build_workload(None, seq_len=1024)
    assert misalignment(aligned, "torch-fp8") == ""
    assert misalignment(aligned, "te-fp8-block") == ""  # 768 = 6 x 128
    odd = build_workload(None, hidden_size=832, num_heads=13)
    assert misalignment(odd, "te-fp8-current") == ""
    assert misalignment(odd, "te-fp8-block") == (
        "needs every GEMM dimension divisible by 128: hidden size 832, QKV size 2496 are not"
    )


def test_memory_estimate_grows_with_the_square_of_the_sequence() -> None:
    short = estimate_memory_bytes(build_workload(None, seq_len=1024))
    long = estimate_memory_bytes(build_workload(None, seq_len=8192))
    assert 50 * 1024**2 < short < 2 * 1024**3
    assert long > 20 * short
