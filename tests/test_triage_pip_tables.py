"""``pip list`` and ``conda list`` tables (parse_packages), as pasted: whole, grepped, mixed in.

Written from the survivors of mutation testing (group triage-parsers): what makes a run of
aligned lines a package table, and what does not.
"""

from __future__ import annotations

import pytest

from te_doctor.triage.parse_common import prepare
from te_doctor.triage.parse_packages import parse
from te_doctor.triage.parsers import parse_report


def table(text: str) -> tuple[dict[str, object], list[str], list[tuple[int, int]]]:
    found = parse(prepare(text))
    return (
        {o.path: o.value for o in found.observations},
        found.formats,
        found.owned_lines,
    )


PIP_LIST = """Package            Version
------------------ -----------
torch              2.6.0+cu124
transformer_engine 2.1.0
"""


def test_a_pip_list_with_its_header() -> None:
    facts, formats, owned = table(PIP_LIST)
    assert facts == {"packages.torch": "2.6.0+cu124", "packages.transformer_engine": "2.1.0"}
    assert (formats, owned) == (["pip-list"], [(2, 4)])


def test_a_header_makes_two_rows_a_table_even_one_space_apart() -> None:
    assert table("Package Version\ntorch  2.6.0\ntriton 3.2.0\n")[0] == {
        "packages.torch": "2.6.0",
        "packages.triton": "3.2.0",
    }
    assert table("torch 2.6.0\nnumpy 2.1.0\nscipy 1.1.0\n")[0] == {}  # no column gap


def test_a_grepped_pip_list_needs_three_aligned_rows() -> None:
    rows = "torch              2.6.0\ntriton             3.2.0\nflash_attn         2.7.4\n"
    assert table(rows)[0] == {
        "packages.torch": "2.6.0",
        "packages.triton": "3.2.0",
        "packages.flash_attn": "2.7.4",
    }
    assert table("torch              2.6.0\ntriton             3.2.0\n")[0] == {}


@pytest.mark.parametrize(
    "text",
    [
        "torch 2.6.0\ntriton 3.2.0\nflash_attn 2.7.4\n",  # single spaces: sentences, not columns
        "torch   2.6.0\ntorch   2.5.0\ntriton  3.2.0\n",  # a name twice: not pip or conda
        "a   1.0\nb   x\nc   y\nd   z\n",  # mostly not versions
        "drwxr-xr-x  2 root\n-rw-r--r--  1 root\n-rw-r--r--  1 root\n",
        "torch   2.6.0\ntriton    3.2.0\nflash_attn  2.7.4\n",  # the versions do not line up
        "x" * 790 + "   1.0\n" + "y" * 790 + "   1.0\n" + "z" * 790 + "   1.0\n",  # too long
    ],
)
def test_what_is_not_a_package_table(text: str) -> None:
    assert table(text)[0] == {}


def test_a_conda_list_is_told_apart_by_its_build_strings() -> None:
    text = (
        "# Name                    Version                   Build  Channel\n"
        "pytorch                   2.5.1           py3.11_cuda12.4_cudnn9.1.0_0    pytorch\n"
        "cudnn                     9.1.1.17             cuda12_0    nvidia\n"
        "transformer-engine        2.1.0                    pypi_0    pypi\n"
    )
    facts, formats, _ = table(text)
    assert formats == ["conda-list"]
    assert facts["packages.transformer_engine"] == "2.1.0"
    assert facts["packages.cudnn"] == "9.1.1.17"


def test_a_table_in_another_column_starts_a_new_table() -> None:
    text = (
        "torch      2.6.0\ntriton     3.2.0\nnumpy      2.1.0\n"
        "flash_attn   2.7.4\nxformers     0.0.29\ntransformers 4.48.0\n"
    )
    facts, _, owned = table(text)
    assert facts == {
        "packages.torch": "2.6.0",
        "packages.triton": "3.2.0",
        "packages.numpy": "2.1.0",
        "packages.flash_attn": "2.7.4",
        "packages.xformers": "0.0.29",
        "packages.transformers": "4.48.0",
    }
    assert owned == [(0, 6)]


def test_table_lines_are_not_left_for_the_error_signatures() -> None:
    text = PIP_LIST + "RuntimeError: boom\n"
    assert parse_report(text).unread_text.splitlines()[-1] == "RuntimeError: boom"
    assert "torch" not in parse_report(text).unread_text
