"""``nvidia-smi -L``, ``nvidia-smi -q`` and the header's driver/CUDA pair, one paste at a time:
every fact with its value and its source, and the lines the parser owns.

Written from the survivors of mutation testing (group triage-parsers); the tables themselves are
tested on real pastes in ``tests/test_triage_parsers.py``.
"""

from __future__ import annotations

import pytest

from te_doctor.triage.parse_common import prepare
from te_doctor.triage.parse_nvidia import SMI, parse

Observed = list[tuple[str, object, str]]
H100 = "NVIDIA H100 80GB HBM3"
UUID = "(UUID: GPU-12345678-1234-1234-1234-1234567890a{})"
LISTED = f"{SMI}: 'nvidia-smi -L: GPU 0: {H100}'"
QUERY = f"{SMI} -q: 'Driver Version: 560.35.05; CUDA Version: {{}}; Attached GPUs: {{}}'"


def observed(text: str) -> tuple[Observed, list[tuple[int, int]], list[str]]:
    found = parse(prepare(text))
    return (
        [(o.path, o.value, o.source) for o in found.observations],
        found.owned_lines,
        found.formats,
    )


def gpu_list(*names: str) -> str:
    return "".join(f"GPU {i}: {name} {UUID.format(i)}\n" for i, name in enumerate(names))


def query(cuda: str, attached: str, *names: str) -> str:
    gpus = "".join(
        f"GPU 00000000:{18 + i:02X}:00.0\n    Product Name                          : {name}\n"
        for i, name in enumerate(names)
    )
    return (
        "==============NVSMI LOG==============\n"
        "Driver Version                            : 560.35.05\n"
        f"CUDA Version                              : {cuda}\n"
        f"Attached GPUs                             : {attached}\n" + gpus
    )


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        (  # a listing followed by another line: complete, so its length is the GPU count
            gpu_list(H100, H100) + "$ next command\n",
            [
                ("gpu.name", H100, LISTED),
                ("gpu.compute_capability", "9.0", LISTED),
                ("gpus.count", 2, LISTED),
                ("gpus.distinct_names", 1, LISTED),
            ],
        ),
        (  # the last line of the paste: it may be cut, so no count
            gpu_list(H100, H100),
            [("gpu.name", H100, LISTED), ("gpu.compute_capability", "9.0", LISTED)],
        ),
        (  # MIG devices listed under their GPU do not end the listing
            f"GPU 0: {H100} {UUID.format(0)}\n"
            f"  MIG 3g.40gb     Device  0: (UUID: MIG-12345678-1234-1234-1234-1234567890ab)\n"
            f"GPU 1: NVIDIA H200 {UUID.format(1)}\ndone\n",
            [
                ("gpu.name", H100, LISTED),
                ("gpu.compute_capability", "9.0", LISTED),
                ("gpus.count", 2, LISTED),
                ("gpus.distinct_names", 2, LISTED),
            ],
        ),
    ],
    ids=["complete", "cut", "with-mig"],
)
def test_nvidia_smi_list(text: str, facts: Observed) -> None:
    assert observed(text) == (facts, [], [SMI])


def test_two_listings_in_one_paste_each_count() -> None:
    text = gpu_list(H100) + "and on the other node:\n" + gpu_list("NVIDIA L4", "NVIDIA L4") + "x\n"
    facts = [(path, value) for path, value, _ in observed(text)[0]]
    assert facts == [
        ("gpu.name", H100),
        ("gpu.compute_capability", "9.0"),
        ("gpus.count", 1),
        ("gpus.distinct_names", 1),
        ("gpu.name", "NVIDIA L4"),
        ("gpu.compute_capability", "8.9"),
        ("gpus.count", 2),
        ("gpus.distinct_names", 1),
    ]


def test_nvidia_smi_query_with_every_gpu() -> None:
    where = QUERY.format("12.6", "2")
    named = f"{SMI} -q: 'Product Name: {H100}'"
    assert observed(query("12.6", "2", H100, H100)) == (
        [
            ("driver.version", "560.35.05", where),
            ("driver.cuda_version", "12.6", where),
            ("gpus.count", 2, where),
            ("gpus.distinct_names", 1, where),
            ("gpu.name", H100, named),
            ("gpu.compute_capability", "9.0", named),
        ],
        [(1, 4), (5, 6), (7, 8)],
        [SMI],
    )


def test_nvidia_smi_query_cut_after_the_first_gpu() -> None:
    """``Attached GPUs`` still counts them; the names seen are too few to count distinct ones,
    and ``N/A`` for the CUDA version is no fact."""
    where = QUERY.format("N/A", "4")
    named = f"{SMI} -q: 'Product Name: NVIDIA L4'"
    assert observed(query("N/A", "4", "NVIDIA L4")) == (
        [
            ("driver.version", "560.35.05", where),
            ("gpus.count", 4, where),
            ("gpu.name", "NVIDIA L4", named),
            ("gpu.compute_capability", "8.9", named),
        ],
        [(1, 4), (5, 6)],
        [SMI],
    )


@pytest.mark.parametrize("attached", ["0", "1000", "many"])
def test_nvidia_smi_query_without_a_believable_count(attached: str) -> None:
    facts, _, formats = observed(f"Attached GPUs                             : {attached}\n")
    assert (facts, formats) == ([], [SMI])


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        (
            "nvidia-smi says Driver Version: 535.247.01, CUDA Version: 12.2 here\n",
            [("driver.version", "535.247.01"), ("driver.cuda_version", "12.2")],
        ),
        (
            "| Driver Version: 570.86.15 | CUDA Version: 12.8 |\n",
            [("driver.version", "570.86.15"), ("driver.cuda_version", "12.8")],
        ),
        ("Driver Version: 535 CUDA Version: 12.2\n", []),  # no minor: not a driver version
        ("Driver Version: 535.247.01, CUDA Version: 12.2", []),  # the paste's cut last line
    ],
)
def test_the_header_pair_quoted_alone(text: str, facts: list[tuple[str, object]]) -> None:
    found, _, formats = observed(text)
    assert [(path, value) for path, value, _ in found] == facts
    assert formats == ([SMI] if facts else [])
    assert {where for *_, where in found} <= {
        f"{SMI}: 'Driver Version: 535.247.01, CUDA Version: 12.2'",
        f"{SMI}: 'Driver Version: 570.86.15 | CUDA Version: 12.8'",
    }


TABLE = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   32C    P0             70W /  700W |       1MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                    0 |
| N/A   30C    P0             69W /  700W |       1MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
"""


def test_a_table_owns_every_line_from_its_top_border_to_its_last() -> None:
    text = "Here is nvidia-smi:\n" + TABLE + "and then it failed\n"
    facts, owned, formats = observed(text)
    assert owned == [(1, 16)]
    header = f"{SMI}: '| NVIDIA-SMI 550.54.15 Driver Version: 550.54.15 CUDA Version: 12.4 |'"
    rows = f"{SMI}: '2 GPU rows: {H100}, {H100}'"
    assert facts == [
        ("driver.version", "550.54.15", header),
        ("driver.cuda_version", "12.4", header),
        ("gpu.name", H100, f"{SMI}: 'GPU 0: {H100}'"),
        ("gpu.compute_capability", "9.0", f"{SMI}: 'GPU 0: {H100}'"),
        ("gpus.count", 2, rows),
        ("gpus.distinct_names", 1, rows),
    ]


def test_a_table_cut_above_its_rows_still_gives_its_gpus() -> None:
    rows_only = "\n".join(TABLE.splitlines()[3:]) + "\nnext\n"
    facts, _, formats = observed(rows_only)
    assert [(path, value) for path, value, _ in facts] == [
        ("gpu.name", H100),
        ("gpu.compute_capability", "9.0"),
        ("gpus.count", 2),
        ("gpus.distinct_names", 1),
    ]
    assert formats == [SMI]


def test_nvidia_smi_query_reads_versions_with_enough_numbers() -> None:
    text = (
        "==============NVSMI LOG==============\n"
        "Driver Version                            : 560.35\n"
        "CUDA Version                              : 12\n"
        "x\n"
    )
    assert [(p, v) for p, v, _ in observed(text)[0]] == [("driver.version", "560.35")]


def test_nvidia_smi_query_with_product_names_alone() -> None:
    text = "==============NVSMI LOG==============\n    Product Name      : NVIDIA L4\nx\n"
    facts, owned, formats = observed(text)
    assert [(p, v) for p, v, _ in facts] == [
        ("gpu.name", "NVIDIA L4"),
        ("gpu.compute_capability", "8.9"),
    ]
    assert (owned, formats) == ([(1, 2)], [SMI])


def test_a_bad_header_pair_does_not_hide_a_good_one_after_it() -> None:
    text = (
        "first: Driver Version: 535 CUDA Version: 12.2\n"
        "then: Driver Version: 535.54, CUDA Version: 12.2\n"
    )
    assert [(p, v) for p, v, _ in observed(text)[0]] == [
        ("driver.version", "535.54"),
        ("driver.cuda_version", "12.2"),
    ]
