"""Work started in the background and waited for: its result, or its error in the caller."""

from __future__ import annotations

import threading

import pytest

from te_doctor.background import in_background
from te_doctor.engine.rule_model import RuleFileError


def test_the_result_comes_from_another_thread() -> None:
    wait = in_background(lambda: threading.current_thread().name, "te-doctor-test")
    assert wait() == "te-doctor-test"


def test_an_error_is_raised_where_the_result_is_waited_for() -> None:
    def broken() -> None:
        raise RuleFileError("rules/x.toml: rule TED1: bad")

    wait = in_background(broken, "te-doctor-test")
    with pytest.raises(RuleFileError, match="rules/x.toml: rule TED1: bad"):
        wait()
