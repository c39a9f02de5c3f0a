"""The real command runner never raises and never hangs."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from te_doctor.probes.context import NOT_FOUND, TIMED_OUT, run_command


def test_missing_tool_is_127() -> None:
    result = run_command(["te-doctor-no-such-tool"], timeout=2)
    assert result.returncode == NOT_FOUND
    assert result.describe() == "te-doctor-no-such-tool: not found"


def test_hanging_tool_is_killed_at_the_timeout(tmp_path: Path) -> None:
    script = tmp_path / "hang.sh"
    # A child that also spawns a grandchild holding the pipes: the whole group must die.
    script.write_text("#!/bin/sh\nsleep 30 &\nsleep 30\n")
    script.chmod(0o755)
    started = time.monotonic()
    result = run_command([str(script)], timeout=0.5)
    assert time.monotonic() - started < 5
    assert result.returncode == TIMED_OUT
    assert "did not answer" in result.describe()


def test_failing_tool_reports_exit_code_and_first_stderr_line() -> None:
    result = run_command([sys.executable, "-c", "import sys; sys.exit('boom')"], timeout=10)
    assert result.returncode == 1
    assert result.describe().endswith("exit 1: boom")


def test_not_executable_is_126(tmp_path: Path) -> None:
    target = tmp_path / "plain.txt"
    target.write_text("not a program")
    assert run_command([str(target)], timeout=2).returncode == 126


def test_output_is_captured() -> None:
    result = run_command([sys.executable, "-c", "print('hello')"], timeout=10)
    assert result.ok and result.stdout.strip() == "hello"
