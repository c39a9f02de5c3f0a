"""The datasheet peaks table: it loads, real NVML names find the intended entry, and bad files
fail in one line that names the file, the entry and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from te_doctor.bench.peaks import (
    PRECISIONS,
    GpuPeaks,
    PeaksError,
    load_peaks,
    match_gpu,
    peak_for,
    peaks_file,
)
from te_doctor.errors import ExitCode

PEAKS = load_peaks()


def test_the_built_in_table_loads() -> None:
    assert peaks_file().is_file()
    assert len(PEAKS) >= 11
    assert load_peaks() is PEAKS  # cached
    assert load_peaks(peaks_file()) == PEAKS
    assert len({p.name for p in PEAKS}) == len(PEAKS)


@pytest.mark.parametrize(
    ("nvml_name", "entry"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA H200 NVL", "H200 NVL"),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM"),
        ("NVIDIA A100-SXM4-40GB", "A100 SXM"),
        ("NVIDIA A100-PCIE-40GB", "A100 PCIe"),
        ("NVIDIA A100 80GB PCIe", "A100 PCIe"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA GB200", "GB200"),
    ],
)
def test_real_device_names_find_the_intended_entry(nvml_name: str, entry: str) -> None:
    found = match_gpu(PEAKS, nvml_name)
    assert found is not None and found.name == entry
    value, reason = peak_for(PEAKS, nvml_name, "bf16")
    assert value == found.tflops["bf16"] and reason == ""


@pytest.mark.parametrize(
    "nvml_name",
    [
        "NVIDIA GeForce RTX 4090",
        "NVIDIA A10G",
        "NVIDIA L40",
        "NVIDIA GH200 480GB",
        "NVIDIA H20",
        "",
    ],
)
def test_unknown_gpus_get_no_peak_and_a_reason(nvml_name: str) -> None:
    assert match_gpu(PEAKS, nvml_name) is None
    value, reason = peak_for(PEAKS, nvml_name, "bf16")
    assert value is None and "not in te-doctor's table of datasheet peaks" in reason
    if nvml_name:
        assert reason.startswith(nvml_name)


def test_a_precision_the_datasheet_does_not_give() -> None:
    assert peak_for(PEAKS, "NVIDIA H100 80GB HBM3", "fp4") == (
        None,
        "the datasheet gives no fp4 peak for H100 SXM",
    )
    assert peak_for(PEAKS, "NVIDIA A100-SXM4-80GB", "fp8")[0] is None
    value, reason = peak_for(PEAKS, "NVIDIA H100 80GB HBM3", "int8")
    assert value is None and "'int8'" in reason


def test_known_figures() -> None:
    h100 = peak_for(PEAKS, "NVIDIA H100 80GB HBM3", "fp8")[0]
    assert h100 == pytest.approx(3958 / 2, rel=1e-3)
    b200 = match_gpu(PEAKS, "NVIDIA B200")
    assert b200 is not None and b200.tflops["fp4"] == 144_000 / 8 / 2


@pytest.mark.parametrize("entry", PEAKS, ids=lambda e: e.name)
def test_table_invariants(entry: GpuPeaks) -> None:
    t = entry.tflops
    assert set(t) <= set(PRECISIONS)
    assert {"fp32", "tf32", "bf16", "fp16"} <= set(t)
    assert all(v > 0 for v in t.values())
    # Datasheets give one figure for BF16 and FP16, and TF32 at half of it.
    assert t["bf16"] == t["fp16"]
    assert t["tf32"] == pytest.approx(t["bf16"] / 2, rel=0.02)
    assert t["fp32"] < t["tf32"] < t["bf16"]
    if "fp8" in t:
        assert t["fp8"] == pytest.approx(2 * t["bf16"], rel=0.02)
    if "fp4" in t:
        assert "fp8" in t and t["fp4"] == pytest.approx(2 * t["fp8"], rel=0.02)
    assert entry.source.startswith("https://")


def test_more_specific_entries_come_first() -> None:
    order = [p.name for p in PEAKS]
    for specific, general in [
        ("H100 NVL", "H100 SXM"),
        ("H100 PCIe", "H100 SXM"),
        ("H200 NVL", "H200"),
        ("GB200", "B200"),
        ("L40S", "L4"),
    ]:
        assert order.index(specific) < order.index(general)


GOOD = """\
schema = 1

[[gpu]]
name = "X100"
pattern = '\\bX100\\b'
source = "https://example.com/x100"
bf16 = 100.0

[[gpu]]
name = "L4"
pattern = '\\bL4\\b'
source = "https://example.com/l4"
bf16 = 121.0
fp8 = 242.5
"""


def test_a_good_file_loads(tmp_path: Path) -> None:
    file = tmp_path / "peaks.toml"
    file.write_text(GOOD.replace("bf16 = 100.0", "bf16 = 100"), encoding="utf-8")
    x100, l4 = load_peaks(file)
    assert x100.tflops == {"bf16": 100.0} and isinstance(x100.tflops["bf16"], float)
    assert peak_for((x100, l4), "ACME L4", "fp8") == (242.5, "")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("fp8 = 242.5", "fp8 = 0.0", "gpu[1] (L4): fp8: must be a positive number"),
        ("fp8 = 242.5", "fp8 = -1", "gpu[1] (L4): fp8: must be a positive number"),
        ("fp8 = 242.5", 'fp8 = "242.5"', "gpu[1] (L4): fp8: must be a positive number"),
        ("fp8 = 242.5", "fp8 = true", "gpu[1] (L4): fp8: must be a positive number"),
        ("fp8 = 242.5", "fp8 = nan", "gpu[1] (L4): fp8: must be a positive number"),
        ("fp8 = 242.5", "int8 = 485.0", "gpu[1] (L4): unknown key 'int8'"),
        ("fp8 = 242.5", "fp_8 = 1.0", "gpu[1] (L4): unknown key 'fp_8' (did you mean 'fp8'?)"),
        ('name = "L4"\n', "", "gpu[1]: missing required key 'name'"),
        ('source = "https://example.com/l4"\n', "", "gpu[1] (L4): missing required key 'source'"),
        ("pattern = '\\bL4\\b'\n", "", "gpu[1] (L4): missing required key 'pattern'"),
        ("pattern = '\\bL4\\b'", "pattern = 'L4('", "gpu[1] (L4): pattern: not a valid regular"),
        ("pattern = '\\bL4\\b'", "pattern = 4", "gpu[1] (L4): pattern: expected a non-empty"),
        ('name = "L4"', 'name = ""', "gpu[1]: name: expected a non-empty string"),
        ('name = "L4"', 'name = "X100"', "gpu[1] (X100): name: already used"),
        ("bf16 = 121.0\nfp8 = 242.5\n", "", "gpu[1] (L4): no peak given"),
        ("schema = 1", "schema = 2", "schema: expected 1, got 2"),
        ("schema = 1", "", "schema: expected 1, got None"),
        ("schema = 1", "schema = 1\nversion = 3", "unknown key 'version'"),
        ('[[gpu]]\nname = "X100"', '[[gpus]]\nname = "X100"', "unknown key 'gpus'"),
        (GOOD, "schema = 1\ngpu = 3\n", "gpu: expected one or more [[gpu]] tables"),
        (GOOD, "schema = 1\n", "gpu: expected one or more [[gpu]] tables"),
        ("schema = 1", "schema = = 1", "not valid TOML"),
    ],
)
def test_malformed_files_name_the_file_entry_and_field(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in GOOD
    file = tmp_path / "peaks.toml"
    file.write_text(GOOD.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(PeaksError) as caught:
        load_peaks(file)
    text = str(caught.value)
    assert text.startswith(f"{file}: ") and message in text, text
    assert "\n" not in text
    assert caught.value.exit_code == ExitCode.USAGE


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PeaksError, match="peaks.toml: cannot read"):
        load_peaks(tmp_path / "peaks.toml")
