"""The snapshot a command works from: a saved one, or this machine probed (and smoke-tested).

Apart from the rule engine, so that ``probe`` and ``plan``'s first step load none of it. The
smoke child starts first and the probes run while it imports torch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from pathlib import Path

from te_doctor.background import in_background
from te_doctor.errors import InterpreterError, TeDoctorError
from te_doctor.probes.target import Target
from te_doctor.snapshot.absent import not_run
from te_doctor.snapshot.model import SmokeFacts, Snapshot


def take_snapshot(
    snapshot_file: Path | None,
    target: Target | None,
    *,
    smoke: bool = False,
    smoke_timeout_s: float = 30.0,
    progress: Callable[[str], None] | None = None,
) -> Snapshot:
    """Load a saved snapshot, or probe this machine for ``target`` (None: this interpreter).

    With ``smoke``, the smoke test runs in a child of the diagnosed interpreter; ``progress``
    hears what runs.
    """
    if snapshot_file is not None:
        from te_doctor.snapshot.file import load

        return load(snapshot_file)
    from te_doctor.probes.real import real_context

    # another interpreter answers (tens of milliseconds) while the probes load
    asked = in_background(partial(real_context, target), "te-doctor-interpreter")
    from te_doctor.probes.collect import collect_snapshot

    try:
        context = asked()
    except InterpreterError as exc:
        raise TeDoctorError(_with_cause(str(exc), exc.output)) from None
    if progress is not None:
        progress("probing the machine")
    if not smoke:
        return collect_snapshot(context)
    smoke_result = _smoke_in_background(context.python.executable, smoke_timeout_s, progress)
    probed = collect_snapshot(context)  # while the smoke child imports torch
    try:
        smoke_facts = smoke_result()
    except Exception as exc:  # noqa: BLE001 - a bug in the runner leaves the probes standing
        smoke_facts = not_run(
            f"the smoke test ended without a result ({type(exc).__name__}: {exc})"
        )
    return dataclasses.replace(probed, smoke=smoke_facts)


def _with_cause(message: str, output: str) -> str:
    """``message``, and the error signatures that recognise ``output`` with their fix (the
    same finding ``triage`` gives for that text): ``... ; TED784 libstdcxx-too-old: fix: ...``.

    Only this error path loads the rule engine."""
    from te_doctor.check.pipeline import load_rule_set
    from te_doctor.engine.error_causes import causes_of

    causes = causes_of(output, load_rule_set()[0])
    if not causes:
        last = [line.strip() for line in output.splitlines() if line.strip()][-1:]
        return message + (f" ({last[0][:300]})" if last and last[0] not in message else "")
    cause, others = causes[0], ", ".join(f.rule_id for f in causes[1:])
    fix = " ".join(cause.fix.split())
    also = f" (also {others})" if others else ""
    return f"{message}; {cause.rule_id} {cause.name}{also}: {cause.message} fix: {fix}"


def _smoke_in_background(
    python: str, timeout_s: float, progress: Callable[[str], None] | None
) -> Callable[[], SmokeFacts]:
    """Start the smoke test in a thread; the returned function waits for its result (its
    child, killed at ``timeout_s`` in any case, is the runner's to end)."""
    from te_doctor.smoke.runner import run_smoke

    return in_background(
        lambda: run_smoke(python, timeout_s=timeout_s, progress=progress), "te-doctor-smoke"
    )
