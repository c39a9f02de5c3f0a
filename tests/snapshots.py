"""A richly populated snapshot for codec, redaction and CLI tests."""

from __future__ import annotations

from pathlib import Path

from te_doctor.probes.collect import collect_snapshot
from te_doctor.snapshot.model import Snapshot
from tests.fakes import SITE, FakeGpu, FakeMachine, FakeNvml

SECRETS = {
    "HF_TOKEN": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
    "MY_SERVICE_TOKEN": "tok-9f8e7d6c5b4a",
    "DB_PASSWORD": "correct-horse-battery",
    "NVTE_DEBUG_PASSWORD": "nvte-secret-value",
}


def busy_machine(root: Path) -> FakeMachine:
    """Two H100s, torch and TE installed, secrets and home paths in the environment."""
    machine = FakeMachine(root)
    machine.nvml = FakeNvml(
        gpus=[
            FakeGpu("NVIDIA H100 80GB HBM3", (9, 0)),
            FakeGpu(
                "NVIDIA H100 80GB HBM3", (9, 0), uuid="GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"
            ),
        ]
    )
    machine.sys_path = [SITE, "/home/alice/.local/lib/python3.12/site-packages"]
    machine.add_dist("torch", "2.4.0+cu121")
    machine.write(
        f"{SITE}/torch/version.py", "__version__ = '2.4.0+cu121'\ncuda = '12.1'\ndebug = False\n"
    )
    machine.add_dist(
        "transformer-engine", "2.20.2", site="/home/alice/.local/lib/python3.12/site-packages"
    )
    machine.write(f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9")
    machine.add_dist("nvidia-cudnn-cu12", "9.1.0.70")
    machine.env.update(SECRETS)
    machine.env.update(
        HOME="/home/alice",
        CUDA_VISIBLE_DEVICES="GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d",
        PYTORCH_HUB_URL="https://alice:s3cr3tpass@hub.example.com/models",
        NVTE_DEBUG_LOG="/home/alice/logs/te-debug-hf_AbCdEfGhIjKlMnOpQrStUvWx.log",
        LD_LIBRARY_PATH="/home/alice/cudnn/lib:" + SECRETS["MY_SERVICE_TOKEN"],
    )
    return machine


def busy_snapshot(root: Path) -> Snapshot:
    """The snapshot of :func:`busy_machine`."""
    return collect_snapshot(busy_machine(root).context())
