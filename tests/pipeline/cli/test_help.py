"""Every command's --help: each option and argument says what it is, and no default is shown as a
Python value."""
from __future__ import annotations

import argparse
import re

import pytest

from pipeline.cli.parser import parser

# What a Python value printed as it is looks like, in place of words.
_REPR = re.compile(r"frozenset\(|set\(\)|\[\]|\{\}|\(\)|\bNone\b|<[a-z_.]+ object|<function ")


def _commands(command: argparse.ArgumentParser, name: str = "crawl-audit"):
    yield name, command
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for step, below in action.choices.items():
                yield from _commands(below, f"{name} {step}")


COMMANDS = dict(_commands(parser()))


def test_every_command_is_walked():
    assert {"crawl-audit run", "crawl-audit history import-git", "crawl-audit update-ranges import-git"} <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_and_argument_has_help_and_no_python_value(name):
    command = COMMANDS[name]
    silent = [
        "/".join(action.option_strings) or action.metavar or action.dest
        for action in command._actions
        if not isinstance(action, argparse._SubParsersAction) and action.help != argparse.SUPPRESS and not action.help
    ]
    assert silent == [], f"{name}: no help for {', '.join(silent)}"
    shown = command.format_help()
    assert not _REPR.search(shown), f"{name} --help shows a Python value: {_REPR.search(shown).group()!r}"
