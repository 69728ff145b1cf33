"""Whether a run's reverse-DNS answers can disprove a claim.

NXDOMAIN for an address's PTR is what makes a claimed crawler `spoofed` by DNS. A resolver that
answers NXDOMAIN for everything (a broken or filtering resolver) would turn every real crawler
outside the published ranges into a fake. So the run also asks about a few addresses the
published ranges already prove (`matcher.audit.dns_control`); when the resolver says one of those has no
PTR, its NXDOMAIN proves nothing, and the claims it would have disproved stay `unverified`.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from matcher.addresses import parse_ip
from matcher.ip_ranges import RangeIndex
from matcher.reverse_dns import DEFINITE_DNS_ERRORS, DnsAnswer

__all__ = ["CONTROLS_PER_BATCH", "CheckedDns", "checked_dns", "distrust_of"]

# Range-proven addresses asked per batch of lines: a handful is enough to catch a resolver that
# denies everything, at a cost next to nothing beside the lookups the audit needs.
CONTROLS_PER_BATCH = 2


class CheckedDns(Mapping):
    """The run's DNS answers by address, with the reason not to trust their NXDOMAINs, if any."""

    def __init__(self, answers: Mapping[str, DnsAnswer], distrust: str | None):
        self._answers = answers
        self.distrust = distrust

    def __getitem__(self, address: str) -> DnsAnswer:
        return self._answers[address]

    def get(self, address, default=None):
        return self._answers.get(address, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._answers)

    def __len__(self) -> int:
        return len(self._answers)


def checked_dns(answers: Mapping[str, DnsAnswer], ranges: RangeIndex) -> CheckedDns:
    """`answers`, distrusted when one says an address a crawler range holds has no PTR record."""
    for ip, answer in answers.items():
        if answer.ptr.error in DEFINITE_DNS_ERRORS:
            address = parse_ip(ip)
            if address is not None and ranges.ever_holds(address):
                return CheckedDns(answers, f"the resolver answered {answer.ptr.error} for {address}, which the published ranges prove")
    return CheckedDns(answers, None)


def distrust_of(dns: Mapping | None) -> str | None:
    """Why the NXDOMAINs of `dns` prove nothing; None when they may."""
    return dns.distrust if isinstance(dns, CheckedDns) else None
