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
the watermark advances (`pipeline/graph/crawl_delay.py`). A batch run has each key's requests all at once
and many of them, so `batch_rows` takes them as primitives and writes the same rows in one pass,
making objects only for the rows; tests/test_crawl_delay.py holds it to `release`,
`violation_record` and `window_records`.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import itemgetter

# EPOCH, micros and from_micros stay importable from here: the streaming release and its tests use them.
from matcher.timerange import EPOCH, LONGEST_SPAN_S, from_micros, micros, shifted

__all__ = [
    "EPOCH",
    "BatchRequest",
    "CrawlRequest",
    "Key",
    "Release",
    "Shared",
    "Step",
    "batch_rows",
    "from_micros",
    "key_of",
    "micros",
    "release",
    "request_of",
    "shortest_gap_micros",
    "violation_record",
    "window_end",
    "window_records",
    "window_start",
]

_MICROSECOND = timedelta(microseconds=1)
# A gap in micros over this is exactly `timedelta.total_seconds()`: both divide integers.
_MICROS_PER_SECOND = 1_000_000


# (host, crawler, operator, identity): a plain tuple, so Beam can key state by it.
Key = tuple[str | None, str | None, str | None, str]

# What a request has besides its time and source, and many requests share: (crawl_delay,
# crawl_delay_line, robots_version, honours_crawl_delay), the fields of `CrawlRequest`.
Shared = tuple[float | None, int | None, Mapping | None, bool | None]

# A request as a batch release takes it: (ts in microseconds since the epoch, source, index of
# its `Shared` in a list of them).
BatchRequest = tuple[int, str, int]


@dataclass(frozen=True)
class CrawlRequest:
    """What the crawl-delay audit keeps of one verdict."""

    ts: datetime
    source: str
    crawl_delay: float | None
    crawl_delay_line: int | None
    robots_version: Mapping | None
    honours_crawl_delay: bool | None

    @property
    def shared(self) -> Shared:
        return self.crawl_delay, self.crawl_delay_line, self.robots_version, self.honours_crawl_delay


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
    return gap is not None and gap // _MICROSECOND < shortest_gap_micros(delay)


def shortest_gap_micros(delay: float | None) -> int | float:
    """The shortest gap in microseconds that keeps to a Crawl-delay (`timedelta` rounds the delay);
    minus infinity without a delay, so that no gap is shorter."""
    if delay is None:
        return -math.inf
    # A delay longer than any two times can be apart has no timedelta; every gap is shorter.
    return math.inf if delay > LONGEST_SPAN_S else timedelta(seconds=delay) // _MICROSECOND


def in_order(requests: Iterable[CrawlRequest]) -> list[CrawlRequest]:
    # Requests logged in the same second tie on ts; the source breaks the tie so every run
    # pairs them the same way (their gap is zero either way).
    return sorted(requests, key=lambda request: (request.ts, request.source))


_TS_AND_SOURCE = itemgetter(0, 1)  # `in_order` for a `BatchRequest`


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
    return from_micros(_window_start_micros(micros(moment), size // _MICROSECOND))


def _window_start_micros(moment: int, size: int) -> int:
    return moment // size * size


def window_end(start: datetime, size: timedelta) -> datetime:
    """End of the window starting at `start` (at the latest 9999-12-31T23:59:59.999999)."""
    return shifted(start, size)


def violation_record(key: Key, step: Step) -> dict:
    """A row of `records.CRAWL_DELAY_VIOLATIONS`."""
    request, previous = step.request, step.previous
    assert previous is not None  # only a request with a predecessor can violate
    return _violation_row(
        _key_columns(key), previous.ts, previous.source, request.ts, request.source, step.gap // _MICROSECOND,
        request.shared,
    )


def window_records(key: Key, steps: Sequence[Step], size: timedelta) -> list[dict]:
    """Rows of `records.CRAWL_DELAY_WINDOWS`, one per window holding at least one of `steps`.

    `steps` must be in event-time order and every window they touch complete: a row is final.
    The delay reported is the one in effect for the window's last request.
    """
    # window start -> [requests, violations, smallest gap, last request]
    windows: dict[datetime, list] = {}
    for step in steps:
        window = windows.setdefault(window_start(step.request.ts, size), [0, 0, None, None])
        window[0] += 1
        window[1] += step.violation
        if step.gap is not None and (window[2] is None or step.gap < window[2]):
            window[2] = step.gap
        window[3] = step.request
    columns = _key_columns(key)
    return [
        _window_row(
            columns, start, size, requests, violations, None if gap is None else gap // _MICROSECOND, last.shared
        )
        for start, (requests, violations, gap, last) in windows.items()
    ]


def batch_rows(
    key: Key, requests: Iterable[BatchRequest], shared: Sequence[Shared], size: timedelta
) -> tuple[list[dict], list[dict]]:
    """The violation rows and window rows of all of a key's requests: what `violation_record` and
    `window_records` make of `release(None, requests, None)`, without an object per request."""
    shortest = [shortest_gap_micros(delay) for delay, *_ in shared]
    size_micros = size // _MICROSECOND
    columns = _key_columns(key)
    violations: list[dict] = []
    windows: list[dict] = []
    start = previous_ts = previous_source = last = count = late = smallest = None
    end = -math.inf
    # In time order, a request past the current window's end opens the next window that has one.
    for ts, source, index in sorted(requests, key=_TS_AND_SOURCE):
        if ts >= end:
            if start is not None:
                windows.append(_window_row(columns, from_micros(start), size, count, late, smallest, shared[last]))
            start = _window_start_micros(ts, size_micros)
            end, count, late, smallest = start + size_micros, 0, 0, None
        count += 1
        if previous_ts is not None:
            gap = ts - previous_ts
            if smallest is None or gap < smallest:
                smallest = gap
            if gap < shortest[index]:
                late += 1
                violations.append(
                    _violation_row(
                        columns, from_micros(previous_ts), previous_source, from_micros(ts), source, gap, shared[index]
                    )
                )
        previous_ts, previous_source, last = ts, source, index
    if start is not None:
        windows.append(_window_row(columns, from_micros(start), size, count, late, smallest, shared[last]))
    return violations, windows


def _violation_row(
    columns: dict,
    previous_ts: datetime,
    previous_source: str,
    ts: datetime,
    source: str,
    gap_micros: int,
    shared: Shared,
) -> dict:
    delay, delay_line, version, honours = shared
    return {
        **columns,
        "honours_crawl_delay": honours,
        "prev_ts": previous_ts,
        "ts": ts,
        "gap_s": gap_micros / _MICROS_PER_SECOND,
        "crawl_delay_s": delay,
        "crawl_delay_line": delay_line,
        "robots_version": version,
        "source": source,
        "prev_source": previous_source,
    }


def _window_row(
    columns: dict, start: datetime, size: timedelta, requests: int, violations: int, smallest_gap_micros: int | None,
    last: Shared,
) -> dict:
    delay, delay_line, _, honours = last
    return {
        **columns,
        "window_start": start,
        "window_end": window_end(start, size),
        "requests": requests,
        "violations": violations,
        "min_gap_s": None if smallest_gap_micros is None else smallest_gap_micros / _MICROS_PER_SECOND,
        "crawl_delay_s": delay,
        "crawl_delay_line": delay_line,
        "honours_crawl_delay": honours,
    }


def _key_columns(key: Key) -> dict:
    host, crawler, operator, identity = key
    return {"host": host, "crawler": crawler, "operator": operator, "identity": identity}
