"""`crawl-audit verify`, `crawl-audit update-ranges` and `update-ranges import-git`.

Exit codes:
  verify         0 verified, 1 any other identity, 2 usage or input error
  update-ranges  0 every source saved, 1 at least one source not saved, 2 usage or input error
  import-git     0 every version of the file usable, 1 a version reported, 2 usage or input error
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from config.registry import load_registry
from config.snapshots import KEY_DIRECTORIES, default_ranges_dir, load_ranges
from matcher.audit import Claim, agent_claim, claim_of, identity_of
from matcher.agents import AUTOMATED
from matcher.addresses import request_day
from matcher.identity import IdentityResult, reverse_dns_address
from matcher.ip_ranges import RangeIndex
from matcher.range_evidence import window_lines
from matcher.web_bot_auth import LoggedRequest, SignedRequest
from pipeline.cli.history import git_paths_read
from pipeline.cli.terminal import say
from pipeline.cli.errors import EXIT_FINDINGS, EXIT_OK, InputError
from pipeline.evidence import ranges_update
from pipeline.evidence.ranges_git import import_range_history as import_history
from pipeline.evidence.resolvers import build_resolver
from matcher.printable import printable, printable_json


def verify(args: argparse.Namespace) -> int:
    """Print the identity of one request (IP, User-Agent) and what decided it."""
    try:
        registry = load_registry(args.registry)
        ranges = load_ranges(args.ranges, registry, args.range_window)
        resolver = build_resolver(
            args.dns, registry, server=args.dns_server, timeout=args.dns_timeout, retries=args.dns_retries
        )
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error
    at = args.at or datetime.now(timezone.utc)
    for problem in ranges.problems:
        print(f"crawl-audit: ranges: {printable(problem)}", file=sys.stderr)
    claim = claim_of(args.user_agent, registry)
    if claim is None or claim.kind == AUTOMATED:
        # an HTTP library or tool claims to be no crawler: only a signed agent's claim is checked
        claim = agent_claim(args.signature_agent, registry)
    ip = args.ip.strip()
    answers = None
    if resolver is not None:
        address = reverse_dns_address(claim.registered, ip, at, ranges) if claim and claim.registered else None
        answers = {address: resolver.resolve(address)} if address else {}
    who = identity_of(claim, ip, at, ranges, answers, _signed(args))
    if who is None:
        raise InputError(
            f"nothing to verify: the User-Agent claims no crawler, no --signature-agent names a key directory"
            f" of the registry, and {ip} is in no published crawler range"
        )
    windows = _range_windows(claim, at, ranges)
    say(printable_json(_as_dict(ip, args.user_agent, at, claim, who, windows, ranges.window)) if args.json else _describe(ip, claim, who, windows))
    return EXIT_OK if who.status == "verified" else EXIT_FINDINGS


def _signed(args: argparse.Namespace) -> SignedRequest | None:
    """The signature headers given on the command line, with the components they may cover."""
    if not args.signature_input or not args.signature:
        if args.signature_input or args.signature:
            raise InputError("--signature-input and --signature go together")
        return None
    fields = {"signature-agent": args.signature_agent} if args.signature_agent is not None else {}
    return SignedRequest(LoggedRequest(args.method, args.authority, args.path, fields), args.signature_input, args.signature)


def update_ranges(args: argparse.Namespace) -> int:
    """Download today's range files and report each source on one line."""
    try:
        registry = load_registry(args.registry)
        directory = Path(args.ranges) if args.ranges else default_ranges_dir()
        downloads = ranges_update.update_ranges(
            registry, directory, datetime.now(timezone.utc).date(), args.source, args.timeout, args.ca_file
        )
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error
    for download in downloads:
        if download.saved is not None:
            unit = "keys" if download.saved.parent.parent.name == KEY_DIRECTORIES else "prefixes"
            say(f"{download.source}: {download.prefixes} {unit} -> {download.saved}")
        else:
            say(f"{download.source}: NOT SAVED")
        for problem in download.problems:
            say(f"  {printable(problem)}")
    say(_closing_line(downloads, directory))
    return EXIT_OK if all(d.saved is not None for d in downloads) else EXIT_FINDINGS


def _closing_line(downloads: list[ranges_update.Download], directory: Path) -> str:
    """What was saved, and when something was not, the ways on without a download."""
    saved = sum(download.saved is not None for download in downloads)
    if saved == len(downloads):
        return f"saved all {saved} under {directory}"
    done = f"saved {saved} of {len(downloads)} under {directory}" if saved else f"nothing saved under {directory}"
    return (
        f"{done}; without a download: `run --ranges DIR` (and `verify --ranges DIR`) reads snapshots you"
        " already have, and `update-ranges import-git REPO PATH --source NAME` brings in a mirror's history"
    )


def import_range_history(args: argparse.Namespace) -> int:
    """Import a range file's git history as dated snapshots and say what was written."""
    try:
        registry = load_registry(args.registry)
        directory = Path(args.ranges) if args.ranges else default_ranges_dir()
        (source,) = ranges_update.select_sources(registry, [args.git_source])
        result = import_history(Path(args.repo), args.paths, source, directory, args.branch)
    except (ValueError, OSError) as error:  # GitError is a ValueError
        raise InputError(str(error)) from error
    if result.days:
        say(
            f"{result.source}: {len(result.days)} daily snapshots {result.days[0]} .. {result.days[-1]}"
            f" (current to {result.history.branch}, {result.current_to}): {len(result.written)} written,"
            f" {result.already_there} already there -> {directory / result.source}"
        )
    else:
        say(f"{result.source}: no usable version of {' or '.join(args.paths)} on {result.history.branch} in {args.repo}")
    for line in git_paths_read(result.history):
        say(f"  {line}")
    for problem in result.problems:
        say(f"  {problem}")
    return EXIT_OK if result.days and not result.problems else EXIT_FINDINGS


def _range_windows(claim: Claim | None, at: datetime, ranges: RangeIndex) -> tuple[str, ...]:
    """The claimed crawler's range snapshots within the window of the request's day, per source."""
    if claim is None or claim.registered is None:
        return ()
    return window_lines(claim.registered.range_sources, request_day(at), ranges)


def _describe(ip: str, claim: Claim | None, who: IdentityResult, windows: tuple[str, ...]) -> str:
    claimed = claim.crawler if claim is not None and claim.crawler else "(no crawler named)"
    operator = f" ({who.operator})" if who.operator else ""
    return "\n".join(printable(line) for line in (
        who.status,
        f"  claimed:  {claimed}{operator}",
        f"  address:  {ip}",
        f"  method:   {who.method}",
        f"  evidence: {who.evidence}",
        *(f"  {'ranges:' if i == 0 else '':9} {line}" for i, line in enumerate(windows)),
    ))


def _as_dict(
    ip: str, user_agent: str, at: datetime, claim: Claim | None, who: IdentityResult, windows: tuple[str, ...], window: int
) -> dict:
    return {
        "ip": ip,
        "user_agent": user_agent,
        "at": at.isoformat(),
        "crawler": claim.crawler if claim is not None else None,
        "operator": who.operator,
        "identity": who.status,
        "method": who.method,
        "evidence": who.evidence,
        "range_window": window,
        "range_snapshots": list(windows),
    }
