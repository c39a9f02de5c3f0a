"""Secrets never leave te-doctor; --redact also strips personal data."""

from __future__ import annotations

from pathlib import Path

from te_doctor.render.text import render_snapshot_text
from te_doctor.snapshot.file import dumps
from te_doctor.snapshot.redact import REDACTED, redact_personal, scrub_text, secret_values
from tests.snapshots import SECRETS, busy_snapshot


def all_outputs(tmp_path: Path) -> list[str]:
    snapshot = busy_snapshot(tmp_path)
    redacted = redact_personal(snapshot, home="/home/alice")
    return [
        dumps(snapshot),
        render_snapshot_text(snapshot),
        dumps(redacted),
        render_snapshot_text(redacted),
    ]


def test_planted_secrets_never_appear_in_any_output(tmp_path: Path) -> None:
    for output in all_outputs(tmp_path):
        for name, value in SECRETS.items():
            assert value not in output, f"{name} leaked"
        assert "s3cr3tpass" not in output  # credentials inside a URL
        assert "hf_AbCdEfGhIjKlMnOpQrStUvWx" not in output  # a token-shaped string in a path


def test_secret_named_variables_are_kept_as_redacted(tmp_path: Path) -> None:
    variables = busy_snapshot(tmp_path).environment.variables
    assert variables["NVTE_DEBUG_PASSWORD"] == REDACTED
    assert variables["PYTORCH_HUB_URL"] == f"https://{REDACTED}@hub.example.com/models"
    assert variables["CUDA_VISIBLE_DEVICES"].startswith("GPU-0a1b2c3d")


def test_redact_strips_host_user_home_and_gpu_ids(tmp_path: Path) -> None:
    snapshot = redact_personal(busy_snapshot(tmp_path), home="/home/alice")
    text = dumps(snapshot)
    assert snapshot.meta.redacted is True
    assert "gpu-node-07" not in text and "alice" not in text
    assert "~/.local/lib/python3.12/site-packages" in text
    assert "GPU-0a1b2c3d" not in text and "GPU-5d2b1c3e" not in text
    assert snapshot.gpus[0].serial.value == REDACTED
    assert snapshot.gpus[0].uuid.value == f"GPU-{REDACTED}"
    assert snapshot.gpus[0].name.value == "NVIDIA H100 80GB HBM3"  # what matters is kept


def test_without_redact_personal_data_stays(tmp_path: Path) -> None:
    text = dumps(busy_snapshot(tmp_path))
    assert "gpu-node-07" in text and "/home/alice" in text


def test_scrub_text_patterns() -> None:
    assert scrub_text("key AKIAIOSFODNN7EXAMPLE end", ()) == f"key {REDACTED} end"
    assert scrub_text("ghp_0123456789abcdefghijABCDEFGHIJ", ()) == REDACTED
    assert scrub_text("plain 12.4 text", ()) == "plain 12.4 text"
    assert secret_values({"A_TOKEN": "abc", "B_KEY": "abcdef", "PATH": "/usr/bin"}) == ("abcdef",)
