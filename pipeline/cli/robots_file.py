"""`crawl-audit check` and `crawl-audit lint`: one robots.txt file, as a crawler reads it.

Exit codes: check 0 when every URL is allowed, 1 when one is disallowed; lint 0 when clean, 1
with findings; both 2 on a usage or input error.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from config.registry import default_registry
from matcher import agents, robots
from matcher.explain import decision_to_dict, rule_text, why
from matcher.normalize import normalize, request_path
from pipeline.cli.terminal import say
from pipeline.cli.errors import EXIT_FINDINGS, EXIT_OK, InputError
from pipeline.evidence.confined import NotReadable, read_regular
from matcher.printable import printable, printable_json


def read_bytes(path: str) -> bytes:
    """A robots.txt file a command line names: a regular file only (never a FIFO or a device), read
    as a crawler reads one, to the parse limit and one byte more, so a longer file is seen cut."""
    try:
        return read_regular(Path(path), robots.MAX_BYTES + 1)
    except (NotReadable, OSError) as error:
        raise InputError(str(error)) from error


def check(args: argparse.Namespace) -> int:
    rf = robots.parse(read_bytes(args.robots_file))
    tokens = agents.robots_tokens(args.agent, default_registry())
    any_disallowed = False
    for url in args.urls:
        decision = rf.decide_tokens(tokens, url)
        any_disallowed |= not decision.allowed
        if args.json:
            print(printable_json(decision_to_dict(url, decision)))
        else:
            print(_describe(url, tokens, decision))
    return EXIT_FINDINGS if any_disallowed else EXIT_OK


def _describe(url: str, tokens: Sequence[str], decision: robots.Decision) -> str:
    verdict = "allowed" if decision.allowed else "DISALLOWED"
    lines = [f"{url}: {verdict}", f"  tokens: {', '.join(tokens) or '(none)'}"]
    group = decision.group
    if group is not None:
        named = ", ".join(f"{agent} (line {line})" for agent, line in zip(group.agents, group.agent_lines))
        lines.append(f"  group:  User-agent: {named}")
    runner_up = None
    if decision.rule is not None:
        lines.append(f"  rule:   {rule_text(decision.rule)}")
        runner_up = group.runner_up(decision, normalize(request_path(url)))
    lines.append(f"  why:    {why(decision, runner_up)}")
    return "\n".join(printable(line) for line in lines)


def lint(args: argparse.Namespace) -> int:
    rf = robots.parse(read_bytes(args.robots_file))
    for diagnostic in rf.diagnostics:
        say(f"{args.robots_file}:{diagnostic.line}: {diagnostic.code}: {diagnostic.message}")
    # Notes explain what the file states; they are no finding.
    for note in rf.notes:
        say(f"{args.robots_file}:{note.line}: note: {note.code}: {note.message}")
    if not rf.diagnostics:
        say(f"{args.robots_file}: no findings")
    return EXIT_FINDINGS if rf.diagnostics else EXIT_OK
