"""Operators' published IP ranges: dated snapshots and the longest-prefix lookup in them.

Range files are dated snapshots. Each stands for a span of days: from its own day to the day before
the next snapshot of its source, the last one for its own day, unless a recorded end (an imported
version's, `update-ranges import-git`) closes it sooner or carries it further. What a source's spans
say about an address on a day is `matcher/range_evidence.py`'s rule; this module holds the spans.
Prefixes are kept per prefix length in dicts keyed by the network number, so a lookup is one probe
per distinct length (a dozen or so) rather than a scan over hundreds of prefixes.

This module takes already-parsed JSON documents; reading the ranges folder is the caller's job.
"""
from __future__ import annotations

import functools
import ipaddress
from bisect import bisect_left, bisect_right
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from types import MappingProxyType

from matcher.addresses import Address, Network
from matcher.bounded import BoundedCache
from matcher.in_effect import index_in_effect
from matcher.web_bot_auth import KeyDirectories
from matcher.timerange import shifted_day

__all__ = [
    "BROADEST_PREFIX",
    "RANGE_WINDOW",
    "Document",
    "RangeHit",
    "RangeIndex",
    "Snapshot",
    "Span",
    "build_range_index",
    "parse_snapshot",
    "plain_list_document",
    "too_broad",
    "too_much_space",
]

Document = tuple[str, date, object]  # (source name, snapshot day, parsed JSON)

# Operators' files have carried zero-width spaces and similar invisible characters inside prefixes.
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
# The broadest prefix a range file may list, per IP version. Real crawler files list /19 to /28
# in IPv4 (Anthropic's broadest is a /22) and /44 to /64 in IPv6. The bound sits at the largest
# block one organisation holds (Apple's 17.0.0.0/8; the biggest RIR allocations in IPv6 are
# /19), so no real file trips it, while 0.0.0.0/0, ::/0 and other "verify everyone" entries do.
BROADEST_PREFIX = MappingProxyType({4: 8, 6: 19})
_SHOWN_ITEM = 80
# Request days whose merged range table is kept at hand; a rebuild costs one bisect per source.
_DAYS_KEPT = 4096
# Days each side of a request within which a snapshot's absence proves a claim false
# (`--range-window`): operators publish ranges around the time they use them.
RANGE_WINDOW = 30
_DAY = timedelta(days=1)


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


@dataclass(frozen=True)
class Span:
    """The days a snapshot stands for, `first` to `last` inclusive."""

    snapshot: Snapshot
    first: date
    last: date

    def distance(self, day: date) -> int:
        """Whole days from `day` to the nearest day of the span; 0 inside it."""
        if day < self.first:
            return (self.first - day).days
        return max((day - self.last).days, 0)


def _spans_of(history: Sequence[Snapshot], recorded_ends: Mapping[date, date]) -> tuple[Span, ...]:
    """The spans of one source's snapshots, oldest first: each until the day before the next, the
    last for its own day; a recorded end shortens a span or carries the last one further."""
    spans = []
    for index, snapshot in enumerate(history):
        until = history[index + 1].taken - _DAY if index + 1 < len(history) else None
        recorded = recorded_ends.get(snapshot.taken)
        if recorded is not None:
            last = max(min(recorded, until) if until is not None else recorded, snapshot.taken)
        else:
            last = until if until is not None else snapshot.taken
        spans.append(Span(snapshot, snapshot.taken, last))
    return tuple(spans)


class RangeIndex:
    """Every source's snapshots and their spans, the window around a request within which they
    speak (`window`, whole days each side), the problems met while reading them, and the
    snapshots of the operators' Web Bot Auth key directories kept beside them
    (`key_directories`)."""

    def __init__(
        self,
        snapshots: Iterable[Snapshot],
        problems: Sequence[str] = (),
        key_directories: KeyDirectories | None = None,
        recorded_ends: Mapping[tuple[str, date], date] | None = None,
        window: int = RANGE_WINDOW,
    ):
        self.key_directories = key_directories or KeyDirectories()
        by_source: dict[str, list[Snapshot]] = {}
        for snapshot in sorted(snapshots, key=lambda s: (s.source, s.taken)):
            by_source.setdefault(snapshot.source, []).append(snapshot)
        self._snapshots = {source: tuple(items) for source, items in by_source.items()}
        self._days = {source: [s.taken for s in items] for source, items in by_source.items()}
        ends = recorded_ends or {}
        self._spans = {
            source: _spans_of(items, {day: end for (named, day), end in ends.items() if named == source})
            for source, items in self._snapshots.items()
        }
        self._span_lasts = {source: [span.last for span in spans] for source, spans in self._spans.items()}
        self.window = window
        self._ever: dict[str, _PrefixTable] = {}
        self.problems = tuple(problems)
        self._merged: dict[tuple[Snapshot | None, ...], _PrefixTable] = {}
        # keyed by request days, which any log line picks (years 1 to 9999)
        self._by_day: BoundedCache[date, _PrefixTable] = BoundedCache(_DAYS_KEPT)
        self._all_snapshots: _PrefixTable | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        """Sources with at least one snapshot, sorted."""
        return tuple(self._snapshots)

    def snapshots(self, source: str) -> tuple[Snapshot, ...]:
        return self._snapshots.get(source, ())

    def spans(self, source: str) -> tuple[Span, ...]:
        return self._spans.get(source, ())

    def spans_within(self, source: str, day: date) -> tuple[Span, ...]:
        """The spans of `source` with a day within `window` days of `day`, oldest first."""
        spans = self._spans.get(source, ())
        if not spans:
            return ()
        reach = timedelta(days=self.window)
        # spans are disjoint and ordered, so their last days ascend as their first days do
        start = bisect_left(self._span_lasts[source], shifted_day(day, -reach))
        stop = bisect_right(self._days[source], shifted_day(day, reach))
        return spans[start:stop]

    def nearest_span(self, source: str, day: date) -> Span | None:
        """The span of `source` nearest `day` (the earlier of two as near); None without snapshots."""
        spans = self._spans.get(source, ())
        after = bisect_right(self._days.get(source, ()), day)
        around = spans[max(after - 1, 0):after + 1]
        return min(around, key=lambda span: span.distance(day), default=None)

    def ever_lists(self, source: str, address: Address) -> bool:
        """Whether any snapshot of `source`, whatever its day, lists `address`."""
        table = self._ever.get(source)
        if table is None:
            table = self._ever[source] = _merge(s.table for s in self._snapshots.get(source, ()))
        return table.find(address) is not None

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

    def ever_holds(self, address: Address) -> bool:
        """Whether any snapshot of any source, whatever its day, holds `address`: when none
        does, no request from it is in a crawler range, on any day."""
        if self._all_snapshots is None:
            self._all_snapshots = _merge(s.table for items in self._snapshots.values() for s in items)
        return self._all_snapshots.find(address) is not None

    def _merged_table(self, day: date) -> _PrefixTable:
        # days with the same snapshots in force share one merged table
        in_force = tuple(self.snapshot_at(source, day) for source in self._snapshots)
        table = self._merged.get(in_force)
        if table is None:
            table = self._merged[in_force] = _merge(s.table for s in in_force if s is not None)
        return table


def build_range_index(
    documents: Iterable[Document],
    operators: Mapping[str, str],
    problems: Iterable[str] = (),
    key_directories: KeyDirectories | None = None,
    recorded_ends: Mapping[tuple[str, date], date] | None = None,
    window: int = RANGE_WINDOW,
) -> RangeIndex:
    """Parse snapshot documents of known sources; what cannot be used is reported, not fatal.
    `recorded_ends` maps (source, snapshot day) to the last day that snapshot stood for, where
    it is known (an imported version's)."""
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
    return RangeIndex(snapshots.values(), found, key_directories, recorded_ends, window)


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
        elif too_broad(network):
            problems.append(f"{name}: prefixes[{index}] {too_broad(network)}; ignored")
        else:
            entries.append((network, RangeHit(source, operator, taken, str(network))))
    if not entries:
        problems.append(f"{name}: no usable prefix; snapshot ignored")
        return None, tuple(problems)
    excess = too_much_space(network for network, _ in entries)
    if excess:
        problems.append(f"{name}: {excess}; snapshot ignored")
        return None, tuple(problems)
    return Snapshot(source, operator, taken, len(entries), _table(entries)), tuple(problems)


def too_much_space(networks: Iterable[Network]) -> str | None:
    """Why one file may not list all of `networks` together, or None when it may: the addresses
    they cover, overlaps counted once, exceed one prefix of BROADEST_PREFIX per IP version. A
    bound per prefix alone lets 256 /8s cover the whole of IPv4."""
    by_version: dict[int, list[Network]] = {4: [], 6: []}
    for network in networks:
        by_version[network.version].append(network)
    for version, listed in by_version.items():
        bits = 32 if version == 4 else 128
        covered = sum(network.num_addresses for network in ipaddress.collapse_addresses(listed))
        if covered > 1 << (bits - BROADEST_PREFIX[version]):
            return (f"its IPv{version} prefixes cover {_share(covered, bits)} addresses, more than the one"
                    f" /{BROADEST_PREFIX[version]} a file may cover in all")
    return None


def _share(covered: int, bits: int) -> str:
    """A count of addresses as the prefix length holding as many: `/7 worth of`."""
    return f"a /{bits - covered.bit_length() + 1} worth of" if covered & (covered - 1) == 0 else f"{covered:,}"


def too_broad(network: Network) -> str | None:
    """Why a range file may not list `network`, or None when it may."""
    broadest = BROADEST_PREFIX[network.version]
    if network.prefixlen >= broadest:
        return None
    return f"{network} is broader than /{broadest}, the broadest prefix accepted for IPv{network.version}"


def plain_list_document(text: str, name: str) -> tuple[dict, tuple[str, ...]]:
    """A plain range list (one prefix a line; blank lines and `#` comments skipped) as the
    operators' JSON document, holding the prefixes the audit accepts; the others are reported
    by line, with `name` saying which file."""
    prefixes: list[dict[str, str]] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        key = "ipv6Prefix" if ":" in entry else "ipv4Prefix"
        network = _network({key: entry})
        if network is None:
            problems.append(f"{name}: line {number} {_shown(entry)} is not an IP prefix; ignored")
        elif too_broad(network):
            problems.append(f"{name}: line {number} {too_broad(network)}; ignored")
        else:
            prefixes.append({key: str(network)})
    return {"prefixes": prefixes}, tuple(problems)


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
