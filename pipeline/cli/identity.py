"""`crawl-audit verify` and `crawl-audit update-ranges`.

Exit codes:
  verify         0 verified, 1 any other identity, 2 usage or input error
  update-ranges  0 every source saved, 1 at least one source not saved, 2 usage or input error
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from config.registry import load_registry
from config.snapshots import DEFAULT_RANGES_DIR, load_ranges
from matcher.audit import Claim, claim_of, identity_of
from matcher.identity import IdentityResult, reverse_dns_address
from matcher.timerange import parse_moment
from pipeline.evidence import ranges_update
from pipeline.evidence.resolvers import DEFAULT_RETRIES, DEFAULT_TIMEOUT, build_resolver
from pipeline.report.terminal import printable, printable_json

EXIT_OK, EXIT_OTHER, EXIT_ERROR = 0, 1, 2


def verify_command(argv: Sequence[str]) -> int:
    """Print the identity of one request (IP, User-Agent) and what decided it."""
    args = _verify_parser().parse_args(argv)
    try:
        registry = load_registry(args.registry)
        ranges = load_ranges(args.ranges, registry)
        resolver = build_resolver(
            args.dns, registry, server=args.dns_server, timeout=args.dns_timeout, retries=args.dns_retries
        )
        at = _moment(args.at)
    except (ValueError, OSError) as error:
        return _fail(str(error))
    for problem in ranges.problems:
        print(f"crawl-audit: ranges: {problem}", file=sys.stderr)
    claim = claim_of(args.user_agent, registry)
    ip = args.ip.strip()
    answers = None
    if resolver is not None:
        address = reverse_dns_address(claim.registered, ip, at, ranges) if claim and claim.registered else None
        answers = {address: resolver.resolve(address)} if address else {}
    who = identity_of(claim, ip, at, ranges, answers)
    if who is None:
        return _fail(f"nothing to verify: the User-Agent claims no crawler and {ip} is in no published crawler range")
    print(printable_json(_as_dict(ip, args.user_agent, at, claim, who)) if args.json else _describe(ip, claim, who))
    return EXIT_OK if who.status == "verified" else EXIT_OTHER


def update_ranges_command(argv: Sequence[str]) -> int:
    """Download today's range files and report each source on one line."""
    args = _update_parser().parse_args(argv)
    try:
        registry = load_registry(args.registry)
        directory = Path(args.ranges) if args.ranges else DEFAULT_RANGES_DIR
        downloads = ranges_update.update_ranges(
            registry, directory, datetime.now(timezone.utc).date(), args.source, args.timeout, args.ca_file
        )
    except (ValueError, OSError) as error:
        return _fail(str(error))
    for download in downloads:
        if download.saved is not None:
            print(f"{download.source}: {download.prefixes} prefixes -> {download.saved}")
        else:
            print(f"{download.source}: NOT SAVED")
        for problem in download.problems:
            print(f"  {printable(problem)}")
    return EXIT_OK if all(d.saved is not None for d in downloads) else EXIT_OTHER


COMMANDS = {"verify": verify_command, "update-ranges": update_ranges_command}


def _verify_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crawl-audit verify",
        description="Check a crawler claim: published ranges first, then forward-confirmed reverse DNS.",
    )
    parser.add_argument("ip", help="client address")
    parser.add_argument("user_agent", help="User-Agent header, or a crawler's product token")
    parser.add_argument(
        "--dns", default="live", help="live (default), snapshot:FILE (answers recorded by a run) or off"
    )
    parser.add_argument("--dns-server", help="HOST:PORT to ask instead of the system resolver")
    parser.add_argument("--dns-timeout", type=_positive(float), default=DEFAULT_TIMEOUT, help="seconds per attempt")
    parser.add_argument("--dns-retries", type=_positive(int, 0), default=DEFAULT_RETRIES, help="attempts after a timeout")
    parser.add_argument("--ranges", help="folder of IP-range snapshots (default: config/ranges)")
    parser.add_argument("--registry", help="crawler registry YAML (default: config/crawlers.yaml)")
    parser.add_argument("--at", help="request time, ISO 8601 (default: now); picks the range snapshot in force")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    return parser


def _update_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crawl-audit update-ranges",
        description="Save each range source's current file as RANGES/<source>/<today, UTC>.json.",
    )
    parser.add_argument("--ranges", help="snapshot folder (default: config/ranges)")
    parser.add_argument("--registry", help="crawler registry YAML (default: config/crawlers.yaml)")
    parser.add_argument("--source", action="append", default=[], help="only this source (repeatable)")
    parser.add_argument(
        "--timeout", type=_positive(float), default=ranges_update.DEFAULT_TIMEOUT,
        help="seconds per download, redirects included",
    )
    parser.add_argument("--ca-file", help="PEM file of the CAs to trust instead of the system's (HTTPS only)")
    return parser


def _positive(kind: type, minimum: float = 0.001):
    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number of at least {minimum}, got {text!r}")
        return value

    return convert


def _moment(text: str | None) -> datetime:
    """--at as an aware datetime (a date is its midnight; a time without offset is UTC)."""
    if text is None:
        return datetime.now(timezone.utc)
    try:
        return parse_moment(text)
    except ValueError:
        raise ValueError(f"--at: not an ISO 8601 date or time: {text!r}") from None


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


def _fail(message: str) -> int:
    print(f"crawl-audit: {printable(message)}", file=sys.stderr)
    return EXIT_ERROR
