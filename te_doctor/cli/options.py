"""Click options shared by several commands, declared once."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

from te_doctor.probes.target import Target, choose_target

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def complete_path_names(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion for ``--require``: execution path ids and families."""
    from te_doctor.engine.paths import load_paths, path_names

    names = sorted(path_names(load_paths()))
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def complete_rule_ids(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion for a rule: its id (TED101) or name, with the name as help."""
    from te_doctor.engine.rules import load_rules

    return [
        CompletionItem(value, help=rule.name if value == rule.id else rule.id)
        for rule in load_rules()
        for value in (rule.id, rule.name)
        if value.startswith(incomplete)
    ]


def output_option(what: str) -> Decorator:
    """``--output/-o FILE``: written only once the command succeeded."""
    return click.option(
        "--output",
        "-o",
        type=click.Path(dir_okay=False, path_type=Path),
        help=f"Write {what} to FILE instead of stdout (created only when the run succeeds).",
    )


def snapshot_option(use: str) -> Decorator:
    """``--snapshot FILE``: work from a saved ``te-doctor probe --format json`` snapshot."""
    return click.option(
        "--snapshot", "snapshot_file", type=click.Path(dir_okay=False, path_type=Path), help=use
    )


def python_option(use: str) -> Decorator:
    """``--python PATH|self``: the interpreter to diagnose, given to the command as a ``Target``.

    Without it, the active environment's (``VIRTUAL_ENV``, ``CONDA_PREFIX``) when te-doctor runs
    in another one (pipx, uvx, its own venv); ``self`` keeps te-doctor's own.
    """
    return click.option(
        "--python",
        metavar="PATH",
        callback=_target,
        help=f"{use} Default: the activated venv or conda environment, else te-doctor's own "
        "interpreter; `self`: te-doctor's own.",
    )


def _target(_context: click.Context, _parameter: click.Parameter, value: str | None) -> Target:
    return choose_target(value, os.environ)


def format_option(*choices: str, help: str | None = None) -> Decorator:
    """``--format``: ``text`` (the default) or one of ``choices``."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", *choices]),
        default="text",
        show_default=True,
        help=help,
    )
