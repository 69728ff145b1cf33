"""`crawl-audit verify` and `crawl-audit update-ranges`.

Exit codes:
  verify         0 verified, 1 any other identity, 2 usage or input error
  update-ranges  0 every source saved, 1 at least one source not saved, 2 usage or input error
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from config.registry import load_registry
from config.snapshots import DEFAULT_RANGES_DIR, load_ranges
from matcher.audit import Claim, claim_of, identity_of
from matcher.identity import IdentityResult, reverse_dns_address
from pipeline.cli.terminal import say
from pipeline.cli.errors import EXIT_FINDINGS, EXIT_OK, InputError
from pipeline.evidence import ranges_update
from pipeline.evidence.resolvers import build_resolver
from matcher.printable import printable, printable_json


def verify(args: argparse.Namespace) -> int:
    """Print the identity of one request (IP, User-Agent) and what decided it."""
    try:
        registry = load_registry(args.registry)
        ranges = load_ranges(args.ranges, registry)
        resolver = build_resolver(
            args.dns, registry, server=args.dns_server, timeout=args.dns_timeout, retries=args.dns_retries
        )
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error
    at = args.at or datetime.now(timezone.utc)
    for problem in ranges.problems:
        print(f"crawl-audit: ranges: {printable(problem)}", file=sys.stderr)
    claim = claim_of(args.user_agent, registry)
    ip = args.ip.strip()
    answers = None
    if resolver is not None:
        address = reverse_dns_address(claim.registered, ip, at, ranges) if claim and claim.registered else None
        answers = {address: resolver.resolve(address)} if address else {}
    who = identity_of(claim, ip, at, ranges, answers)
    if who is None:
        raise InputError(
            f"nothing to verify: the User-Agent claims no crawler and {ip} is in no published crawler range"
        )
    say(printable_json(_as_dict(ip, args.user_agent, at, claim, who)) if args.json else _describe(ip, claim, who))
    return EXIT_OK if who.status == "verified" else EXIT_FINDINGS


def update_ranges(args: argparse.Namespace) -> int:
    """Download today's range files and report each source on one line."""
    try:
        registry = load_registry(args.registry)
        directory = Path(args.ranges) if args.ranges else DEFAULT_RANGES_DIR
        downloads = ranges_update.update_ranges(
            registry, directory, datetime.now(timezone.utc).date(), args.source, args.timeout, args.ca_file
        )
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from error
    for download in downloads:
        if download.saved is not None:
            say(f"{download.source}: {download.prefixes} prefixes -> {download.saved}")
        else:
            say(f"{download.source}: NOT SAVED")
        for problem in download.problems:
            say(f"  {printable(problem)}")
    return EXIT_OK if all(d.saved is not None for d in downloads) else EXIT_FINDINGS


def _describe(ip: str, claim: Claim | None, who: IdentityResult) -> str:
    claimed = claim.crawler if claim is not None and claim.crawler else "(no crawler named)"
    operator = f" ({who.operator})" if who.operator else ""
    return "\n".join(printable(line) for line in (
        who.status,
        f"  claimed:  {claimed}{operator}",
        f"  address:  {ip}",
        f"  method:   {who.method}",
        f"  evidence: {who.evidence}",
    ))


def _as_dict(ip: str, user_agent: str, at: datetime, claim: Claim | None, who: IdentityResult) -> dict:
    return {
        "ip": ip,
        "user_agent": user_agent,
        "at": at.isoformat(),
        "crawler": claim.crawler if claim is not None else None,
        "operator": who.operator,
        "identity": who.status,
        "method": who.method,
        "evidence": who.evidence,
    }
