"""The pytest hooks and the ``te_path`` fixture; the decision is made once per session.

Nothing is probed until a collected test carries the ``te_doctor`` mark or asks for
``te_path``; then ``te_doctor.runtime.selection.decide`` probes this machine and runs the smoke
test (unless ``--te-doctor-no-smoke``) once, through ``select_path``'s per-machine cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from te_doctor.errors import TeDoctorError
from te_doctor.pytest_plugin.reasons import skip_reason

if TYPE_CHECKING:  # the runtime API is imported on first use: pytest starts as fast without it
    from te_doctor.runtime.enable import SelectedPath
    from te_doctor.runtime.selection import Decision

MARK = "te_doctor"
MARK_HELP = (
    "te_doctor(require=PATH): skip unless this te-doctor execution path or family "
    "(fp8, te-fp8, bf16, fp16, cpu, te-fp8-current, ...) runs on this machine"
)


class SessionDecision:
    """One decision for the whole session, made on first use."""

    def __init__(self, *, smoke: bool, default_require: str | None) -> None:
        self.smoke = smoke
        self.default_require = default_require
        self.decision: Decision | None = None

    def select(self, require: str | None) -> SelectedPath:
        """The best path of ``require`` here; raises ``NoViablePathError``."""
        from te_doctor.runtime.selection import choose, decide

        if self.decision is None:
            try:
                self.decision = decide(smoke=self.smoke)
            except TeDoctorError as exc:
                raise pytest.UsageError(f"te-doctor: {exc}") from None
        decision = self.decision
        return choose(
            decision.verdicts, decision.paths, require=require, from_cache=decision.from_cache
        )

    def why_not(self, require: str | None) -> str:
        """The skip reason when no path of ``require`` runs here, else ""."""
        from te_doctor.runtime.selection import NoViablePathError

        try:
            self.select(require)
        except NoViablePathError as exc:
            return skip_reason(exc.require, exc.skipped)
        return ""

    def summary(self) -> str:
        """One line for the end of the run: what was decided, and how."""
        how = [] if self.smoke else ["without the smoke test"]
        if self.decision is not None and self.decision.from_cache:
            how.append("from its cache")
        prefix = f"te-doctor ({', '.join(how)})" if how else "te-doctor"
        why = self.why_not(self.default_require)
        if why:
            return f"{prefix}: {why.removeprefix('te-doctor: ')}"
        best = self.select(self.default_require)
        family = f"{self.default_require} " if self.default_require else ""
        return f"{prefix}: best {family}path here: {best.id} ({best.verification})"


STASH = pytest.StashKey[SessionDecision]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("te-doctor", "te-doctor: skip tests whose execution path cannot run")
    group.addoption(
        "--te-doctor-require",
        metavar="PATH",
        default=None,
        help="The execution path or family (fp8, bf16, te-fp8-current, ...) that te_path must "
        "be and a bare te_doctor mark requires; default: te-doctor's best path here.",
    )
    group.addoption(
        "--te-doctor-no-smoke",
        action="store_true",
        default=False,
        help="Decide from the probed facts alone, without the smoke test's real GEMMs "
        "(faster; the choice is 'predicted', not 'verified').",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARK_HELP)
    default = config.getoption("te_doctor_require")
    if default is not None:
        _check(default, f"--te-doctor-require {default}")
    config.stash[STASH] = SessionDecision(
        smoke=not config.getoption("te_doctor_no_smoke"), default_require=default
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test whose required path does not run here as skipped, with te-doctor's reason."""
    marked = [(item, mark) for item in items if (mark := item.get_closest_marker(MARK))]
    if not marked or config.option.collectonly:
        return
    decision = config.stash[STASH]
    requires = {item.nodeid: _required(item.nodeid, mark, decision) for item, mark in marked}
    for item, _mark in marked:
        reason = decision.why_not(requires[item.nodeid])
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def te_path(request: pytest.FixtureRequest) -> SelectedPath:
    """The execution path te-doctor chooses here (``te_doctor.select_path()``'s object), of the
    ``--te-doctor-require`` family when given; tests using it skip where none runs."""
    decision = request.config.stash[STASH]
    why = decision.why_not(decision.default_require)
    if why:
        pytest.skip(why)
    return decision.select(decision.default_require)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    decision = terminalreporter.config.stash.get(STASH, None)
    if decision is not None and decision.decision is not None:
        terminalreporter.write_line(decision.summary())


def _required(nodeid: str, mark: pytest.Mark, decision: SessionDecision) -> str | None:
    """The mark's ``require`` (keyword or first argument), else ``--te-doctor-require``."""
    unknown = set(mark.kwargs) - {"require"}
    if unknown or len(mark.args) > 1 or (mark.args and "require" in mark.kwargs):
        raise pytest.UsageError(
            f"{nodeid}: te_doctor mark: expected te_doctor(require=PATH), got "
            f"args {mark.args!r} and keywords {sorted(mark.kwargs)}"
        )
    require = mark.kwargs.get("require", mark.args[0] if mark.args else decision.default_require)
    if require is not None:
        _check(require, f"{nodeid}: te_doctor(require={require!r})")
    return require if require is None else str(require)


def _check(require: object, where: str) -> None:
    """An unknown path or family is a usage error, before anything is probed."""
    from te_doctor.runtime.selection import check_require

    if not isinstance(require, str):
        raise pytest.UsageError(f"{where}: expected a path id or family, got {require!r}")
    try:
        check_require(require)
    except TeDoctorError as exc:  # "require='fp9': unknown execution path; choose from ..."
        raise pytest.UsageError(f"{where}: {str(exc).partition(': ')[2]}") from None
