"""The probe context: the real command runner never raises and never hangs, one-level globs
answer as pathlib does, and a value shared by probes is computed once."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from te_doctor.background import forget_interrupts, on_signal
from te_doctor.probes import commands
from te_doctor.probes.commands import NOT_FOUND, TIMED_OUT, run_command, stop_running_commands
from tests.fakes import FakeMachine


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


def test_a_command_just_started_in_another_thread_is_still_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C can end te-doctor while another thread's child runs but that thread has not yet
    recorded it (it waits for the GIL after the child started): the exit must still kill it."""
    real_popen = commands.subprocess.Popen
    started = threading.Event()
    children: list[int] = []

    def slow_to_return(*args: object, **kwargs: object) -> object:
        proc = real_popen(*args, **kwargs)  # type: ignore[call-overload]
        children.append(proc.pid)
        started.set()
        time.sleep(0.5)  # the thread is descheduled before run_command records the child
        return proc

    monkeypatch.setattr(commands.subprocess, "Popen", slow_to_return)
    runner = threading.Thread(
        target=run_command, args=(["sleep", "30"],), kwargs={"timeout": 60}, daemon=True
    )
    runner.start()
    assert started.wait(10)
    stop_running_commands()  # what the interpreter's exit runs
    runner.join(10)
    assert not runner.is_alive(), "the child was left running (run_command still waits on it)"


def test_ctrl_c_while_the_child_starts_stops_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C can reach the main thread after the child started but before ``Popen`` returned
    (a loaded machine): the interrupt waits until the child is held, then stops it."""
    real_popen = commands.subprocess.Popen
    children: list[int] = []

    def interrupted_while_returning(*args: object, **kwargs: object) -> object:
        proc = real_popen(*args, **kwargs)  # type: ignore[call-overload]
        children.append(proc.pid)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # the handler runs here, inside Popen as far as the caller knows
        return proc

    monkeypatch.setattr(commands.subprocess, "Popen", interrupted_while_returning)
    previous = signal.signal(signal.SIGINT, lambda number, frame: on_signal(""))
    try:
        with pytest.raises(KeyboardInterrupt):
            run_command(["sleep", "30"], timeout=60)
    finally:
        signal.signal(signal.SIGINT, previous)
        forget_interrupts()
    with pytest.raises(ProcessLookupError):
        os.kill(children[0], 0)  # killed and reaped


NAMES = (
    "libcudnn.so",
    "libcudnn.so.9",
    "libcudnn.so.9.1.0",
    "libcudnn_ops.so.9",
    "libcublas.so.12",
    ".hidden.so",
    "a[b].so",
    "Libcudnn.so.9",
)


@pytest.mark.parametrize(
    "pattern",
    ["libcudnn.so*", "libcudnn*.so.9", "lib?udnn.so", "*.so", "libcudnn.so.9", "[ab]*", "*", "x*"],
)
def test_one_level_glob_matches_what_pathlib_finds(tmp_path: Path, pattern: str) -> None:
    """The directory is listed once per run and matched in memory: same answers, same order."""
    machine = FakeMachine(tmp_path)
    for name in NAMES:
        machine.write(f"/usr/lib/x86_64-linux-gnu/{name}")
    ctx = machine.context()
    base = tmp_path / "usr/lib/x86_64-linux-gnu"
    expected = [f"/usr/lib/x86_64-linux-gnu/{p.name}" for p in sorted(base.glob(pattern))]
    assert ctx.glob("/usr/lib/x86_64-linux-gnu", pattern) == expected
    assert ctx.glob("/usr/lib/x86_64-linux-gnu/", pattern) == expected


def test_a_missing_or_unreadable_directory_has_no_matches(tmp_path: Path) -> None:
    machine = FakeMachine(tmp_path)
    machine.write("/opt/file", "")
    ctx = machine.context()
    assert ctx.glob("/nowhere", "lib*") == []
    assert ctx.glob("/opt/file", "*") == []  # not a directory


def test_a_run_lists_a_directory_once(tmp_path: Path) -> None:
    machine = FakeMachine(tmp_path)
    machine.write("/usr/lib/libcudnn.so.9")
    ctx = machine.context()
    assert ctx.glob("/usr/lib", "libcudnn*") == ["/usr/lib/libcudnn.so.9"]
    machine.write("/usr/lib/libcudnn.so.8")  # appears after this run listed the directory
    assert ctx.glob("/usr/lib", "libcudnn*") == ["/usr/lib/libcudnn.so.9"]
    assert machine.context().glob("/usr/lib", "libcudnn*") == [
        "/usr/lib/libcudnn.so.8",
        "/usr/lib/libcudnn.so.9",
    ]


def test_probes_asking_for_a_shared_value_together_compute_it_once(tmp_path: Path) -> None:
    ctx = FakeMachine(tmp_path).context()
    calls: list[int] = []
    started = threading.Barrier(8)

    def compute() -> str:
        calls.append(1)
        time.sleep(0.05)  # long enough for every other thread to ask meanwhile
        return "index"

    def ask() -> str:
        started.wait()
        return ctx.cached("library-index", compute)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: ask(), range(8)))
    assert answers == ["index"] * 8
    assert calls == [1]
