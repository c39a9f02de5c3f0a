"""Ask pip what it would install for a plan, without installing or building anything.

``pip install --dry-run --report`` with ``--only-binary=:all:`` resolves the TE metapackage
and its core wheel against the real index: no sdist is built and nothing is installed. The
framework extension is an sdist on PyPI (te-facts.md §4.1), so it is never resolved here: the
plan states it will be compiled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from te_doctor.probes.commands import run_command
from te_doctor.probes.exits import exit_in_words

PIP_TIMEOUT_S = 60.0
_OFFLINE = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "ConnectTimeoutError",
    "Name or service not known",
    "ProxyError",
    "Max retries",
)


@dataclass(frozen=True, slots=True)
class PipPrediction:
    """What pip said: the files it would take, or why it could not say."""

    reachable: bool
    resolved: tuple[str, ...]
    problem: str


def predict(
    python: str, te_version: str, core_major: int, *, timeout_s: float = PIP_TIMEOUT_S
) -> PipPrediction:
    """Run pip's dry-run resolver for the TE metapackage and core wheel of the plan."""
    argv = [
        python,
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--quiet",
        "--report",
        "-",
        "--no-deps",
        "--ignore-installed",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        f"transformer-engine=={te_version}",
        f"transformer-engine-cu{core_major}=={te_version}",
    ]
    result = run_command(argv, timeout=timeout_s)
    if result.timed_out:
        return PipPrediction(False, (), f"pip did not answer within {timeout_s:g} s")
    if not result.ok:
        text = result.stderr.strip() or result.stdout.strip()
        if any(marker in text for marker in _OFFLINE):
            return PipPrediction(False, (), "no package index is reachable")
        last = text.splitlines()[-1] if text else exit_in_words(result.returncode)
        return PipPrediction(True, (), f"pip cannot resolve it: {last[:300]}")
    try:
        report = json.loads(result.stdout)
        items = report["install"]
        resolved = tuple(
            f"{item['metadata']['name']} {item['metadata']['version']} "
            f"({item['download_info']['url'].rsplit('/', 1)[-1]})"
            for item in items
        )
    except (ValueError, KeyError, TypeError) as exc:
        return PipPrediction(True, (), f"pip printed a report te-doctor cannot read ({exc})")
    return PipPrediction(True, resolved, "")
