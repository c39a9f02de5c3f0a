"""A te-doctor command line written in a script or a manifest, checked against the click
command it runs: option names, values and choices (a value starting with ``$`` is the shell's
to fill in), and arguments only where the command takes them."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

import click


@dataclass
class CommandLine:
    """The arguments and options of one command line, and what is wrong with it."""

    arguments: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def parse(words: Sequence[str], command: click.Command, where: str = "") -> CommandLine:
    """``words`` after the command's name, read as ``command`` would read them."""
    where = where or shlex.join(words)
    known = {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in param.opts
    }
    line = CommandLine()
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if not word.startswith("-"):
            line.arguments.append(word)
            continue
        name, equals, value = word.partition("=")
        option = known.get(name)
        if option is None:
            line.problems.append(f"{where}: {name} is not an option of te-doctor {command.name}")
            continue
        if option.is_flag:
            line.problems += [f"{where}: {name} takes no value"] if equals else []
            line.options[name] = ""
            continue
        if not equals:
            if not rest or rest[0].startswith("-"):
                line.problems.append(f"{where}: {name} needs a value")
                continue
            value = rest.pop(0)
        choices = getattr(option.type, "choices", None)
        if choices and not value.startswith("$") and value not in choices:
            line.problems.append(f"{where}: {name} {value!r} is not one of {', '.join(choices)}")
        line.options[name] = value
    if line.arguments and not any(isinstance(p, click.Argument) for p in command.params):
        line.problems.append(f"{where}: te-doctor {command.name} takes no {line.arguments[0]!r}")
    return line
