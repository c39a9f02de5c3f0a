"""Edges of error capture (engine/error_capture), each a case a survivor of mutation testing
showed no test had: the 300-character line cap, nvidia-smi rows, continuation lines, a
traceback under a rank prefix, the code above a cut traceback."""

from __future__ import annotations

import pytest

from te_doctor.engine import error_capture
from te_doctor.engine.error_capture import capture_errors, error_facts, last_error_line


def captured(text: str) -> list[str]:
    return capture_errors(text.splitlines()).text.splitlines()


def test_the_line_shown_is_cut_at_300_characters() -> None:
    long = "RuntimeError: " + "x" * 400
    assert last_error_line(long) == long[:300]
    assert last_error_line("") == ""
    assert last_error_line("\n  \n") == ""
    assert last_error_line("just some words") == "just some words"  # no error: the last line


def test_a_killed_child_shows_te_doctors_first_line_cut_at_300() -> None:
    text = "killed by SIGSEGV " + "y" * 400 + "\nRuntimeError: later\n"
    facts = error_facts(text, "smoke", outcome="signal")
    assert facts["smoke.error_line"].value == text.splitlines()[0][:300]
    assert error_facts("\n\n", "smoke", outcome="timeout")["smoke.error_line"].value == ""
    other = error_facts(text, "smoke", outcome="error")["smoke.error_line"].value
    assert other == "RuntimeError: later"


def test_nvidia_smi_rows_are_never_error_lines() -> None:
    rows = "|   0  NVIDIA H100   Off | ERR!   Not Supported |\n| N/A  RuntimeError N/A |\n"
    assert captured(rows) == []
    assert captured("  RuntimeError: CUDA error\n") == ["  RuntimeError: CUDA error"]


def test_an_exception_message_continues_on_more_indented_lines_only() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 1, in <module>\n'
        "RuntimeError: first line\n"
        "    second line of the message\n"
        "unrelated log line\n"
    )
    lines = captured(text)
    assert lines[3] == "    second line of the message"
    assert "unrelated log line" not in lines


def test_a_traceback_under_a_rank_prefix_keeps_the_prefix_shape() -> None:
    text = (
        "[rank3]: Traceback (most recent call last):\n"
        '[rank3]:   File "train.py", line 1, in <module>\n'
        "[rank3]: RuntimeError: boom\n"
        "[rank3]:     and the rest of its message\n"
        "[rank12]:   a line of another rank\n"
    )
    lines = captured(text)
    assert lines[-2:] == ["[rank3]: RuntimeError: boom", "[rank3]:     and the rest of its message"]
    assert len(lines) == 4  # rank 12's line is not rank 3's message going on


def test_the_code_above_an_exception_whose_header_was_cut_is_kept_up_to_four_lines() -> None:
    text = (
        "unrelated\n"
        "        a = 1\n"
        "        b = 2\n"
        "        c = 3\n"
        "        d = 4\n"
        "        so_path = next(iter(found))\n"
        "StopIteration\n"
    )
    lines = captured(text)
    assert lines[-1] == "StopIteration"
    assert "        so_path = next(iter(found))" in lines
    assert "        a = 1" not in lines and "unrelated" not in lines
    assert len(lines) == 5


def test_a_traceback_whose_header_was_cut_is_still_a_traceback() -> None:
    text = '  File "a.py", line 3, in f\n    x = g()\nValueError: bad\nunrelated words\n'
    found = capture_errors(text.splitlines())
    assert found.text.splitlines() == text.splitlines()[:3]
    assert found.traceback is True


def test_a_bulleted_frame_line_is_not_a_traceback() -> None:
    for bullet in ("-", "*"):
        found = capture_errors([f'{bullet} /src/train.py", line 3, in main', "  see the docs"])
        assert (found.text, found.traceback) == ("", False)
    found = capture_errors(['  /src/train.py", line 3, in main', "    step()"])
    assert found.traceback is True  # the same line unbulleted: a frame whose quote was cut


def test_a_traceback_may_end_in_an_exception_that_is_no_error() -> None:
    for last in ("KeyboardInterrupt", "SystemExit: 2"):
        text = f'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\n{last}\n'
        assert captured(text)[-1] == last


def test_an_indented_traceback_ends_at_its_exception() -> None:
    text = (
        "    Traceback (most recent call last):\n"
        '      File "a.py", line 1, in <module>\n'
        "    ValueError: bad\n"
        "  next log line\n"
    )
    assert captured(text) == text.splitlines()[:3]


def test_a_line_after_the_frames_that_is_no_exception_ends_the_traceback() -> None:
    text = 'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nsome words\n'
    assert captured(text) == text.splitlines()[:2]


def test_a_traceback_block_holds_at_most_400_lines() -> None:
    lines = ["Traceback (most recent call last):"] + [f"  frame {n}" for n in range(600)]
    assert len(captured("\n".join(lines))) == 400


def test_an_error_said_twice_is_captured_once() -> None:
    assert captured("RuntimeError: boom\nsome log\nRuntimeError: boom\n") == ["RuntimeError: boom"]


def test_capture_stops_once_the_text_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each block counts its length and a newline; capture stops once the count reaches the cap,
    and the text is cut at it."""
    lines = [f"RuntimeError: failure number {n}" for n in range(5)]  # 30 characters each
    text = "\n".join(lines)
    for cap, expected in ((40, [lines[0], lines[1][:9]]), (62, lines[:2]), (63, [*lines[:2], "R"])):
        monkeypatch.setattr(error_capture, "MAX_ERROR_TEXT", cap)
        assert captured(text) == expected, cap


def test_code_above_a_later_exception_stops_at_the_block_before() -> None:
    text = "RuntimeError: first\n        so_path = next(iter(found))\nStopIteration\n"
    assert captured(text) == text.splitlines()
