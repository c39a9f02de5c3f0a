"""The command line: formats, output files, saved snapshots, exit codes, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from te_doctor.cli.main import main
from te_doctor.errors import ExitCode
from te_doctor.snapshot.file import dumps, loads
from tests.snapshots import busy_snapshot


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "te_doctor", *args], capture_output=True, text=True, timeout=60
    )


def test_probe_on_this_machine_finishes_and_explains_what_is_absent() -> None:
    result = run_cli("probe")
    assert result.returncode == 0, result.stderr
    assert "NVIDIA driver" in result.stdout and "Probes" in result.stdout
    snapshot = loads(run_cli("probe", "--format", "json").stdout)
    assert {p.state for p in snapshot.probes} == {"ok"}
    if not Path("/proc/driver/nvidia/version").exists():  # the CI and developer machines
        assert snapshot.driver.version.state.value == "absent"
        assert "no NVIDIA driver" in snapshot.driver.version.reason
    if Path("/usr/local/cuda/bin/nvcc").exists():
        assert snapshot.cuda.toolkit_version.known


def test_output_file_and_saved_snapshot_render(tmp_path: Path) -> None:
    saved = tmp_path / "snap.json"
    assert main(["probe", "--format", "json", "--output", str(saved)]) == ExitCode.OK
    assert (
        main(
            [
                "probe",
                "--snapshot",
                str(saved),
                "--format",
                "json",
                "-o",
                str(tmp_path / "again.json"),
            ]
        )
        == 0
    )
    assert loads((tmp_path / "again.json").read_text()) == loads(saved.read_text())


def test_redact_on_a_saved_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "snap.json"
    saved.write_text(dumps(busy_snapshot(tmp_path)))
    assert main(["probe", "--snapshot", str(saved), "--redact", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["meta"]["redacted"] is True
    assert "gpu-node-07" not in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON"),
        ('{"schema_version": 7}', "schema_version 7 is newer"),
        ('{"schema_version": 1, "meta": {}}', "missing field"),
    ],
)
def test_bad_snapshot_is_one_line_and_exit_2(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = run_cli("probe", "--snapshot", str(bad))
    assert result.returncode == ExitCode.USAGE
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert str(bad) in result.stderr and "Traceback" not in result.stderr


def test_bad_flags_exit_2_without_traceback() -> None:
    result = run_cli("probe", "--format", "yaml")
    assert result.returncode == ExitCode.USAGE
    assert "Traceback" not in result.stderr and "'yaml' is not one of" in result.stderr
    assert run_cli("no-such-command").returncode == ExitCode.USAGE


def test_bad_python_and_unwritable_output_exit_2(tmp_path: Path) -> None:
    result = run_cli("probe", "--python", str(tmp_path / "nope"))
    assert result.returncode == ExitCode.USAGE and "--python" in result.stderr
    result = run_cli("probe", "--output", str(tmp_path / "no-dir" / "x.json"))
    assert result.returncode == ExitCode.USAGE and "cannot write" in result.stderr


def test_internal_error_is_exit_3_with_a_pointer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import te_doctor.probes.collect

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(te_doctor.probes.collect, "collect_snapshot", broken)
    assert main(["probe"]) == ExitCode.INTERNAL
    assert "unexpected error" in capsys.readouterr().err


def test_interrupt_is_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import te_doctor.probes.collect

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(te_doctor.probes.collect, "collect_snapshot", interrupted)
    assert main(["probe"]) == ExitCode.INTERRUPTED


def test_main_in_process_leaves_the_callers_sigterm_handling_alone() -> None:
    import signal

    before = signal.getsignal(signal.SIGTERM)
    assert main(["--version"]) == ExitCode.OK
    assert signal.getsignal(signal.SIGTERM) is before


def test_help_documents_exit_codes() -> None:
    result = run_cli("probe", "--help")
    assert result.returncode == 0 and "130 interrupted" in result.stdout
    assert run_cli("--version").stdout.startswith("te-doctor, version")


def test_lazy_command_table_matches_the_commands() -> None:
    """``--help`` lists commands from the table: each summary is the command's own first line."""
    import importlib

    import click

    from te_doctor.cli.main import COMMANDS

    for name, (module, attribute, summary) in COMMANDS.items():
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        assert command.name == name
        assert (command.help or "").split("\n\n")[0].strip() == summary


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys; from te_doctor.cli.main import main; main(['--help']); "
        "print(sorted(m for m in sys.modules if m.startswith('te_doctor.cli.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "Commands:" in result.stdout and "triage" in result.stdout
    loaded = result.stdout.strip().splitlines()[-1]
    assert loaded == "['te_doctor.cli.help_text', 'te_doctor.cli.main']"
