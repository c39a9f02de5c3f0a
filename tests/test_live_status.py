"""Progress and layout: a live status on terminals only, --quiet's one line, wrapping."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

from te_doctor.cli import live
from te_doctor.render.wrap import hang, visible_length

FIXTURES = Path(__file__).parent / "fixtures"


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_a_slow_step_draws_one_line_and_erases_it() -> None:
    stream = Terminal()
    status = live.LiveStatus(True, stream)
    status.update("smoke test: gemm, te-fp8-current")
    status.start()
    time.sleep(live.DELAY_S + 3 * live.REDRAW_S)
    status.stop()
    drawn = stream.getvalue()
    assert "smoke test: gemm, te-fp8-current" in drawn and "\n" not in drawn
    assert drawn.endswith("\r\x1b[K")  # erased: the report starts on a clean line


def test_a_quick_step_shows_nothing() -> None:
    stream = Terminal()
    status = live.LiveStatus(True, stream)
    status.start()
    status.stop()
    assert stream.getvalue() == ""


def test_nothing_on_a_pipe_or_with_quiet() -> None:
    assert not live.shows_status(False, io.StringIO())
    assert not live.shows_status(True, Terminal())
    assert live.shows_status(False, Terminal())


def test_check_quiet_is_one_line_and_stderr_stays_empty_on_a_pipe() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "te_doctor", "check", "--snapshot", str(FIXTURES / "t4.json"), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stderr == ""
    assert done.stdout == (
        "te-doctor check: FAIL; FP8 not possible: Tesla T4 has compute capability 7.5: "
        "FP8 needs 8.9 (Ada) or newer (TED102); use te-fp16\n"
    )


def test_wrapping_hangs_under_the_text_and_ignores_colour_codes() -> None:
    coloured = "\x1b[31m\x1b[1m✗\x1b[0m GPU: "
    lines = hang(coloured, "word " * 30, 40)
    assert all(visible_length(line) <= 40 for line in lines)
    assert all(line.startswith(" " * visible_length(coloured)) for line in lines[1:])
    assert hang("x: ", "short", None) == ["x: short"]
