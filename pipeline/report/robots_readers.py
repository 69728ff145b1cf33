"""Who reads your robots.txt: a finished run's `robots_fetches` rows per crawler and host, the
crawlers with requests but no fetch seen, and each crawler's first fetch after each change."""
from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from pipeline.tables import reading as tables

__all__ = ["FirstRead", "Readers", "first_reads", "readers", "unread_by"]


@dataclass(frozen=True)
class Readers:
    """One fetch family's robots.txt requests on one host, of one identity class."""

    host: str | None
    family: str
    identity: str
    crawlers: tuple[str, ...]
    times: tuple[datetime, ...]
    statuses: Counter
    versions: tuple[datetime, ...]  # effective_from of each version it was served, in order

    @property
    def median_interval(self) -> timedelta | None:
        gaps = self._gaps()
        return statistics.median(gaps) if gaps else None

    @property
    def longest_interval(self) -> timedelta | None:
        gaps = self._gaps()
        return max(gaps) if gaps else None

    def _gaps(self) -> list[timedelta]:
        return [later - earlier for earlier, later in zip(self.times, self.times[1:])]


def readers(rows: list[dict]) -> list[Readers]:
    """Per (host, family, identity), in that order; rows carried over from an earlier run count."""
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        grouped[row["host"], row["family"], row["identity"]].append(row)
    found = []
    for (host, family, identity), of_key in sorted(grouped.items(), key=lambda item: tuple(map(str, item[0]))):
        of_key.sort(key=lambda row: tables.moment(row["ts"]))
        versions: list[datetime] = []
        for row in of_key:
            version = row["version"]
            if version is not None:
                moment = tables.moment(version["effective_from"])
                if moment not in versions:
                    versions.append(moment)
        found.append(Readers(
            host, family, identity,
            tuple(sorted({row["crawler"] for row in of_key})),
            tuple(tables.moment(row["ts"]) for row in of_key),
            Counter("none logged" if row["status"] is None else str(row["status"]) for row in of_key),
            tuple(versions),
        ))
    return found


def unread_by(summary_rows: list[dict], rows: list[dict]) -> list[dict]:
    """The summary rows (crawler, identity, requests) of crawlers none of whose requests for
    robots.txt the logs hold, under their own name or their fetch family's: the crawler, or the
    family named like it."""
    fetched = {(row["crawler"], row["identity"]) for row in rows}
    fetched |= {(row["family"], row["identity"]) for row in rows}
    return [
        row for row in summary_rows
        if row["crawler"] is not None and row["identity"] != "undeclared" and (row["crawler"], row["identity"]) not in fetched
    ]


@dataclass(frozen=True)
class FirstRead:
    """A robots.txt change of a host and the first fetch of one reader after it (None: none)."""

    host: str
    changed_at: datetime
    reader: Readers
    first_fetch: datetime | None

    @property
    def after(self) -> timedelta | None:
        return None if self.first_fetch is None else self.first_fetch - self.changed_at


def first_reads(version_rows: list[dict], found: list[Readers]) -> list[FirstRead]:
    """For each change (every version after a host's first) and each reader of that host."""
    changes: dict[str, list[datetime]] = defaultdict(list)
    for row in version_rows:
        changes[row["host"]].append(tables.moment(row["effective_from"]))
    result = []
    for host, moments in sorted(changes.items()):
        for changed_at in sorted(moments)[1:]:
            for reader in found:
                if reader.host == host:
                    later = [ts for ts in reader.times if ts >= changed_at]
                    result.append(FirstRead(host, changed_at, reader, min(later) if later else None))
    return result
