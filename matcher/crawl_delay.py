"""Crawl-delay compliance: the gaps between one crawler's consecutive requests to one host.

docs/semantics.md § Crawl-delay. Requests are grouped by `Key` (host, claimed crawler, operator,
identity status), so traffic that only claims to be a crawler (`spoofed`) forms its own sequence
and never counts against the real one. Within a key the requests are taken in event-time order;
each request after the first has a gap to the one before it, and that gap is compared with the
Crawl-delay of the group in effect for the later request. A gap shorter than the delay is a violation, and it
belongs to the later request: that is the one the crawler should have held back.

Aggregates use fixed windows aligned to the Unix epoch, as Beam's `FixedWindows` does, and a
request's gap belongs to the window of the request, even when its predecessor lies in an
earlier window.

Nothing here knows about Beam: `release` is the one step the streaming transform repeats as
the watermark advances (`pipeline/crawl_delay.py`), and a batch run calls it once per key.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

# EPOCH, micros and from_micros stay importable from here: the streaming release and its tests use them.
from matcher.timerange import EPOCH, LONGEST_SPAN_S, from_micros, micros, shifted

__all__ = [
    "EPOCH",
    "CrawlRequest",
    "Key",
    "Release",
    "Step",
    "from_micros",
    "key_of",
    "micros",
    "release",
    "request_of",
    "violation_record",
    "window_end",
    "window_records",
    "window_start",
]

_MICROSECOND = timedelta(microseconds=1)


# (host, crawler, operator, identity): a plain tuple, so Beam can key state by it.
Key = tuple[str | None, str | None, str | None, str]


@dataclass(frozen=True)
class CrawlRequest:
    """What the crawl-delay audit keeps of one verdict."""

    ts: datetime
    source: str
    crawl_delay: float | None
    crawl_delay_line: int | None
    robots_version: Mapping | None
    honours_crawl_delay: bool | None


@dataclass(frozen=True)
class Step:
    """A request and the request of the same key just before it (None for the key's first)."""

    previous: CrawlRequest | None
    request: CrawlRequest

    @property
    def gap(self) -> timedelta | None:
        return None if self.previous is None else self.request.ts - self.previous.ts

    @property
    def violation(self) -> bool:
        return violates(self.gap, self.request.crawl_delay)


@dataclass(frozen=True)
class Release:
    """The requests released before a cut, chained to what came before; the rest held back."""

    steps: tuple[Step, ...]
    held: tuple[CrawlRequest, ...]


def key_of(verdict: Mapping) -> Key:
    return (verdict["host"], verdict["crawler"], verdict["operator"], verdict["identity"])


def request_of(verdict: Mapping) -> CrawlRequest:
    return CrawlRequest(
        ts=verdict["ts"],
        source=verdict["source"],
        crawl_delay=verdict["crawl_delay"],
        crawl_delay_line=verdict["crawl_delay_line"],
        robots_version=verdict["robots_version"],
        honours_crawl_delay=verdict["honours_crawl_delay"],
    )


def violates(gap: timedelta | None, delay: float | None) -> bool:
    """A gap shorter than the Crawl-delay in effect; no gap or no delay is never a violation."""
    if gap is None or delay is None:
        return False
    # A delay longer than any two times can be apart has no timedelta; every gap is shorter.
    return delay > LONGEST_SPAN_S or gap < timedelta(seconds=delay)


def in_order(requests: Iterable[CrawlRequest]) -> list[CrawlRequest]:
    # Requests logged in the same second tie on ts; the source breaks the tie so every run
    # pairs them the same way (their gap is zero either way).
    return sorted(requests, key=lambda request: (request.ts, request.source))


def release(previous: CrawlRequest | None, pending: Iterable[CrawlRequest], cut: datetime | None) -> Release:
    """Release the pending requests earlier than `cut` (all of them when None), in order,
    each paired with its predecessor; `previous` is the last request released before."""
    ordered = in_order(pending)
    ready = ordered if cut is None else [request for request in ordered if request.ts < cut]
    steps = []
    for request in ready:
        steps.append(Step(previous, request))
        previous = request
    return Release(tuple(steps), tuple(ordered[len(ready):]))


def window_start(moment: datetime, size: timedelta) -> datetime:
    """Start of the epoch-aligned window of `size` holding `moment` (at the earliest 0001-01-01)."""
    step = size // _MICROSECOND
    return from_micros(micros(moment) // step * step)


def window_end(start: datetime, size: timedelta) -> datetime:
    """End of the window starting at `start` (at the latest 9999-12-31T23:59:59.999999)."""
    return shifted(start, size)


def violation_record(key: Key, step: Step) -> dict:
    """A row of `records.CRAWL_DELAY_VIOLATIONS`."""
    request, previous = step.request, step.previous
    assert previous is not None  # only a request with a predecessor can violate
    return {
        **_key_columns(key),
        "honours_crawl_delay": request.honours_crawl_delay,
        "prev_ts": previous.ts,
        "ts": request.ts,
        "gap_s": step.gap.total_seconds(),
        "crawl_delay_s": request.crawl_delay,
        "crawl_delay_line": request.crawl_delay_line,
        "robots_version": request.robots_version,
        "source": request.source,
        "prev_source": previous.source,
    }


def window_records(key: Key, steps: Sequence[Step], size: timedelta) -> list[dict]:
    """Rows of `records.CRAWL_DELAY_WINDOWS`, one per window holding at least one of `steps`.

    `steps` must be in event-time order and every window they touch complete: a row is final.
    The delay reported is the one in effect for the window's last request.
    """
    rows: dict[datetime, dict] = {}
    for step in steps:
        start = window_start(step.request.ts, size)
        row = rows.get(start)
        if row is None:
            row = rows[start] = {
                **_key_columns(key),
                "window_start": start,
                "window_end": window_end(start, size),
                "requests": 0,
                "violations": 0,
                "min_gap_s": None,
            }
        row["requests"] += 1
        row["violations"] += int(step.violation)
        if step.gap is not None and (row["min_gap_s"] is None or step.gap.total_seconds() < row["min_gap_s"]):
            row["min_gap_s"] = step.gap.total_seconds()
        row["crawl_delay_s"] = step.request.crawl_delay
        row["crawl_delay_line"] = step.request.crawl_delay_line
        row["honours_crawl_delay"] = step.request.honours_crawl_delay
    return list(rows.values())


def _key_columns(key: Key) -> dict:
    host, crawler, operator, identity = key
    return {"host": host, "crawler": crawler, "operator": operator, "identity": identity}
