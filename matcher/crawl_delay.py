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

A request is a `CrawlRequest`, a tuple of primitives (`request_of` makes one of a verdict), so
that a key's requests can be held, encoded and grouped by the hundred thousand without an object
each. Nothing here knows about Beam: a streaming run releases a key's requests window by window as
the watermark advances (`release`), a batch run all at once, and both make the rows of what they
released with `rows`, the one place the rule is applied.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from operator import itemgetter

# EPOCH, micros and from_micros stay importable from here: the streaming release and its tests use them.
from matcher import backoff
from matcher.timerange import EPOCH, LONGEST_SPAN_S, from_micros, micros, shifted

__all__ = [
    "KEY_READS",
    "SHARED_READS",
    "EPOCH",
    "CrawlRequest",
    "Key",
    "Release",
    "Shared",
    "asked_to_slow_down",
    "backoff_requests",
    "from_micros",
    "in_order",
    "key_of",
    "micros",
    "release",
    "request_of",
    "shared_of",
    "rows",
    "shortest_gap_micros",
    "violates",
    "window_end",
    "window_start",
]

_MICROSECOND = timedelta(microseconds=1)
# A gap in micros over this is exactly `timedelta.total_seconds()`: both divide integers.
_MICROS_PER_SECOND = 1_000_000


# (host, crawler, operator, identity): a plain tuple, so Beam can key state by it.
Key = tuple[str | None, str | None, str | None, str]

# What a request has besides its time and source, and many requests share: (crawl_delay,
# crawl_delay_line, robots_version as (effective_from in microseconds since the epoch, status,
# sha256) or None, honours_crawl_delay, its back-off `Answer`). The back-off audit reads the
# same requests, so a batch run groups them once for both.
Shared = tuple[float | None, int | None, tuple[int, str, str | None] | None, bool | None, backoff.Answer]

# One request: (ts in microseconds since the epoch, source, its `Shared`).
CrawlRequest = tuple[int, str, Shared]


@dataclass(frozen=True)
class Release:
    """The requests released before a cut, in order, after `previous` (the last request released
    before them, None for none); the rest held back."""

    previous: CrawlRequest | None
    released: tuple[CrawlRequest, ...]
    held: tuple[CrawlRequest, ...]

    @property
    def last(self) -> CrawlRequest | None:
        """The request the next release chains to."""
        return self.released[-1] if self.released else self.previous


# The verdict columns `key_of` reads, and those `shared_of` reads; `request_of` reads both and
# the request's time and source.
KEY_READS = ("host", "crawler", "operator", "identity")
SHARED_READS = (
    "client_kind", "status", "retry_after", "crawl_delay", "crawl_delay_line", "robots_version", "honours_crawl_delay",
)


def key_of(verdict: Mapping) -> Key:
    return (verdict["host"], verdict["crawler"], verdict["operator"], verdict["identity"])


def request_of(verdict: Mapping) -> CrawlRequest:
    """What the crawl-delay audit keeps of one verdict."""
    return micros(verdict["ts"]), verdict["source"], shared_of(verdict)


def shared_of(verdict: Mapping) -> Shared:
    """What the crawl-delay audit keeps of one verdict besides its time and source: the part many
    requests share."""
    version = verdict["robots_version"]
    if version is not None:
        version = (micros(version["effective_from"]), version["status"], version["sha256"])
    answer = backoff.answer_of(verdict["client_kind"], verdict["status"], verdict["retry_after"])
    return verdict["crawl_delay"], verdict["crawl_delay_line"], version, verdict["honours_crawl_delay"], answer


def backoff_requests(ordered: Iterable[CrawlRequest]) -> list[backoff.Request]:
    """The requests among `ordered` the back-off audit counts, in the same order."""
    requests = []
    for ts, source, shared in ordered:
        answer = shared[4]
        if answer is not None:
            status, retry_after = answer or (None, None)
            requests.append(backoff.Request(from_micros(ts), status, retry_after, source))
    return requests


def asked_to_slow_down(requests: Iterable[CrawlRequest]) -> bool:
    """Whether the server answered any of `requests` with a back-off finding's 429 or 503."""
    return any(shared[4] for _, _, shared in requests)


def violates(gap_micros: int | None, delay: float | None) -> bool:
    """A gap shorter than the Crawl-delay in effect; no gap or no delay is never a violation."""
    return gap_micros is not None and gap_micros < shortest_gap_micros(delay)


# A run meets a handful of distinct delays, and `rows` asks for one per request.
@lru_cache(maxsize=1024)
def shortest_gap_micros(delay: float | None) -> int | float:
    """The shortest gap in microseconds that keeps to a Crawl-delay (`timedelta` rounds the delay);
    minus infinity without a delay, so that no gap is shorter."""
    if delay is None:
        return -math.inf
    # A delay longer than any two times can be apart has no timedelta; every gap is shorter.
    return math.inf if delay > LONGEST_SPAN_S else timedelta(seconds=delay) // _MICROSECOND


# Requests logged in the same microsecond tie on ts; the source breaks the tie so every run
# pairs them the same way (their gap is zero either way).
_TS_AND_SOURCE = itemgetter(0, 1)
_TS = itemgetter(0)


def in_order(requests: Iterable[CrawlRequest]) -> list[CrawlRequest]:
    return sorted(requests, key=_TS_AND_SOURCE)


def release(previous: CrawlRequest | None, pending: Iterable[CrawlRequest], cut: int | None) -> Release:
    """Release the pending requests earlier than `cut` (microseconds since the epoch; all of them
    when None), in order; `previous` is the last request released before."""
    ordered = in_order(pending)
    ready = len(ordered) if cut is None else bisect_left(ordered, cut, key=_TS)
    return Release(previous, tuple(ordered[:ready]), tuple(ordered[ready:]))


def window_start(moment: datetime, size: timedelta) -> datetime:
    """Start of the epoch-aligned window of `size` holding `moment` (at the earliest 0001-01-01)."""
    return from_micros(_window_start_micros(micros(moment), size // _MICROSECOND))


def _window_start_micros(moment: int, size: int) -> int:
    return moment // size * size


def window_end(start: datetime, size: timedelta) -> datetime:
    """End of the window starting at `start` (at the latest 9999-12-31T23:59:59.999999)."""
    return shifted(start, size)


def rows(
    key: Key, previous: CrawlRequest | None, ordered: Iterable[CrawlRequest], size: timedelta
) -> tuple[list[dict], list[dict]]:
    """The rows of `records.CRAWL_DELAY_VIOLATIONS` and of `records.CRAWL_DELAY_WINDOWS` of a key's
    requests in event-time order, the first chained to `previous` (None for the key's first).

    Every window the requests touch must be complete: a window row is final. The delay a window
    row reports is the one in effect for the window's last request.
    """
    size_micros = size // _MICROSECOND
    columns = _key_columns(key)
    violations: list[dict] = []
    windows: list[dict] = []
    start = last = count = late = smallest = None
    previous_ts, previous_source = (None, None) if previous is None else previous[:2]
    end = -math.inf
    # In time order, a request past the current window's end opens the next window that has one.
    for ts, source, shared in ordered:
        if ts >= end:
            if start is not None:
                windows.append(_window_row(columns, start, size, count, late, smallest, last))
            start = _window_start_micros(ts, size_micros)
            end, count, late, smallest = start + size_micros, 0, 0, None
        count += 1
        if previous_ts is not None:
            gap = ts - previous_ts
            if smallest is None or gap < smallest:
                smallest = gap
            if violates(gap, shared[0]):
                late += 1
                violations.append(_violation_row(columns, previous_ts, previous_source, ts, source, gap, shared))
        previous_ts, previous_source, last = ts, source, shared
    if start is not None:
        windows.append(_window_row(columns, start, size, count, late, smallest, last))
    return violations, windows


def _violation_row(
    columns: dict, previous_ts: int, previous_source: str, ts: int, source: str, gap_micros: int, shared: Shared
) -> dict:
    delay, delay_line, version, honours, _ = shared
    if version is not None:
        effective_from, status, sha256 = version
        version = {"effective_from": from_micros(effective_from), "status": status, "sha256": sha256}
    return {
        **columns,
        "honours_crawl_delay": honours,
        "prev_ts": from_micros(previous_ts),
        "ts": from_micros(ts),
        "gap_s": gap_micros / _MICROS_PER_SECOND,
        "crawl_delay_s": delay,
        "crawl_delay_line": delay_line,
        "robots_version": version,
        "source": source,
        "prev_source": previous_source,
    }


def _window_row(
    columns: dict, start_micros: int, size: timedelta, requests: int, violations: int,
    smallest_gap_micros: int | None, last: Shared,
) -> dict:
    delay, delay_line, _, honours, _ = last
    start = from_micros(start_micros)
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
