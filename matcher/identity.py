"""Who really sent a request: a crawler's claim checked against its operator's published IP ranges,
then, where the operator names host suffixes, against forward-confirmed reverse DNS.

The ranges (`matcher/ip_ranges.py`) and the DNS answers (`matcher/reverse_dns.py`) come in
already read and resolved.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from matcher.addresses import Address, parse_ip, request_day, reverse_dns_problem
from matcher.agents import Crawler
from matcher.ip_ranges import RangeHit, RangeIndex, Snapshot
from matcher.reverse_dns import NOT_RESOLVED, DnsAnswer, Lookup, confirm_reverse_dns

__all__ = [
    "DNS_OFF_EVIDENCE",
    "INVALID_IP_EVIDENCE",
    "NO_METHOD_EVIDENCE",
    "ROBOTS_ONLY_EVIDENCE",
    "IdentityResult",
    "Status",
    "reverse_dns_address",
    "undeclared",
    "verify",
]

Status = Literal["verified", "spoofed", "unverified", "unverifiable", "undeclared"]

ROBOTS_ONLY_EVIDENCE = "token is robots-only; never sent as a User-Agent"
DNS_OFF_EVIDENCE = "dns-off: needs reverse DNS"
INVALID_IP_EVIDENCE = "invalid client ip"
NO_METHOD_EVIDENCE = "operator publishes no verification method"


@dataclass(frozen=True)
class IdentityResult:
    status: Status
    method: str  # "ip-range" | "reverse-dns" | "robots-only" | "none"
    evidence: str
    operator: str | None


def verify(
    crawler: Crawler,
    ip: str,
    at: date | datetime,
    ranges: RangeIndex,
    dns: Mapping[str, DnsAnswer] | None = None,
) -> IdentityResult:
    """Check a request claiming `crawler` from `ip` at `at`: published ranges first, then reverse
    DNS where the crawler has suffixes. `dns` maps `str(parse_ip(ip))` to its answer; None is
    DNS off, and an address missing from it is unverified, never spoofed."""
    if crawler.robots_only:
        return IdentityResult("spoofed", "robots-only", ROBOTS_ONLY_EVIDENCE, crawler.operator)
    address = parse_ip(ip)
    if address is None:
        return IdentityResult("unverified", "none", INVALID_IP_EVIDENCE, crawler.operator)
    hit, checked, missing = _check_ranges(crawler, address, request_day(at), ranges)
    if hit is not None:
        return IdentityResult("verified", "ip-range", hit.evidence, crawler.operator)
    if dns is not None and crawler.rdns_suffixes:
        problem = reverse_dns_problem(address)
        if problem is not None:
            evidence = "; ".join((problem, *_range_context(checked, missing)))
            return IdentityResult("unverified", "reverse-dns", evidence, crawler.operator)
        answer = dns.get(str(address)) or DnsAnswer(str(address), Lookup(error=NOT_RESOLVED))
        status, evidence = confirm_reverse_dns(answer, address, crawler.rdns_suffixes)
        if status != "verified":
            evidence = "; ".join((evidence, *_range_context(checked, missing)))
        return IdentityResult(status, "reverse-dns", evidence, crawler.operator)
    return _without_range_match(crawler, checked, missing)


def reverse_dns_address(crawler: Crawler, ip: str, at: date | datetime, ranges: RangeIndex) -> str | None:
    """The address (as `verify` keys it) whose reverse DNS would decide this claim, or None when
    DNS would not be consulted: a range proves it, the crawler has no suffixes, or the IP is bad
    or has no reverse DNS (`addresses.reverse_dns_problem`)."""
    if crawler.robots_only or not crawler.rdns_suffixes:
        return None
    address = parse_ip(ip)
    if address is None:
        return None
    if reverse_dns_problem(address) is not None:
        return None
    hit, _, _ = _check_ranges(crawler, address, request_day(at), ranges)
    return None if hit is not None else str(address)


def _check_ranges(
    crawler: Crawler, address: Address, day: date, ranges: RangeIndex
) -> tuple[RangeHit | None, list[Snapshot], list[str]]:
    """The first hit in the crawler's sources, else the snapshots checked and what kept the
    other sources from being checked (no snapshot at all, or none as old as the request)."""
    checked: list[Snapshot] = []
    absent: list[str] = []
    too_new: list[str] = []
    for source in crawler.range_sources:
        snapshot = ranges.snapshot_at(source, day)
        if snapshot is not None:
            hit = snapshot.find(address)
            if hit is not None:
                return hit, checked, []
            checked.append(snapshot)
        elif ranges.snapshots(source):
            first = ranges.snapshots(source)[0].taken.isoformat()
            too_new.append(f"no snapshot of {source} covers {day.isoformat()} (first {first})")
        else:
            absent.append(source)
    missing = ["no range snapshot for " + ", ".join(absent)] if absent else []
    return None, checked, missing + too_new


def _without_range_match(
    crawler: Crawler, checked: Sequence[Snapshot], missing: Sequence[str]
) -> IdentityResult:
    """The verdict when no range proves the claim and DNS is not consulted."""
    context = _range_context(checked, missing)
    if checked and not missing:
        # every published list was read and none holds the IP
        return IdentityResult("spoofed", "ip-range", "; ".join(context), crawler.operator)
    if crawler.rdns_suffixes:
        evidence = "; ".join((DNS_OFF_EVIDENCE, *context))
        return IdentityResult("unverified", "reverse-dns", evidence, crawler.operator)
    if missing:
        return IdentityResult("unverified", "ip-range", "; ".join(context), crawler.operator)
    return IdentityResult("unverifiable", "none", NO_METHOD_EVIDENCE, crawler.operator)


def _range_context(checked: Sequence[Snapshot], missing: Sequence[str]) -> tuple[str, ...]:
    """What the range check found: sources without a snapshot, then the snapshots checked."""
    not_in = "not in " + ", ".join(s.label for s in checked) if checked else ""
    return tuple(filter(None, (*missing, not_in)))


def undeclared(ip: str, at: date | datetime, ranges: RangeIndex) -> IdentityResult | None:
    """For a request claiming no crawler: the crawler range it comes from, if any."""
    address = parse_ip(ip)
    if address is None:
        return None
    hit = ranges.find_any(address, request_day(at))
    if hit is None:
        return None
    return IdentityResult("undeclared", "ip-range", hit.evidence, hit.operator)
