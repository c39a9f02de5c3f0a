"""The fault matrix: every fault a real machine throws ends, within its stated bound, as a finding
that names the cause, with exit 0/1 (2 for bad input, 130 when interrupted) and no traceback.

Each fault runs te-doctor for real in its own process (see ``tests/faults.py``). All faults start
together in a thread pool the first time any of them is asked for, so the matrix takes about as
long as its slowest fault; each run is killed past its bound plus a margin, so a hang is a
failure, never a stuck CI.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.faults import (
    CPU_TORCH,
    SIGINT_DEFAULT,
    Machine,
    Run,
    permissions_apply,
    private_mounts,
    python,
    signal_another_thread,
    still_alive,
    te_doctor,
    torch_here,
    unprivileged,
    wait_for,
)

#: How far past its bound a run may go before it is killed and called hung.
MARGIN_S = 30.0
CHECK = ("check", "--no-smoke", "--format", "json")


@dataclass(frozen=True)
class Fault:
    """One fault: how to provoke it, its bound and exit codes, and the finding it must end as."""

    id: str
    bound_s: float
    exits: frozenset[int]
    start: Callable[[Machine], Run]
    verify: Callable[[Run], None]
    #: Why the fault cannot be provoked here ("" when it can).
    needs: Callable[[], str] = lambda: ""


FAULTS: list[Fault] = []


def fault(
    bound_s: float, *exits: int, needs: Callable[[], str] = lambda: ""
) -> Callable[[Callable[[Machine], Run]], Callable[[Machine], Run]]:
    """Register ``start`` (its docstring names the fault); ``verify`` is attached after it."""

    def register(start: Callable[[Machine], Run]) -> Callable[[Machine], Run]:
        name = start.__name__.replace("_", "-")
        FAULTS.append(Fault(name, bound_s, frozenset(exits), start, _pending, needs))
        return start

    return register


def _pending(run: Run) -> None:
    raise AssertionError("no verify function registered")


def verifies(start: Callable[[Machine], Run]) -> Callable[[Callable[[Run], None]], None]:
    """Attach the assertions on the finding to the fault ``start`` registered."""

    def attach(verify: Callable[[Run], None]) -> None:
        name = start.__name__.replace("_", "-")
        index = next(i for i, f in enumerate(FAULTS) if f.id == name)
        found = FAULTS[index]
        FAULTS[index] = Fault(found.id, found.bound_s, found.exits, start, verify, found.needs)

    return attach


def check(machine: Machine, *args: str, bound_s: float, **kwargs: object) -> Run:
    """``te-doctor check --no-smoke --format json ARGS``."""
    return te_doctor(machine, *CHECK, *args, limit_s=bound_s + MARGIN_S, **kwargs)


# ------------------------------------------------------------------ the driver and the GPUs


@fault(30, 1)
def nvml_library_missing(machine: Machine) -> Run:
    return check(machine, bound_s=30)


@verifies(nvml_library_missing)
def _(run: Run) -> None:
    assert "TED101" in run.fired()
    assert run.report()["machine"]["driver"] == "no driver"


@fault(30, 1)
def nvml_hangs(machine: Machine) -> Run:
    return check(machine, bound_s=30, env=machine.nvml("hang"))


@verifies(nvml_hangs)
def _(run: Run) -> None:
    assert "TED204" in run.fired(), "the driver is there but does not answer"
    assert run.report()["machine"]["driver"] == "unknown"


@fault(30, 1)
def nvml_loses_one_gpu(machine: Machine) -> Run:
    return check(machine, bound_s=30, env=machine.nvml("gpu-lost"))


@verifies(nvml_loses_one_gpu)
def _(run: Run) -> None:
    fired = run.fired()
    assert "TED7022" in fired, "GPU is lost: fallen off the bus"
    assert "TED117" not in fired, "a lost GPU is not a second GPU model"
    assert run.report()["machine"]["gpus"] == "1x NVIDIA H100 80GB HBM3"


@fault(30, 1)
def nvml_version_mismatch(machine: Machine) -> Run:
    return check(machine, bound_s=30, env=machine.nvml("mismatch"))


@verifies(nvml_version_mismatch)
def _(run: Run) -> None:
    assert {"TED763", "TED204"} <= set(run.fired())


@fault(30, 1)
def nvidia_smi_hangs(machine: Machine) -> Run:
    machine.tool("nvidia-smi", "exec sleep 600\n")
    return check(machine, bound_s=30)


@verifies(nvidia_smi_hangs)
def _(run: Run) -> None:
    assert "TED204" in run.fired()


@fault(30, 1)
def nvidia_smi_prints_garbage(machine: Machine) -> Run:
    machine.tool("nvidia-smi", "printf '\\377\\376 %s\\n' 'not,a,gpu' 'x,y'\n")
    return check(machine, bound_s=30)


@verifies(nvidia_smi_prints_garbage)
def _(run: Run) -> None:
    assert "TED204" in run.fired()
    assert run.report()["machine"]["gpus"] == "GPUs unknown"


@fault(30, 1)
def nvidia_smi_version_mismatch(machine: Machine) -> Run:
    machine.tool(
        "nvidia-smi",
        "echo 'Failed to initialize NVML: Driver/library version mismatch'\n"
        "echo 'NVML library version: 550.127'\nexit 18\n",
    )
    return check(machine, bound_s=30)


@verifies(nvidia_smi_version_mismatch)
def _(run: Run) -> None:
    assert "TED763" in run.fired(), "the same finding triage gives for that text"


@fault(30, 1, needs=private_mounts)
def proc_driver_nvidia_unreadable(machine: Machine) -> Run:
    fake = machine.path("proc-driver")
    (fake / "nvidia").mkdir(parents=True)
    (fake / "nvidia" / "version").write_text("NVRM version: NVIDIA UNIX Kernel Module  550.54\n")
    (fake / "nvidia").chmod(0o000)  # te-doctor below runs without CAP_DAC_OVERRIDE
    mount = 'mount --bind "$0" /proc/driver && exec "$@"'
    private = ("unshare", "--mount", "--propagation", "private", "--")
    wrap = (*private, "sh", "-c", mount, str(fake), *unprivileged())
    return check(machine, bound_s=30, prefix=wrap)


@verifies(proc_driver_nvidia_unreadable)
def _(run: Run) -> None:
    assert "TED204" in run.fired(), "an unreadable kernel module is not 'no driver'"
    assert "TED101" not in run.fired()


# ------------------------------------------------------------------ --python interpreters


@fault(30, 2)
def python_segfaults(machine: Machine) -> Run:
    python = machine.tool("python", "kill -SEGV $$\n", machine.path("segv/bin"))
    return check(machine, "--python", str(python), bound_s=30)


@verifies(python_segfaults)
def _(run: Run) -> None:
    assert "cannot run it: python: killed by SIGSEGV (segmentation fault)" in run.stderr


@fault(40, 2)
def python_hangs(machine: Machine) -> Run:
    python = machine.tool("python", "exec sleep 600\n", machine.path("hang/bin"))
    return check(machine, "--python", str(python), bound_s=40)


@verifies(python_hangs)
def _(run: Run) -> None:
    assert "cannot run it: python: did not answer" in run.stderr


@fault(30, 2)
def python_not_executable(machine: Machine) -> Run:
    python = machine.tool("python", "exit 0\n", machine.path("noexec/bin"))
    python.chmod(0o644)  # no execute bit: not even root may run it
    return check(machine, "--python", str(python), bound_s=30)


@verifies(python_not_executable)
def _(run: Run) -> None:
    assert "cannot run it: python: not executable" in run.stderr


@fault(30, 2)
def python_is_python_2(machine: Machine) -> Run:
    answer = (
        '{"executable": "/usr/bin/python2", "version": "2.7.18", "implementation": "CPython", '
        '"prefix": "/usr", "base_prefix": "/usr", "sys_path": ["", "/usr/lib/python2.7"]}'
    )
    python = machine.tool("python2", f"echo '{answer}'\n", machine.path("py2/bin"))
    return check(machine, "--python", str(python), bound_s=30)


@verifies(python_is_python_2)
def _(run: Run) -> None:
    assert "is Python 2.7.18; PyTorch and Transformer Engine need Python 3" in run.stderr


@fault(30, 2)
def python_cannot_load_libstdcxx(machine: Machine) -> Run:
    error = (
        "python3: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found "
        "(required by /opt/conda/lib/libpython3.11.so.1.0)"
    )
    script = f"cat >&2 <<'EOF'\n{error}\nEOF\nexit 1\n"
    python = machine.tool("python", script, machine.path("cxx/bin"))
    return check(machine, "--python", str(python), bound_s=30)


@verifies(python_cannot_load_libstdcxx)
def _(run: Run) -> None:
    assert "TED784 libstdcxx-too-old-for-extension" in run.stderr, "its output, matched"
    assert "fix: Rebuild the extension" in run.stderr


# ------------------------------------------------------------------ the smoke test's child


def smoke_venv(machine: Machine, torch: str, te: str | None = None) -> Path:
    """A venv whose ``torch`` (and, given, ``transformer_engine``) is the stand-in source."""
    python = machine.venv()
    site = machine.site_packages(python)
    machine.install(site, "torch", "2.7.0", {"torch/__init__.py": torch})
    if te is not None:
        machine.install(site, "transformer-engine", "2.8.0", {"transformer_engine/__init__.py": te})
    return python


def smoke_check(machine: Machine, python: Path, *, bound_s: float, timeout_s: float = 20) -> Run:
    args = ("check", "--format", "json", "--smoke-timeout", f"{timeout_s:g}", "--python")
    return te_doctor(machine, *args, str(python), limit_s=bound_s + MARGIN_S)


@fault(40, 1)
def torch_import_undefined_symbol(machine: Machine) -> Run:
    symbol = "_ZN3c1015SmallVectorBaseIjE8grow_podEPKvmm"
    torch = (
        "raise ImportError('/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: "
        f"undefined symbol: {symbol}')\n"
    )
    return smoke_check(machine, smoke_venv(machine, torch), bound_s=40)


@verifies(torch_import_undefined_symbol)
def _(run: Run) -> None:
    fired = run.fired()
    assert fired["TED779"]["category"] == "multiple-installs", "torch's own library: two torches"
    assert fired["TED778"]["category"] == "import-abi"
    generic = fired["TED802"]
    assert generic["severity"] == "info" and generic["blocks"] == [], "it steps back"
    assert "(the cause: TED778, TED779)" in generic["message"]
    cpu = next(v for v in run.report()["recommendation"]["ranking"] if v["id"] == "cpu")
    assert not cpu["viable"], "torch cannot be imported: not even the CPU path runs"
    assert any("(TED778)" in r or "(TED779)" in r for r in cpu["reasons"]), cpu["reasons"]


@fault(40, 1)
def te_import_segfaults(machine: Machine) -> Run:
    te = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    return smoke_check(machine, smoke_venv(machine, CPU_TORCH, te), bound_s=40)


@verifies(te_import_segfaults)
def _(run: Run) -> None:
    crash = run.fired()["TED803"]
    assert "killed by SIGSEGV (segmentation fault) during import-te" in crash["message"]
    assert "transformer_engine/__init__.py" in run.report()["smoke"]["error_text"]["value"]


@fault(40, 1)
def te_import_aborts_on_cudnn(machine: Machine) -> Run:
    te = (
        "import os, sys\n"
        "sys.stderr.write(\"terminate called after throwing an instance of 'std::runtime_error'\\n"
        '  what():  cuDNN Error: CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED\\n")\n'
        "sys.stderr.flush()\nos.abort()\n"
    )
    return smoke_check(machine, smoke_venv(machine, CPU_TORCH, te), bound_s=40)


@verifies(te_import_aborts_on_cudnn)
def _(run: Run) -> None:
    fired = run.fired()
    causes = {f["category"] for f in fired.values() if f["severity"] == "error"}
    assert "cudnn" in causes or "multiple-installs" in causes, fired
    crash = fired["TED803"]
    assert crash["severity"] == "info" and "SIGABRT (aborted)" in crash["message"]


@fault(40, 1)
def smoke_child_hangs(machine: Machine) -> Run:
    python = smoke_venv(machine, "import time\ntime.sleep(600)\n")
    return smoke_check(machine, python, bound_s=40, timeout_s=3)


@verifies(smoke_child_hangs)
def _(run: Run) -> None:
    assert "did not finish within 3 s" in run.fired()["TED804"]["message"]


# ------------------------------------------------------------------ installed packages


def packages_check(machine: Machine, python: Path) -> Run:
    return check(machine, "--python", str(python), bound_s=30)


@fault(30, 1)
def metadata_corrupt(machine: Machine) -> Run:
    python = machine.venv()
    truncated = "Metadata-Version: 2.1\nName: torch\n"  # cut before Version
    machine.install(machine.site_packages(python), "torch", "2.7.0", metadata=truncated)
    return packages_check(machine, python)


@verifies(metadata_corrupt)
def _(run: Run) -> None:
    assert (
        "torch-2.7.0.dist-info: metadata has no Version field" in (run.fired()["TED426"]["message"])
    )


@fault(30, 1)
def metadata_not_utf8(machine: Machine) -> Run:
    python = machine.venv()
    garbage = b"Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.\xff\xfe7\n"
    machine.install(machine.site_packages(python), "flash-attn", "2.7.4", metadata=garbage)
    return packages_check(machine, python)


@verifies(metadata_not_utf8)
def _(run: Run) -> None:
    assert "codec can't decode" in run.fired()["TED426"]["message"]


@fault(30, 1)
def dist_info_without_metadata(machine: Machine) -> Run:
    python = machine.venv()
    machine.install(machine.site_packages(python), "transformer-engine", "2.8.0", metadata=None)
    return packages_check(machine, python)


@verifies(dist_info_without_metadata)
def _(run: Run) -> None:
    message = run.fired()["TED426"]["message"]
    assert "transformer_engine-2.8.0.dist-info: unreadable metadata: no METADATA" in message


@fault(30, 1)
def two_site_packages_different_torch(machine: Machine) -> Run:
    python = machine.venv()
    site = machine.site_packages(python)
    machine.install(site, "torch", "2.7.0")
    user_site = machine.path(f"home/.local/lib/{site.parent.name}/site-packages")
    machine.install(user_site, "torch", "2.1.0")
    (site / "user.pth").write_text(f"{user_site}\n", encoding="utf-8")
    return packages_check(machine, python)


@verifies(two_site_packages_different_torch)
def _(run: Run) -> None:
    message = run.fired()["TED411"]["message"]
    assert "torch: 2.1.0 in" in message or "torch: 2.7.0 in" in message
    assert "2.1.0" in message and "2.7.0" in message


# ------------------------------------------------------------------ environment and paths


@fault(30, 1, needs=permissions_apply)
def ld_library_path_missing_unreadable_looping(machine: Machine) -> Run:
    unreadable = machine.path("unreadable")
    unreadable.mkdir(mode=0o000)
    loop = machine.path("loop")
    loop.symlink_to(loop)
    value = f"/nonexistent/cuda-11.8/lib64:{unreadable}:{loop}"
    environment = {"LD_LIBRARY_PATH": value}
    return check(machine, bound_s=30, env=environment, prefix=unprivileged())


@verifies(ld_library_path_missing_unreadable_looping)
def _(run: Run) -> None:
    message = run.fired()["TED616"]["message"]
    assert "/nonexistent/cuda-11.8/lib64: No such file or directory" in message
    assert "unreadable: Permission denied" in message
    assert "loop: Too many levels of symbolic links" in message


@fault(30, 1)
def non_utf8_environment_and_paths(machine: Machine) -> Run:
    python = machine.venv(b"venv-\xff")
    environment = {
        "LD_LIBRARY_PATH": os.fsdecode(b"/opt/cuda-\xfe\xff/lib64"),
        "CUDA_HOME": os.fsdecode(b"/opt/\xff"),
        "PYTHONIOENCODING": "utf-8:strict",  # a UTF-8 locale's strict stdout
    }
    return check(machine, "--python", str(python), bound_s=30, env=environment)


@verifies(non_utf8_environment_and_paths)
def _(run: Run) -> None:
    message = run.fired()["TED616"]["message"]
    assert "/opt/cuda-\udcfe\udcff/lib64: No such file or directory" in message


# ------------------------------------------------------------------ caches and output


@fault(30, 0, needs=torch_here)
def cache_dir_unwritable(machine: Machine) -> Run:
    blocker = machine.path("cache-is-a-file")  # mkdir under it fails, for root too
    blocker.write_text("", encoding="utf-8")
    script = (
        "import te_doctor\n"
        "for _ in range(2):\n"
        "    chosen = te_doctor.select_path(smoke=False)\n"
        "    print(chosen.id, chosen.verification, chosen.from_cache)\n"
    )
    environment = {"XDG_CACHE_HOME": str(blocker)}
    return python(machine, "-c", script, limit_s=30 + MARGIN_S, env=environment)


@verifies(cache_dir_unwritable)
def _(run: Run) -> None:
    lines = run.stdout.splitlines()
    assert lines == ["cpu predicted False"] * 2, "decided each time, never read from the cache"


@fault(30, 2)
def output_to_a_full_disk(machine: Machine) -> Run:
    return check(machine, "-o", "/dev/full", bound_s=30)


@verifies(output_to_a_full_disk)
def _(run: Run) -> None:
    assert "--output /dev/full: cannot write: No space left on device" in run.stderr


@fault(30, 2, needs=permissions_apply)
def output_to_a_read_only_file(machine: Machine) -> Run:
    target = machine.path("report.json")
    target.write_text("the previous report\n", encoding="utf-8")
    target.chmod(0o444)
    run = check(machine, "-o", str(target), bound_s=30, prefix=unprivileged())
    run.notes["left"] = target.read_text(encoding="utf-8")
    return run


@verifies(output_to_a_read_only_file)
def _(run: Run) -> None:
    assert "cannot write: Permission denied" in run.stderr
    assert run.notes["left"] == "the previous report\n"


@fault(30, 1)
def stdout_closed_before_start(machine: Machine) -> Run:
    target = machine.path("report.json")
    closed = ("sh", "-c", 'exec "$@" >&-', "sh")
    run = check(machine, "-o", str(target), bound_s=30, prefix=closed)
    run.notes["report"] = target.read_text(encoding="utf-8") if target.exists() else ""
    return run


@verifies(stdout_closed_before_start)
def _(run: Run) -> None:
    assert '"TED101"' in run.notes["report"], "-o still gets the whole report"


@fault(30, 1)
def stdout_reader_gone(machine: Machine) -> Run:
    def hang_up(proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        proc.stdout.close()  # the reader (`| head`) went away before te-doctor wrote
        proc.stdout = None

    return te_doctor(machine, "check", "--no-smoke", limit_s=30 + MARGIN_S, during=hang_up)


@verifies(stdout_reader_gone)
def _(run: Run) -> None:
    assert "stdout was closed before the output was written" in run.stderr
    assert "Exception ignored" not in run.stderr and "BrokenPipe" not in run.stderr


# ------------------------------------------------------------------ interrupted runs


def interrupted_check(machine: Machine, number: int, *, main_thread: bool = True) -> Run:
    """A check whose smoke child hangs in ``import torch``; ``number`` arrives once it does (at
    te-doctor's main thread, or at another of its threads)."""
    pid_file = machine.path("child.pid")
    torch = (
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n"
    )
    python = smoke_venv(machine, torch)

    signalled: list[bool] = []

    def interrupt(proc: subprocess.Popen[str]) -> None:
        # as long as the run may take: a loaded machine can be slow to start the child
        if wait_for(pid_file, 30 + MARGIN_S):
            signalled.append(True)
            if main_thread:
                proc.send_signal(number)
            else:
                signal_another_thread(proc.pid, number)

    args = ("check", "--smoke-timeout", "300", "--python", str(python))
    run = te_doctor(machine, *args, limit_s=30 + MARGIN_S, during=interrupt, prefix=SIGINT_DEFAULT)
    run.notes["signalled"] = bool(signalled)
    pid = int(pid_file.read_text() or 0) if pid_file.exists() else 0
    run.notes["child_alive"] = bool(pid) and still_alive(pid)
    run.notes["child"] = pid
    return run


def verify_interrupted(run: Run, said: str) -> None:
    assert run.notes["child"], "the smoke child never started"
    assert said in run.stderr
    assert not run.notes["child_alive"], "the hanging smoke child was left running"


@fault(30, 130)
def sigint_during_check(machine: Machine) -> Run:
    return interrupted_check(machine, signal.SIGINT)


@verifies(sigint_during_check)
def _(run: Run) -> None:
    verify_interrupted(run, "te-doctor: interrupted\n")


@fault(30, 130)
def sigterm_during_check(machine: Machine) -> Run:
    return interrupted_check(machine, signal.SIGTERM)


@verifies(sigterm_during_check)
def _(run: Run) -> None:
    verify_interrupted(run, "te-doctor: interrupted (SIGTERM)")


@fault(30, 130)
def sigint_at_another_thread_during_check(machine: Machine) -> Run:
    return interrupted_check(machine, signal.SIGINT, main_thread=False)


@verifies(sigint_at_another_thread_during_check)
def _(run: Run) -> None:
    """The main thread waits for the smoke thread; it must still wake and stop at once."""
    verify_interrupted(run, "te-doctor: interrupted\n")


def interrupted_fleet_run(machine: Machine, number: int) -> Run:
    """``fleet run`` through a fake srun that never ends; ``number`` arrives once it started."""
    srun_log, scancel_log = machine.path("srun.args"), machine.path("scancel.args")
    machine.tool("srun", f'echo "$$ $*" > {srun_log}\nexec sleep 600\n')
    machine.tool("scancel", f'echo "$*" >> {scancel_log}\n')

    signalled: list[bool] = []

    def interrupt(proc: subprocess.Popen[str]) -> None:
        if wait_for(srun_log, 30 + MARGIN_S):  # as long as the run may take, as above
            signalled.append(True)
            proc.send_signal(number)

    args = ("fleet", "run", "--ntasks", "2", "--dir", str(machine.path("sweep")))
    run = te_doctor(
        machine,
        *args,
        "--deadline",
        "300",
        limit_s=30 + MARGIN_S,
        during=interrupt,
        prefix=SIGINT_DEFAULT,
    )
    run.notes["signalled"] = bool(signalled)
    started = srun_log.read_text().split() if srun_log.exists() else ["0"]
    run.notes["srun"] = started
    run.notes["srun_alive"] = still_alive(int(started[0]))
    run.notes["scancel"] = scancel_log.read_text() if scancel_log.exists() else ""
    return run


def verify_cancelled(run: Run) -> None:
    job = next(arg for arg in run.notes["srun"] if arg.startswith("--job-name="))
    name = job.split("=", 1)[1]
    assert run.notes["scancel"].split() == [f"--name={name}"], "the Slurm job is cancelled"
    assert not run.notes["srun_alive"], "srun was left running"
    assert "te-doctor: interrupted" in run.stderr


@fault(30, 130)
def sigint_during_fleet_run(machine: Machine) -> Run:
    return interrupted_fleet_run(machine, signal.SIGINT)


@verifies(sigint_during_fleet_run)
def _(run: Run) -> None:
    verify_cancelled(run)


@fault(30, 130)
def sigterm_during_fleet_run(machine: Machine) -> Run:
    return interrupted_fleet_run(machine, signal.SIGTERM)


@verifies(sigterm_during_fleet_run)
def _(run: Run) -> None:
    verify_cancelled(run)
    assert "(SIGTERM)" in run.stderr


# ------------------------------------------------------------------ the matrix


@pytest.fixture(scope="module")
def started() -> Iterator[dict[str, Future[Run]]]:
    """Every fault that can run here, started at once (the matrix takes its slowest fault)."""
    machines: list[Machine] = []

    def launch(item: Fault) -> Run:
        machine = Machine(item.id)
        machines.append(machine)
        return item.start(machine)

    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="fault") as pool:
        yield {f.id: pool.submit(launch, f) for f in FAULTS if not f.needs()}
    for machine in machines:
        machine.cleanup()


def test_the_matrix_covers_at_least_twenty_faults() -> None:
    assert len(FAULTS) >= 20
    assert all(f.verify is not _pending for f in FAULTS)


@pytest.mark.parametrize("item", FAULTS, ids=lambda f: f.id)
def test_fault_ends_as_a_finding(item: Fault, started: dict[str, Future[Run]]) -> None:
    if item.id not in started:
        pytest.skip(item.needs())
    run = started[item.id].result(timeout=item.bound_s + 2 * MARGIN_S)
    assert run.returncode is not None, f"hung past {item.bound_s + MARGIN_S:g} s\n{run.describe()}"
    assert run.seconds < item.bound_s, f"took longer than its bound\n{run.describe()}"
    assert run.returncode in item.exits, run.describe()
    # te-doctor's own failures go to stderr (a JSON report may quote the child's traceback)
    assert "Traceback (most recent call last)" not in run.stderr, run.describe()
    assert "unexpected error" not in run.stderr, run.describe()
    try:
        item.verify(run)
    except (AssertionError, KeyError, ValueError) as exc:
        raise AssertionError(f"{exc!r}\n{run.describe()}") from None
