"""What the HTML report shows, gathered from a finished run's small tables and the counts of its
verdicts the run wrote (`report_counts.json`), never the verdicts themselves. Only counts, top-N
lists and per-bucket totals are kept, so the report stays small however many requests the run had."""
from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from matcher import records
from matcher.report_counts import ReportCounts
from matcher.timerange import from_micros, micros, parse_timestamp
from pipeline.report import text as report
from pipeline.tables import reading as tables
from pipeline.tables.run_folder import read_manifest
from pipeline.report import whatif
from pipeline.report.counts import report_counts

TOP_ADDRESSES = 5
# The timeline is drawn in at most this many buckets: hours, else days, else weeks.
MAX_BUCKETS = 240
_BUCKETS = (timedelta(hours=1), timedelta(days=1), timedelta(weeks=1))


@dataclass(frozen=True)
class Disallowed:
    """One disallowed path of one crawler, the identity of the requests, and what decided it
    (`report_counts.DISALLOWED_FIELDS`, in order)."""

    identity: str
    host: str | None
    path: str
    decision: str
    reason: str
    rule_kind: str | None
    rule_pattern: str | None
    rule_line: int | None
    version_from: datetime | None
    version_status: str | None


@dataclass(frozen=True)
class CrawlerDisallowed:
    """One crawler's disallowed requests of one identity: exact totals, and the most requested rows
    in order."""

    requests: int
    distinct: int
    top: tuple[tuple[Disallowed, int], ...]


@dataclass
class Spoofing:
    requests: int = 0
    addresses: Counter = field(default_factory=Counter)
    user_agents: Counter = field(default_factory=Counter)


@dataclass
class ReportData:
    summary: report.RunSummary
    robots_versions: list[dict]
    whatif: dict | None
    timeline: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # crawler -> hour -> n
    # crawler -> hour -> requests of any disallowed decision
    disallowed_timeline: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    # crawler -> identity -> its disallowed requests
    disallowed: dict[str, dict[str, CrawlerDisallowed]] = field(default_factory=lambda: defaultdict(dict))
    counts: ReportCounts = field(default_factory=ReportCounts)
    spoofing: dict[str, Spoofing] = field(default_factory=lambda: defaultdict(Spoofing))
    requests_by_host: Counter = field(default_factory=Counter)
    automated_disallowed: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # client -> Disallowed -> n
    llms_txt: Counter = field(default_factory=Counter)  # (crawler, identity, path) -> n
    conflicts: Counter = field(default_factory=Counter)  # (crawler, identity, conflict, host, path, version) -> n
    robots_fetches: list[dict] = field(default_factory=list)  # the run's robots_fetches rows
    changes: list[dict] | None = None  # the run's changes rows; None when the run wrote no such table
    referrals: list[dict] = field(default_factory=list)  # the run's referrals rows
    backoff: list[dict] = field(default_factory=list)  # the run's backoff rows

    def versions_by_host(self, top: int) -> dict[str, list[dict]]:
        """The robots.txt versions of the `top` hosts with most requests (then by name)."""
        by_host: dict[str, list[dict]] = defaultdict(list)
        for row in self.robots_versions:
            by_host[row["host"]].append(row)
        shown = sorted(by_host, key=lambda host: (-self.requests_by_host[host], host))[:top]
        return {host: by_host[host] for host in shown}

    def timeline_buckets(self, disallowed: bool = False) -> tuple[timedelta, list[datetime], dict[str, list[int]]]:
        """The bucket size, the bucket starts and each crawler's requests (or its disallowed
        requests) per bucket; the buckets span every crawler request either way."""
        hours = {hour for counts in self.timeline.values() for hour in counts}
        if not hours:
            return _BUCKETS[0], [], {}
        first, last = min(hours), max(hours)
        size = next((s for s in _BUCKETS if (last - first) / s < MAX_BUCKETS), None)
        if size is None:
            # more than MAX_BUCKETS weeks (a log may hold any year): whole weeks, as many as it takes
            size = _BUCKETS[-1] * (int((last - first) / (_BUCKETS[-1] * MAX_BUCKETS)) + 1)
        start = _floor(first, size)
        count = int((last - start) / size) + 1
        starts = [start + i * size for i in range(count)]
        series = {}
        for crawler, counts in (self.disallowed_timeline if disallowed else self.timeline).items():
            values = [0] * count
            for hour, n in counts.items():
                values[int((hour - start) / size)] += n
            series[crawler] = values
        return size, starts, series


def _floor(moment: datetime, size: timedelta) -> datetime:
    step = size // timedelta(microseconds=1)
    return from_micros(micros(moment) // step * step)  # at the earliest 0001-01-01


def gather(out: str) -> ReportData:
    """Everything the report draws, read from the run's output folder."""
    data = ReportData(
        report.load(out),
        sorted(tables.rows(out, records.ROBOTS_VERSIONS_TABLE), key=lambda r: (r["host"], str(r["effective_from"]))),
        whatif.load_summary(out),
    )
    for row in data.robots_versions:
        row["effective_from"] = tables.moment(row["effective_from"])
    # A run from before the table was written has none: its section says no fetch was recorded.
    if records.ROBOTS_FETCHES_TABLE in read_manifest(out)["tables"]:
        data.robots_fetches = list(tables.rows(out, records.ROBOTS_FETCHES_TABLE))
    if records.CHANGES_TABLE in read_manifest(out)["tables"]:
        data.changes = [_change(row) for row in tables.rows(out, records.CHANGES_TABLE)]
    if records.REFERRALS_TABLE in read_manifest(out)["tables"]:
        data.referrals = list(tables.rows(out, records.REFERRALS_TABLE))
    if records.BACKOFF_TABLE in read_manifest(out)["tables"]:
        data.backoff = list(tables.rows(out, records.BACKOFF_TABLE))
    counts = data.counts = report_counts(out)
    data.requests_by_host.update(counts.hosts)
    for (crawler, hour), n in counts.timeline.items():
        data.timeline[crawler][hour] += n
    for (crawler, hour), n in counts.disallowed_timeline.items():
        data.disallowed_timeline[crawler][hour] += n
    data.disallowed.update(disallowed_by_crawler(counts))
    for (crawler, ip), n in counts.spoofed_addresses.items():
        data.spoofing[crawler].requests += n
        data.spoofing[crawler].addresses[ip] += n
    for (crawler, user_agent), n in counts.spoofed_user_agents.items():
        data.spoofing[crawler].user_agents[user_agent] += n
    for (client, *fields), n in counts.automated_disallowed.items():
        data.automated_disallowed[client][Disallowed(*fields)] += n
    data.llms_txt.update(counts.llms_txt)
    data.conflicts.update(counts.conflicts)
    return data


_CHANGE_MOMENTS = ("change_at", "before_from", "after_until", "first_robots_fetch_after", "last_newly_disallowed_request")


def _change(row: dict) -> dict:
    """A `changes` row with its moments as datetimes, whichever format the run wrote."""
    return {**row, **{name: None if row[name] is None else tables.moment(row[name]) for name in _CHANGE_MOMENTS}}


def disallowed_by_crawler(counts: ReportCounts) -> dict[str, dict[str, CrawlerDisallowed]]:
    """The counted disallowed requests as the page reads them: crawler -> identity -> its rows."""
    by_crawler: dict[str, dict[str, CrawlerDisallowed]] = defaultdict(dict)
    for (crawler, identity), of in counts.disallowed.items():
        top = tuple((_disallowed(identity, fields), n) for fields, n in of.top)
        by_crawler[crawler][identity] = CrawlerDisallowed(of.requests, of.distinct, top)
    return by_crawler


def _disallowed(identity: str, fields: tuple) -> Disallowed:
    row = Disallowed(identity, *fields)
    if row.version_from is None:
        return row
    return dataclasses.replace(row, version_from=parse_timestamp(row.version_from))
