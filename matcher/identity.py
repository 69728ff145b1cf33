"""Who really sent a request: a crawler's claim checked against a Web Bot Auth signature made
with a key of its operator's directory, then against its operator's published IP ranges, then,
where the operator names host suffixes, against forward-confirmed reverse DNS.

The ranges and key snapshots (`matcher/ip_ranges.py`, `matcher/web_bot_auth.py`) and the DNS
answers (`matcher/reverse_dns.py`) come in already read and resolved.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Literal

from matcher.addresses import Address, parse_ip, request_day, reverse_dns_problem
from matcher.agents import Crawler, KeyDirectory
from matcher.dns_trust import distrust_of
from matcher.ip_ranges import RangeIndex
from matcher.range_evidence import RangeFinding, judge_ranges
from matcher.reverse_dns import DEFINITE_DNS_ERRORS, NOT_RESOLVED, DnsAnswer, Lookup, confirm_reverse_dns
from matcher.web_bot_auth import SignedRequest, check_request

__all__ = [
    "DNS_OFF_EVIDENCE",
    "INVALID_IP_EVIDENCE",
    "NO_METHOD_EVIDENCE",
    "ROBOTS_ONLY_EVIDENCE",
    "UNSIGNED_AGENT_EVIDENCE",
    "UNTRUSTED_DNS_EVIDENCE",
    "IdentityResult",
    "Status",
    "reverse_dns_address",
    "undeclared",
    "verify",
    "verify_signed_agent",
]

Status = Literal["verified", "spoofed", "unverified", "unverifiable", "undeclared"]

ROBOTS_ONLY_EVIDENCE = "token is robots-only; never sent as a User-Agent"
DNS_OFF_EVIDENCE = "dns-off: needs reverse DNS"
INVALID_IP_EVIDENCE = "invalid client ip"
NO_METHOD_EVIDENCE = "operator publishes no verification method"
UNTRUSTED_DNS_EVIDENCE = "not trusted"
UNSIGNED_AGENT_EVIDENCE = "Signature-Agent without Signature and Signature-Input"


@dataclass(frozen=True)
class IdentityResult:
    status: Status
    method: str  # "web-bot-auth" | "ip-range" | "reverse-dns" | "robots-only" | "none"
    evidence: str
    operator: str | None


def verify(
    crawler: Crawler,
    ip: str,
    at: date | datetime,
    ranges: RangeIndex,
    dns: Mapping[str, DnsAnswer] | None = None,
    signed: SignedRequest | None = None,
) -> IdentityResult:
    """Check a request claiming `crawler` from `ip` at `at`: its Web Bot Auth signature first,
    then published ranges, then reverse DNS where the crawler has suffixes. `dns` maps
    `str(parse_ip(ip))` to its answer; None is DNS off, and an address missing from it is
    unverified, never spoofed. A signature that fails is evidence, and makes the request
    `spoofed` only when neither ranges nor DNS prove the address; one that covers too little to
    prove anything is ignored, and said to be."""
    if crawler.robots_only:
        return IdentityResult("spoofed", "robots-only", ROBOTS_ONLY_EVIDENCE, crawler.operator)
    signature = None
    if signed is not None and isinstance(at, datetime):
        signature = check_request(signed, crawler.operator, ranges.key_directories, at)
        if signature.status == "verified":
            return IdentityResult("verified", "web-bot-auth", signature.evidence, crawler.operator)
    by_address = _verify_address(crawler, ip, at, ranges, dns)
    if signature is None:
        return by_address
    if signature.status == "ignored":
        return replace(by_address, evidence=f"{by_address.evidence}; signature ignored: {signature.evidence}")
    if signature.status == "spoofed" and by_address.status != "verified":
        evidence = f"{signature.evidence}; {by_address.evidence}"
        return IdentityResult("spoofed", "web-bot-auth", evidence, crawler.operator)
    return replace(by_address, evidence=f"{by_address.evidence}; signature: {signature.evidence}")


def verify_signed_agent(
    directory: KeyDirectory, at: datetime, ranges: RangeIndex, signed: SignedRequest | None
) -> IdentityResult:
    """Check a request whose Signature-Agent names `directory` and whose User-Agent is a
    browser's: only its signature can prove it, since no range or host name is published for an
    agent's browsers. Without a signature it is `unverified`."""
    if signed is None:
        return IdentityResult("unverified", "web-bot-auth", UNSIGNED_AGENT_EVIDENCE, directory.operator)
    signature = check_request(signed, directory.operator, ranges.key_directories, at)
    if signature.status == "ignored":
        return IdentityResult("unverified", "web-bot-auth", f"signature ignored: {signature.evidence}", directory.operator)
    return IdentityResult(signature.status, "web-bot-auth", signature.evidence, directory.operator)


def _verify_address(
    crawler: Crawler, ip: str, at: date | datetime, ranges: RangeIndex, dns: Mapping[str, DnsAnswer] | None
) -> IdentityResult:
    """The claim checked by its address: published ranges first, then reverse DNS."""
    address = parse_ip(ip)
    if address is None:
        return IdentityResult("unverified", "none", INVALID_IP_EVIDENCE, crawler.operator)
    found = judge_ranges(crawler.range_sources, address, request_day(at), ranges)
    if found.proof is not None:
        return IdentityResult("verified", "ip-range", found.proof, crawler.operator)
    if dns is not None and crawler.rdns_suffixes:
        problem = reverse_dns_problem(address)
        if problem is not None:
            evidence = "; ".join((problem, *found.context))
            return IdentityResult("unverified", "reverse-dns", evidence, crawler.operator)
        answer = dns.get(str(address)) or DnsAnswer(str(address), Lookup(error=NOT_RESOLVED))
        status, evidence = confirm_reverse_dns(answer, address, crawler.rdns_suffixes)
        distrust = distrust_of(dns)
        if status == "spoofed" and distrust is not None and answer.ptr.error in DEFINITE_DNS_ERRORS:
            status, evidence = "unverified", f"{evidence}; {UNTRUSTED_DNS_EVIDENCE}: {distrust}"
        if status != "verified":
            evidence = "; ".join((evidence, *found.context))
        return IdentityResult(status, "reverse-dns", evidence, crawler.operator)
    return _without_range_match(crawler, found)


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
    proved = judge_ranges(crawler.range_sources, address, request_day(at), ranges).proof is not None
    return None if proved else str(address)


def _without_range_match(crawler: Crawler, found: RangeFinding) -> IdentityResult:
    """The verdict when no range proves the claim and DNS is not consulted."""
    context = found.context
    if found.absent:
        return IdentityResult("spoofed", "ip-range", "; ".join(context), crawler.operator)
    if crawler.rdns_suffixes:
        evidence = "; ".join((DNS_OFF_EVIDENCE, *context))
        return IdentityResult("unverified", "reverse-dns", evidence, crawler.operator)
    if found.silent:
        return IdentityResult("unverified", "ip-range", "; ".join(context), crawler.operator)
    return IdentityResult("unverifiable", "none", NO_METHOD_EVIDENCE, crawler.operator)


def undeclared(ip: str, at: date | datetime, ranges: RangeIndex) -> IdentityResult | None:
    """For a request claiming no crawler: the crawler range it comes from, if any."""
    address = parse_ip(ip)
    if address is None:
        return None
    hit = ranges.find_any(address, request_day(at))
    if hit is None:
        return None
    return IdentityResult("undeclared", "ip-range", hit.evidence, hit.operator)
