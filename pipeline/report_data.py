"""What the HTML report shows, aggregated from a finished run's tables in one pass over the
verdicts. Only counts, top-N lists and per-bucket totals are kept, so the report stays small
however many requests the run had."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from apache_beam.io.filesystems import FileSystems

from pipeline import report, tables, whatif

TOP_PATHS = 10
TOP_ADDRESSES = 5
# The timeline is drawn in at most this many buckets: hours, else days, else weeks.
MAX_BUCKETS = 240
_BUCKETS = (timedelta(hours=1), timedelta(days=1), timedelta(weeks=1))
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_VERDICT_COLUMNS = [
    "ts", "host", "client_ip", "user_agent", "path", "crawler", "operator", "identity",
    "robots_version", "rule_kind", "rule_pattern", "rule_line", "decision", "reason",
]


def crawler_label(row: dict) -> str:
    """How a crawler is named in the report: its claim, else the operator of its range."""
    return row.get("crawler") or row.get("operator") or "(none)"


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
        size = next((s for s in _BUCKETS if (last - first) / s < MAX_BUCKETS), _BUCKETS[-1])
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
    return _EPOCH + ((moment - _EPOCH) // size) * size


def gather(out: str) -> ReportData:
    """Everything the report draws, read from the run's output folder."""
    data = ReportData(
        report.load(out),
        sorted(tables.rows(FileSystems.join(out, "robots_versions")), key=lambda r: (r["host"], str(r["effective_from"]))),
        whatif.load_summary(out),
    )
    for row in data.robots_versions:
        row["effective_from"] = tables.moment(row["effective_from"])
    for row in tables.rows(FileSystems.join(out, "verdicts"), _VERDICT_COLUMNS):
        _add(data, row)
    return data


def _add(data: ReportData, row: dict) -> None:
    crawler = crawler_label(row)
    data.requests_by_host[row["host"]] += 1
    ts = tables.moment(row["ts"])
    data.timeline[crawler][ts.replace(minute=0, second=0, microsecond=0)] += 1
    if row["decision"].startswith("disallowed"):
        version = row["robots_version"] or {}
        data.disallowed[crawler][
            Disallowed(
                row["host"], row["path"], row["decision"], row["reason"], row["rule_kind"], row["rule_pattern"],
                row["rule_line"], tables.moment(version.get("effective_from")), version.get("status"),
            )
        ] += 1
    if row["identity"] == "spoofed":
        spoofed = data.spoofing[crawler]
        spoofed.requests += 1
        spoofed.addresses[row["client_ip"]] += 1
        spoofed.user_agents[row["user_agent"]] += 1
