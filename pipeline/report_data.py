"""What the HTML report shows, aggregated from a finished run's tables in one pass over the
verdicts. Only counts, top-N lists and per-bucket totals are kept, so the report stays small
however many requests the run had."""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pyarrow as pa
import pyarrow.compute as pc

from matcher import records
from matcher.timerange import from_micros, micros
from pipeline import report, tables, whatif

TOP_PATHS = 10
TOP_ADDRESSES = 5
# The timeline is drawn in at most this many buckets: hours, else days, else weeks.
MAX_BUCKETS = 240
_BUCKETS = (timedelta(hours=1), timedelta(days=1), timedelta(weeks=1))
_VERDICT_COLUMNS = {
    "ts", "host", "client_ip", "user_agent", "path", "crawler", "operator", "identity",
    "robots_version", "rule_kind", "rule_pattern", "rule_line", "decision", "reason",
}
# What tells one disallowed path of a crawler from another: the fields of `Disallowed`, in order.
_DISALLOWED_KEYS = [
    "host", "path", "decision", "reason", "rule_kind", "rule_pattern", "rule_line", "version_from", "version_status",
]


@dataclass(frozen=True)
class Disallowed:
    """One disallowed path of one crawler and what decided it."""

    host: str | None
    path: str
    decision: str
    reason: str
    rule_kind: str | None
    rule_pattern: str | None
    rule_line: int | None
    version_from: datetime | None
    version_status: str | None


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
    disallowed: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # crawler -> Disallowed -> n
    spoofing: dict[str, Spoofing] = field(default_factory=lambda: defaultdict(Spoofing))
    requests_by_host: Counter = field(default_factory=Counter)

    def versions_by_host(self, top: int) -> dict[str, list[dict]]:
        """The robots.txt versions of the `top` hosts with most requests (then by name)."""
        by_host: dict[str, list[dict]] = defaultdict(list)
        for row in self.robots_versions:
            by_host[row["host"]].append(row)
        shown = sorted(by_host, key=lambda host: (-self.requests_by_host[host], host))[:top]
        return {host: by_host[host] for host in shown}

    def timeline_buckets(self) -> tuple[timedelta, list[datetime], dict[str, list[int]]]:
        """The bucket size, the bucket starts and each crawler's requests per bucket."""
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
        for crawler, counts in self.timeline.items():
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
    columns = [c for c in records.VERDICTS if c.name in _VERDICT_COLUMNS]
    for table in tables.slices(out, records.VERDICTS_TABLE, columns):
        _add(data, table)
    return data


def _counts(table: pa.Table, keys: list[str]) -> Iterator[tuple]:
    """(key values..., rows) per distinct combination of `keys`."""
    grouped = table.group_by(keys).aggregate([(keys[0], "count", pc.CountOptions(mode="all"))])
    return zip(*(column.to_pylist() for column in grouped.columns))


def _add(data: ReportData, table: pa.Table) -> None:
    """One slice of verdicts, counted by Arrow: Python sees one row per distinct key, not per request."""
    # A crawler is named by its claim, else by the operator of its range (undeclared traffic).
    label = pc.coalesce(table["crawler"], table["operator"], pa.scalar("(none)"))
    version = table["robots_version"]
    table = table.append_column("label", label).append_column(
        "hour", pc.floor_temporal(table["ts"], unit="hour")
    ).append_column(
        "version_from", pc.struct_field(version, "effective_from")
    ).append_column("version_status", pc.struct_field(version, "status"))
    for host, n in _counts(table, ["host"]):
        data.requests_by_host[host] += n
    for crawler, hour, n in _counts(table, ["label", "hour"]):
        data.timeline[crawler][hour] += n
    disallowed = table.filter(pc.starts_with(table["decision"], "disallowed"))
    for crawler, *fields, n in _counts(disallowed, ["label", *_DISALLOWED_KEYS]):
        data.disallowed[crawler][Disallowed(*fields)] += n
    spoofed = table.filter(pc.equal(table["identity"], "spoofed"))
    for crawler, ip, n in _counts(spoofed, ["label", "client_ip"]):
        data.spoofing[crawler].requests += n
        data.spoofing[crawler].addresses[ip] += n
    for crawler, user_agent, n in _counts(spoofed, ["label", "user_agent"]):
        data.spoofing[crawler].user_agents[user_agent] += n
