"""collect_env's ``GCC version`` and ``cuDNN version`` lines as machines print them, one value at
a time.

Written from the survivors of mutation testing (group triage-parsers); whole collect_env reports
are tested in ``tests/test_triage_parsers.py``.
"""

from __future__ import annotations

import pytest

from te_doctor.triage.parsers import parse_report

REPORT = """PyTorch version: 2.6.0+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
GCC version: {gcc}
Python version: 3.12.3 (main, Nov  6 2024, 18:32:19) [GCC 13.2.0] (64-bit runtime)
Is CUDA available: True
"""


@pytest.mark.parametrize(
    ("gcc", "version"),
    [
        ("(Ubuntu 9.4.0-1ubuntu1~20.04.2) 9.4.0", "9.4.0"),
        ("(GCC) 11.4.1 20230605 (Red Hat 11.4.1-2)", "11.4.1"),
        ("(Debian 12.2.0-14) 12.2.0", "12.2.0"),
        ("gcc (GCC) 8.5.0 20210514", "8.5.0"),
        ("Could not collect", None),
    ],
)
def test_the_gcc_line(gcc: str, version: str | None) -> None:
    facts = parse_report(REPORT.format(gcc=gcc)).facts
    assert facts.get("build.cxx_version") == version
    assert facts.get("build.cxx") == ("gcc" if version else None)
    assert facts["torch.version"] == "2.6.0+cu124"  # the rest of the report is still read


CUDNN_REPORT = """PyTorch version: 2.6.0+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
cuDNN version: {cudnn}
HIP runtime version: N/A
"""


@pytest.mark.parametrize(
    ("cudnn", "version", "distinct"),
    [
        ("9.1.0", "9.1.0", None),
        ("8.9.7.29", "8.9.7.29", None),
        ("9", None, None),  # a bare major is not a release
        ("Could not collect", None, None),
        ("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0", "9.1.0", None),
        (
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n"
            "/usr/lib/libcudnn_ops_infer.so.8.9.7\n/usr/lib/libcudnn_adv_train.so.8.9.7",
            "8.9.7",
            None,
        ),
        (  # two patch releases of one minor: which loads is not said
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n/opt/libcudnn.so.8.9.2",
            None,
            None,
        ),
        (  # two releases: two copies
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n/opt/libcudnn.so.9.1.0",
            None,
            2,
        ),
        (  # a bare major of another release counts as one more
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n/opt/libcudnn.so.9",
            None,
            2,
        ),
        (  # a bare major of the same release is that release
            "Probably one of the following:\n/usr/lib/libcudnn.so.8.9.7\n/usr/lib/libcudnn.so.8",
            "8.9.7",
            None,
        ),
        (
            "Probably one of the following:\nC:\\cuda\\cudnn64_8.dll\nC:\\x\\cudnn_ops64_9.dll",
            None,
            2,
        ),
        ("Probably one of the following:\nC:\\cuda\\bin\\cudnn64_9.dll", None, None),
        (  # the longest spelling of the one release is kept
            "Probably one of the following:\n/lib/libcudnn.so.8.9.7\n/lib/libcudnn.so.8.9.7.29",
            "8.9.7.29",
            None,
        ),
    ],
)
def test_the_cudnn_line(cudnn: str, version: str | None, distinct: int | None) -> None:
    facts = parse_report(CUDNN_REPORT.format(cudnn=cudnn)).facts
    assert facts.get("cudnn.version") == version
    assert facts.get("cudnn.distinct_versions") == distinct
    assert facts["torch.version"] == "2.6.0+cu124"


def test_a_cudnn_file_list_at_the_end_of_the_paste_states_no_version() -> None:
    """The paste may end inside the list, hiding another release; the next key ends it."""
    text = "PyTorch version: 2.6.0\nIs debug build: False\ncuDNN version: Probably one of the "
    text += "following:\n/usr/lib/libcudnn.so.8.9.7\n/usr/lib/libcudnn_ops.so.8.9.7\n"
    assert "cudnn.version" not in parse_report(text).facts
    ended = parse_report(text + "HIP runtime version: N/A\n").facts
    assert ended["cudnn.version"] == "8.9.7"
