"""Who really sent a request: a crawler's claim checked against its operator's published IP ranges,
then, where the operator names host suffixes, against forward-confirmed reverse DNS.

Range files are dated snapshots; a request is checked against the snapshot of each source in force
on its day (UTC): the latest dated on or before it. A request older than every snapshot of a source
has no range evidence from it: today's list says nothing about who held an address years ago.
Prefixes are kept per prefix length in dicts keyed by the network number, so a lookup is one probe
per distinct length (a dozen or so) rather than a scan over hundreds of prefixes.

Reverse DNS proves a claim when a PTR name of the address ends in one of the crawler's suffixes at
a label boundary and a forward lookup of that name returns the address. DNS failures that say a
record does not exist (NXDOMAIN, an empty answer) disprove it; any other failure leaves it
unverified, because a timeout says nothing about who sent the request.

This module takes already-parsed JSON documents and already-resolved DNS answers; reading the
ranges folder and asking DNS servers is the caller's job.
"""
from __future__ import annotations

import functools
import ipaddress
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from types import MappingProxyType
from typing import Literal

from matcher.agents import Crawler
from matcher.bounded import BoundedCache
from matcher.in_effect import index_in_effect

Status = Literal["verified", "spoofed", "unverified", "unverifiable", "undeclared"]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Document = tuple[str, date, object]  # (source name, snapshot day, parsed JSON)

ROBOTS_ONLY_EVIDENCE = "token is robots-only; never sent as a User-Agent"
DNS_OFF_EVIDENCE = "dns-off: needs reverse DNS"
NOT_RESOLVED = "not-resolved"
# NXDOMAIN and an empty answer say the record does not exist. Every other failure (timeout,
# SERVFAIL, REFUSED, an unreachable server, no recorded answer) might pass on another try.
DEFINITE_DNS_ERRORS = frozenset({"nxdomain", "no-answer"})
INVALID_IP_EVIDENCE = "invalid client ip"
NO_METHOD_EVIDENCE = "operator publishes no verification method"

# Operators' files have carried zero-width spaces and similar invisible characters inside prefixes.
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
_MAX_IP_TEXT = 64
# The broadest prefix a range file may list, per IP version. Real crawler files list /19 to /28
# in IPv4 (Anthropic's broadest is a /22) and /44 to /64 in IPv6. The bound sits at the largest
# block one organisation holds (Apple's 17.0.0.0/8; the biggest RIR allocations in IPv6 are
# /19), so no real file trips it, while 0.0.0.0/0, ::/0 and other "verify everyone" entries do.
BROADEST_PREFIX = MappingProxyType({4: 8, 6: 19})
_SHOWN_ITEM = 80
# Request days whose merged range table is kept at hand; a rebuild costs one bisect per source.
_DAYS_KEPT = 4096


@dataclass(frozen=True)
class IdentityResult:
    status: Status
    method: str  # "ip-range" | "reverse-dns" | "robots-only" | "none"
    evidence: str
    operator: str | None


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


@dataclass(frozen=True)
class RangeHit:
    source: str
    operator: str
    taken: date
    prefix: str

    @functools.cached_property
    def evidence(self) -> str:  # a hit is shared by every request from its prefix
        return f"{self.prefix} in {self.source} snapshot {self.taken.isoformat()}"


@dataclass(frozen=True)
class _PrefixTable:
    # per IP version: (shift, {network number >> shift: hit}), longest prefix (smallest shift) first
    levels: Mapping[int, tuple[tuple[int, Mapping[int, RangeHit]], ...]]

    def find(self, address: Address) -> RangeHit | None:
        value = int(address)
        for shift, networks in self.levels[address.version]:
            hit = networks.get(value >> shift)
            if hit is not None:
                return hit
        return None


@dataclass(frozen=True)
class Snapshot:
    source: str
    operator: str
    taken: date
    size: int
    table: _PrefixTable = field(repr=False, compare=False)

    @property
    def label(self) -> str:
        return f"{self.source} snapshot {self.taken.isoformat()}"

    def find(self, address: Address) -> RangeHit | None:
        return self.table.find(address)


class RangeIndex:
    """Every source's snapshots, with the problems met while reading them."""

    def __init__(self, snapshots: Iterable[Snapshot], problems: Sequence[str] = ()):
        by_source: dict[str, list[Snapshot]] = {}
        for snapshot in sorted(snapshots, key=lambda s: (s.source, s.taken)):
            by_source.setdefault(snapshot.source, []).append(snapshot)
        self._snapshots = {source: tuple(items) for source, items in by_source.items()}
        self._days = {source: [s.taken for s in items] for source, items in by_source.items()}
        self.problems = tuple(problems)
        self._merged: dict[tuple[Snapshot | None, ...], _PrefixTable] = {}
        # keyed by request days, which any log line picks (years 1 to 9999)
        self._by_day: BoundedCache[date, _PrefixTable] = BoundedCache(_DAYS_KEPT)

    @property
    def sources(self) -> tuple[str, ...]:
        """Sources with at least one snapshot, sorted."""
        return tuple(self._snapshots)

    def snapshots(self, source: str) -> tuple[Snapshot, ...]:
        return self._snapshots.get(source, ())

    def snapshot_at(self, source: str, day: date) -> Snapshot | None:
        """The snapshot in force on `day`: the latest on or before it; None before the first."""
        items = self._snapshots.get(source)
        index = index_in_effect(self._days[source], day) if items else -1
        return items[index] if index >= 0 else None

    def find_any(self, address: Address, day: date) -> RangeHit | None:
        """The longest prefix containing `address` among all sources in force on `day`."""
        table = self._by_day.get(day)
        if table is None:
            table = self._by_day[day] = self._merged_table(day)
        return table.find(address)

    def _merged_table(self, day: date) -> _PrefixTable:
        # days with the same snapshots in force share one merged table
        in_force = tuple(self.snapshot_at(source, day) for source in self._snapshots)
        table = self._merged.get(in_force)
        if table is None:
            table = self._merged[in_force] = _merge(s.table for s in in_force if s is not None)
        return table


def build_range_index(
    documents: Iterable[Document], operators: Mapping[str, str], problems: Iterable[str] = ()
) -> RangeIndex:
    """Parse snapshot documents of known sources; what cannot be used is reported, not fatal."""
    found = list(problems)
    snapshots: dict[tuple[str, date], Snapshot] = {}
    for source, taken, document in documents:
        name = f"{source}/{taken.isoformat()}.json"
        if source not in operators:
            found.append(f"{name}: '{source}' is not a range source of the registry; ignored")
        elif (source, taken) in snapshots:
            found.append(f"{name}: a second snapshot for the same day; ignored")
        else:
            snapshot, issues = parse_snapshot(source, operators[source], taken, document)
            found.extend(issues)
            if snapshot is not None:
                snapshots[source, taken] = snapshot
    return RangeIndex(snapshots.values(), found)


def parse_snapshot(
    source: str, operator: str, taken: date, document: object
) -> tuple[Snapshot | None, tuple[str, ...]]:
    """One operator file; bad prefixes are skipped and reported, a file with none is dropped."""
    name = f"{source}/{taken.isoformat()}.json"
    prefixes = document.get("prefixes") if isinstance(document, dict) else None
    if not isinstance(prefixes, list):
        return None, (f"{name}: no 'prefixes' list; snapshot ignored",)
    problems: list[str] = []
    entries: list[tuple[Network, RangeHit]] = []
    for index, item in enumerate(prefixes):
        network = _network(item)
        if network is None:
            problems.append(f"{name}: prefixes[{index}] {_shown(item)} is not an IP prefix; ignored")
        elif network.prefixlen < BROADEST_PREFIX[network.version]:
            problems.append(
                f"{name}: prefixes[{index}] {network} is broader than /{BROADEST_PREFIX[network.version]},"
                f" the broadest prefix accepted for IPv{network.version}; ignored"
            )
        else:
            entries.append((network, RangeHit(source, operator, taken, str(network))))
    if not entries:
        problems.append(f"{name}: no usable prefix; snapshot ignored")
        return None, tuple(problems)
    return Snapshot(source, operator, taken, len(entries), _table(entries)), tuple(problems)


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
        answer = dns.get(str(address)) or DnsAnswer(str(address), Lookup(error=NOT_RESOLVED))
        status, evidence = confirm_reverse_dns(answer, address, crawler.rdns_suffixes)
        if status != "verified":
            evidence = "; ".join((evidence, *_range_context(checked, missing)))
        return IdentityResult(status, "reverse-dns", evidence, crawler.operator)
    return _without_range_match(crawler, checked, missing)


def reverse_dns_address(crawler: Crawler, ip: str, at: date | datetime, ranges: RangeIndex) -> str | None:
    """The address (as `verify` keys it) whose reverse DNS would decide this claim, or None when
    DNS would not be consulted: a range proves it, the crawler has no suffixes, or the IP is bad."""
    if crawler.robots_only or not crawler.rdns_suffixes:
        return None
    address = parse_ip(ip)
    if address is None:
        return None
    hit, _, _ = _check_ranges(crawler, address, request_day(at), ranges)
    return None if hit is not None else str(address)


def confirm_reverse_dns(answer: DnsAnswer, address: Address, suffixes: Sequence[str]) -> tuple[Status, str]:
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


def _dns_failure_status(error: str) -> Status:
    return "spoofed" if error in DEFINITE_DNS_ERRORS else "unverified"


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


def parse_ip(text: str) -> Address | None:
    """The client address of a log field; `::ffff:a.b.c.d` is `a.b.c.d`; None when unparseable."""
    # no address is this long; the bound keeps junk fields out of the cache
    return _parse_ip(text) if len(text) <= _MAX_IP_TEXT else None


@functools.lru_cache(maxsize=1 << 16)
def _parse_ip(text: str) -> Address | None:
    candidate = text.strip()
    if candidate.startswith("[") and candidate.endswith("]"):
        candidate = candidate[1:-1]
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def request_day(at: date | datetime) -> date:
    """The UTC day of a timestamp (naive datetimes are taken as UTC)."""
    if isinstance(at, datetime):
        if at.tzinfo is not None:
            at = at.astimezone(timezone.utc)
        return at.date()
    return at


def _shown(item: object) -> str:
    """An entry of a range file as a problem shows it: a repr, cut short."""
    text = repr(item)
    return text if len(text) <= _SHOWN_ITEM else text[:_SHOWN_ITEM] + "..."


def _network(item: object) -> Network | None:
    if not isinstance(item, dict):
        return None
    text = item.get("ipv4Prefix") or item.get("ipv6Prefix")
    if not isinstance(text, str):
        return None
    visible = "".join(ch for ch in text if unicodedata.category(ch) not in _INVISIBLE)
    try:
        return ipaddress.ip_network(visible, strict=False)
    except ValueError:
        return None


def _table(entries: Iterable[tuple[Network, RangeHit]]) -> _PrefixTable:
    return _build(
        (n.version, n.max_prefixlen - n.prefixlen, int(n.network_address), hit) for n, hit in entries
    )


def _merge(tables: Iterable[_PrefixTable]) -> _PrefixTable:
    return _build(
        (version, shift, key << shift, hit)
        for table in tables
        for version, by_shift in table.levels.items()
        for shift, networks in by_shift
        for key, hit in networks.items()
    )


def _build(items: Iterable[tuple[int, int, int, RangeHit]]) -> _PrefixTable:
    """Index (version, shift, network number, hit); the first hit for a network is kept."""
    levels: dict[int, dict[int, dict[int, RangeHit]]] = {4: {}, 6: {}}
    for version, shift, number, hit in items:
        levels[version].setdefault(shift, {}).setdefault(number >> shift, hit)
    return _PrefixTable({v: tuple(sorted(by_shift.items())) for v, by_shift in levels.items()})
