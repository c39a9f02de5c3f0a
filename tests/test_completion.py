"""Shell completion (click's): the bash script the README tells users to load, run in a real
bash against the installed te-doctor; zsh and fish scripts are generated."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
BIN = Path(sys.executable).parent


def te_doctor_on_path() -> dict[str, str]:
    if shutil.which("te-doctor", path=str(BIN)) is None:
        pytest.fail(f"no te-doctor console script in {BIN}: pip install -e '.[dev]'")
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def bash_completions(words: list[str]) -> list[str]:
    """What bash offers after ``words`` (the last one being completed), via the README's line."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.fail("bash is not installed")
    script = (
        'eval "$(_TE_DOCTOR_COMPLETE=bash_source te-doctor)"\n'
        f"COMP_WORDS=({' '.join(repr(w) for w in words)})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        "_te_doctor_completion te-doctor\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    result = subprocess.run(
        [bash, "-c", script], env=te_doctor_on_path(), capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["te-doctor", "ch"], ["check"]),
        (["te-doctor", "check", "--fo"], ["--format", "--for"]),
        (["te-doctor", "check", "--for", "l"], ["lightning"]),
        (["te-doctor", "check", "--require", "fp"], ["fp16", "fp32", "fp8"]),
        (["te-doctor", "fleet", "n"], ["node"]),
        (["te-doctor", "fleet", "aggregate", "--format", "p"], ["prometheus"]),
        (["te-doctor", "explain", "TED10"], [f"TED10{n}" for n in range(10)]),
    ],
)
def test_bash_completes_commands_options_and_values(words: list[str], expected: list[str]) -> None:
    offered = bash_completions(words)
    if words[1] == "explain":  # every TED10x rule, whichever exist
        assert offered and all(re.fullmatch(r"TED10\d", o) for o in offered), offered
        assert set(offered) <= set(expected)
    else:
        assert sorted(offered) == sorted(expected)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_a_script(shell: str) -> None:
    result = subprocess.run(
        ["te-doctor"],
        env={**te_doctor_on_path(), "_TE_DOCTOR_COMPLETE": f"{shell}_source"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "_TE_DOCTOR_COMPLETE" in result.stdout and "te-doctor" in result.stdout


def test_the_readme_documents_the_lines_tested_here() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'eval "$(_TE_DOCTOR_COMPLETE=bash_source te-doctor)"' in readme
    assert "_TE_DOCTOR_COMPLETE=zsh_source te-doctor" in readme
    assert "_TE_DOCTOR_COMPLETE=fish_source te-doctor" in readme
