"""Forward-confirmed reverse DNS on already-resolved answers.

Reverse DNS proves a claim when a PTR name of the address ends in one of the crawler's suffixes at
a label boundary and a forward lookup of that name returns the address. DNS failures that say a
record does not exist (NXDOMAIN, an empty answer) disprove it; any other failure leaves it
unverified, because a timeout says nothing about who sent the request. Asking DNS servers is the
caller's job.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from matcher.addresses import Address, parse_ip

__all__ = [
    "DEFINITE_DNS_ERRORS",
    "NOT_RESOLVED",
    "DnsAnswer",
    "DnsStatus",
    "Lookup",
    "confirm_reverse_dns",
    "under_suffix",
]

DnsStatus = Literal["verified", "spoofed", "unverified"]

NOT_RESOLVED = "not-resolved"
# NXDOMAIN and an empty answer say the record does not exist. Every other failure (timeout,
# SERVFAIL, REFUSED, an unreachable server, no recorded answer) might pass on another try.
DEFINITE_DNS_ERRORS = frozenset({"nxdomain", "no-answer"})


@dataclass(frozen=True)
class Lookup:
    """One DNS question's outcome: the records returned, or the error code instead."""

    records: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class DnsAnswer:
    """Reverse DNS of one address: its PTR names (lower-case, no final dot), a forward lookup of
    each name worth confirming (A for IPv4, AAAA for IPv6), and when it was resolved."""

    ip: str
    ptr: Lookup
    forward: tuple[tuple[str, Lookup], ...] = ()
    resolved_at: str = ""


def confirm_reverse_dns(answer: DnsAnswer, address: Address, suffixes: Sequence[str]) -> tuple[DnsStatus, str]:
    """Forward-confirmed reverse DNS: verified when any PTR name under `suffixes` resolves back to
    `address`; spoofed when DNS says no such name does; unverified when DNS could not say."""
    when = f" (DNS {answer.resolved_at})" if answer.resolved_at else ""
    ptr_error = answer.ptr.error or (None if answer.ptr.records else "no-answer")
    if ptr_error is not None:
        return _dns_failure_status(ptr_error), f"PTR of {address}: {ptr_error}{when}"
    names = [name for name in answer.ptr.records if under_suffix(name, suffixes)]
    if not names:
        return "spoofed", f"PTR {', '.join(answer.ptr.records)} not under {', '.join(suffixes)}{when}"
    kind = "A" if address.version == 4 else "AAAA"
    forward = dict(answer.forward)
    undecided: list[str] = []
    refuted: list[str] = []
    for name in names:
        lookup = forward.get(name) or Lookup(error=NOT_RESOLVED)
        if lookup.error is None and any(parse_ip(r) == address for r in lookup.records):
            return "verified", f"PTR {name} -> {kind} {', '.join(lookup.records)}{when}"
        if lookup.error is None:
            refuted.append(f"PTR {name} -> {kind} {', '.join(lookup.records) or 'none'}, not {address}")
        elif _dns_failure_status(lookup.error) == "spoofed":
            refuted.append(f"PTR {name} -> {kind} {lookup.error}")
        else:
            undecided.append(f"PTR {name} -> {kind} {lookup.error}")
    if undecided:
        return "unverified", "; ".join(undecided + refuted) + when
    return "spoofed", "; ".join(refuted) + when


def under_suffix(name: str, suffixes: Sequence[str]) -> bool:
    """Whether `name` is a suffix or ends in one at a label boundary (not `evilgooglebot.com`)."""
    return any(name == suffix or name.endswith("." + suffix) for suffix in suffixes)


def _dns_failure_status(error: str) -> DnsStatus:
    return "spoofed" if error in DEFINITE_DNS_ERRORS else "unverified"
