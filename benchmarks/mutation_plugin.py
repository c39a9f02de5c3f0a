"""pytest plugin for ``benchmarks/mutation.py``: calls made while a test module is imported count
for every test in that module, a mutant's tests run fastest first, and a mutant that breaks a
test module's import is a failure.

mutmut runs, for each mutant, only the tests that called the mutated function while it
collected its statistics, and it charges every call to the test that is running. A call made
while a test module is imported (``RULES = load_rules(...)`` feeding a parametrize) therefore
lands on whichever test runs first, and the tests that use the module's data are never chosen
for that function's mutants. Here those calls are charged to all of the module's tests.
In a mutant's run the chosen tests run in the order of their measured duration, so the first
failure (``-x``) comes as early as it can. A test module that no longer imports under the
mutant makes pytest stop with "interrupted" or, when tests inside it were named, a usage error,
which mutmut does not count as killed; here it is a failed run (exit 1).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest
from mutmut.mutation.trampoline import get_mutant_under_test
from mutmut.state import state

#: Test module node id -> functions called while it was imported.
_IMPORT_CALLS: dict[str, set[str]] = {}


def _mutant_under_test() -> str:
    """What mutmut is running: "stats", "fail", "" or a mutant's name."""
    return str(get_mutant_under_test())


def _collecting_stats() -> bool:
    return _mutant_under_test() == "stats"


def _testing_a_mutant() -> bool:
    return _mutant_under_test() not in ("", "stats", "fail")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, None, None]:
    """Set aside the calls made while a test module is imported (collected)."""
    if not (_collecting_stats() and isinstance(collector, pytest.Module)):
        yield
        return
    earlier = set(state()._stats)
    state()._stats.clear()
    yield
    _IMPORT_CALLS[collector.nodeid] = set(state()._stats)
    state()._stats.clear()
    state()._stats.update(earlier)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Before mutmut charges this test's calls, add those of its module's import."""
    if _collecting_stats():
        state()._stats.update(_IMPORT_CALLS.get(item.nodeid.split("::")[0], set()))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """In a mutant's run, the fastest tests first."""
    if _testing_a_mutant():
        durations = state().duration_by_test
        items.sort(key=lambda item: durations.get(item.nodeid, 0.0))


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Under a mutant, a test module that fails to import ends the run as a failure."""
    if report.failed and _testing_a_mutant():
        pytest.exit(f"{report.nodeid} does not import under this mutant", returncode=1)
