"""`crawl-audit history ...`: build a robots.txt history and look at it.

  capture HOST... --into DIR         fetch each robots.txt now; keep it when it changed (cron)
  import-wayback HOST --into DIR     the Internet Archive's captures of HOST/robots.txt
  import-git REPO PATH --host HOST --into DIR   the file's changes on the deployed branch (or deploys)
  import-file FILE --host HOST --effective-from WHEN --into DIR   one robots.txt from a moment on
  show TABLE [--host H]              each host's versions as a time line
  diff TABLE --host H T1 T2          what changed between the versions in effect at T1 and T2

Exit codes: 0 done; 1 done in part (a capture clashed, an import stopped early: run it again to
resume); 2 usage or input error, or an archive index that could not be read (nothing written).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from matcher import robots
from matcher.history import RobotsHistory, RobotsVersion
from matcher.history_diff import GroupChange, affected, diff
from matcher.hosts import host_key
from matcher.records import rfc3339
from pipeline.evidence import git_history
from pipeline.evidence.captures import HostFolder, Outcome
from pipeline.evidence import history_capture
from pipeline.evidence import wayback
from pipeline.evidence import resolvers
from pipeline.evidence.http_client import Client, FetchError, LocalFailure
from pipeline.evidence.robots_table import read_robots_table

from pipeline.cli.robots_file import read_bytes
from pipeline.cli.terminal import say
from pipeline.cli.errors import EXIT_FINDINGS as EXIT_PARTLY, EXIT_OK, InputError


def failing_as_input_errors(step):
    """A step whose failures (a bad table, an unreadable archive index, a network error) are the
    user's to fix: one line, exit 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return step(args)
        except (ValueError, OSError, FetchError) as error:
            raise InputError(f"history {args.history_command}: {error}") from error

    run.__doc__ = step.__doc__
    return run


@failing_as_input_errors
def capture(args: argparse.Namespace) -> int:
    server = resolvers.parse_server(args.dns_server)
    resolve = history_capture.resolver_at(server, args.timeout) if server else None
    client = history_capture.robots_client(
        args.user_agent, args.timeout, ca_file=args.ca_file, connect_to=dict(args.connect_to), resolve=resolve
    )
    status = EXIT_OK
    for host in args.hosts:
        try:
            (done,) = history_capture.capture([host], Path(args.into), client)
        except FileExistsError as error:
            say(f"{host}: NOT RECORDED: {error}")
            status = EXIT_PARTLY
            continue
        except LocalFailure as error:
            say(
                f"{host}: NOT RECORDED: {error}; that says nothing about the site, so no state was recorded"
                " (check the name, and run it again once this machine can resolve it and reach it)"
            )
            status = EXIT_PARTLY
            continue
        if done.written is not None:
            say(f"{done.host}: changed -> {done.written} ({done.note})")
        else:
            say(f"{done.host}: same as {done.same_as.name} ({done.note})")
    return status


@failing_as_input_errors
def import_wayback(args: argparse.Namespace) -> int:
    client = Client(
        user_agent=wayback.USER_AGENT, timeout=args.timeout, max_bytes=robots.MAX_BYTES,
        ca_file=args.ca_file, connect_to=dict(args.connect_to),
    )
    archive = wayback.Archive(client, args.archive, args.delay, args.retries)
    result = wayback.import_wayback(archive, args.host, Path(args.into), args.start, args.end)
    say(
        f"{args.host}: {result.versions} version(s) archived, {len(result.written)} written,"
        f" {result.already_there} already there"
    )
    for path in result.written:
        say(f"  + {path}")
    for reason in result.skipped:
        say(f"  left out {reason}")
    if result.failed is not None:
        say(f"  STOPPED: {result.failed}; run the command again to resume")
        return EXIT_PARTLY
    return EXIT_OK


@failing_as_input_errors
def import_git(args: argparse.Namespace) -> int:
    repo = Path(args.repo)
    deploys = None
    if args.deployed_at:
        deploys = git_history.read_deploys(Path(args.deployed_at).read_text("utf-8"), repo)
    result = git_history.import_git(repo, args.paths, args.host, Path(args.into), deploys, args.branch)
    if not result.history.changes and not deploys:
        raise ValueError(f"no commit on {result.history.branch} has {' or '.join(args.paths)}")
    say(
        f"{args.host}: {result.versions} version(s), {len(result.written)} written,"
        f" {result.already_there} already there"
    )
    for path in result.written:
        say(f"  + {path}")
    for line in git_paths_read(result.history):
        say(f"  {line}")
    if deploys:
        say(f"  dated by the {len(deploys)} deploy(s) in {args.deployed_at}")
    else:
        say(f"  each version dated when it reached {result.history.branch}: a merge by its committer time")
        if result.by_own_time:
            say(
                f"  {result.by_own_time} version(s) came by a commit of their own (made on {result.history.branch},"
                " fast-forwarded or rebased) and keep its commit time; if a deploy put them live later,"
                " give the deploy times with --deployed-at FILE"
            )
    for note in result.notes:
        say(f"  {note}")
    return EXIT_OK


def git_paths_read(history) -> list[str]:
    """The branch read and each path the file had on it, with when it was there."""
    lines = [f"read {history.branch}, first-parent history:"]
    for span in history.spans:
        until = rfc3339(span.until) if span.until else f"today ({history.branch} at {rfc3339(history.tip_time)})"
        lines.append(f"  {span.path}  {rfc3339(span.first)} .. {until}")
    return lines


@failing_as_input_errors
def import_file(args: argparse.Namespace) -> int:
    """One robots.txt file, as the version of HOST in effect from --effective-from; read as `check`
    reads one (a regular file, to the parse limit), so a FIFO or /dev/zero never hangs it."""
    body = read_bytes(args.file)
    with HostFolder(Path(args.into), args.host).locked() as folder:
        written = folder.write(args.effective_from, Outcome(200, body))
    say(f"{folder.host}: {written} (in effect from {rfc3339(args.effective_from)})")
    say(f"audit with: crawl-audit run --robots {args.into} ...")
    return EXIT_OK


@failing_as_input_errors
def show(args: argparse.Namespace) -> int:
    history = _history(args.table)
    hosts = [args.host] if args.host else sorted(history)
    for host in hosts:
        say(host)
        for version in _host(history, host).versions:
            say("  " + _version_line(version))
    return EXIT_OK


@failing_as_input_errors
def show_diff(args: argparse.Namespace) -> int:
    host = _host(_history(args.table), args.host)
    before, after = host.version_at(args.t1), host.version_at(args.t2)
    if before is None or after is None:
        raise ValueError(f"{args.host} has no version before {rfc3339(args.t1 if before is None else args.t2)}")
    say(f"{args.host}: {_version_line(before)}")
    say(f"{' ' * len(args.host)}  -> {_version_line(after)}")
    if before.effective_from == after.effective_from:
        say("same version: no change")
        return EXIT_OK
    if before.kind != "ok" or after.kind != "ok":
        say(f"{_meaning(before)} -> {_meaning(after)}")
        # An error state is no file to compare rules with; an unavailable one is an empty file.
        if "error" in (before.kind, after.kind) or before.kind == after.kind:
            return EXIT_OK
    changes = diff(_parsed(before), _parsed(after))
    if not changes:
        say("no rule changed")
    for change in changes:
        say("\n".join(_change_lines(change)))
    return EXIT_OK


def _history(table: str) -> RobotsHistory:
    return RobotsHistory(read_robots_table(table))  # a RobotsTableError is a ValueError: exit 2


def _host(history: RobotsHistory, host: str):
    try:
        return history[host]
    except KeyError:
        raise ValueError(f"no host {host!r} in the table (hosts: {', '.join(sorted(history)) or 'none'})") from None


def _version_line(version: RobotsVersion) -> str:
    status = "unreachable" if version.status is None else str(version.status)
    line = f"{rfc3339(version.effective_from)}  {status:<11}  {_meaning(version)}"
    if version.kind == "ok":
        groups = ", ".join(sorted(_parsed(version).groups, key=lambda token: (token != "*", token))) or "no groups"
        line += f"  {len(version.body):,} bytes  sha256 {version.sha256[:12]}  groups: {groups}"
    if version.observed_before is not None:
        line += f"  (changed after {rfc3339(version.observed_before)})"
    return line


def _meaning(version: RobotsVersion) -> str:
    return {"ok": "rules", "unavailable": "allow all", "error": "disallow all"}[version.kind]


def _parsed(version: RobotsVersion) -> robots.RobotsFile:
    # An unavailable robots.txt allows everything, as an empty file does.
    return robots.parse(version.body if version.kind == "ok" else b"")


def _change_lines(change: GroupChange) -> list[str]:
    title = "User-agent: " + ", ".join(change.tokens)
    if change.group_added:
        title += " (new group)"
    elif change.group_removed:
        title += " (group removed)"
    lines = [f"{title}  affects {affected(change)}"]
    lines += [f"  + {rule.kind.capitalize()}: {rule.pattern}  (line {rule.line})" for rule in change.added]
    lines += [f"  - {rule.kind.capitalize()}: {rule.pattern}  (line {rule.line})" for rule in change.removed]
    lines += [
        f"  ~ {old.kind.capitalize()} -> {new.kind.capitalize()}: {new.pattern}  (line {old.line} -> {new.line})"
        for old, new in change.changed
    ]
    if change.crawl_delay is not None:
        old, new = ("none" if delay is None else f"{delay:g}s" for delay in change.crawl_delay)
        lines.append(f"  ~ Crawl-delay: {old} -> {new}")
    return lines


def archive_time(text: str) -> str:
    """--from/--to as the CDX API takes them: 4 to 14 digits of YYYYMMDDhhmmss."""
    digits = "".join(character for character in text if character.isdigit())
    if not 4 <= len(digits) <= 14 or any(c not in "0123456789-:TZ " for c in text):
        raise argparse.ArgumentTypeError(f"expected a date like 2024-01-31 or 20240131, got {text!r}")
    return digits


def connect_to(text: str) -> tuple[str, tuple[str, int]]:
    host, _, target = text.partition("=")
    address, _, port = target.rpartition(":")
    if not host or not address or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST=ADDRESS:PORT, got {text!r}")
    return host_key(host), (address.strip("[]"), int(port))  # the name the fetch asks for
