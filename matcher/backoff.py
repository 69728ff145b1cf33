"""Did a crawler back off when the server asked it to? One finding per 429 or 503 answered to a
crawler (or to undeclared crawler traffic), judged by that crawler's next request to the host.

With a `Retry-After` the server said how long to wait: the crawler backed off when its next
request came no sooner. Without one, it backed off when the gap to its next request is at least
max(2 x the median of its gaps on the host in the hour before, 10 s): twice its own pace, and
never less than ten seconds. Unknown (None) when there is no next request, or (without
Retry-After) no earlier gap to measure its pace by (docs/semantics.md § Back-off).
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from statistics import median

__all__ = [
    "SLOW_DOWN",
    "PACE_WINDOW",
    "MIN_WAIT_S",
    "Request",
    "Finding",
    "retry_after_seconds",
    "findings",
]

# The answers Google documents as "slow down": too many requests, unavailable.
SLOW_DOWN = frozenset({429, 503})
# The crawler's pace is measured over the hour before the answer.
PACE_WINDOW = timedelta(hours=1)
MIN_WAIT_S = 10.0


@dataclass(frozen=True)
class Request:
    """One request of a crawler to a host, in time order with its others."""

    ts: datetime
    status: int | None
    retry_after: str | None  # the Retry-After header as logged
    source: str


@dataclass(frozen=True)
class Finding:
    at: datetime
    status: int
    retry_after_s: float | None
    next_request_after_s: float | None
    backed_off: bool | None
    source: str


def retry_after_seconds(value: str | None, at: datetime) -> float | None:
    """Seconds a Retry-After asked to wait from `at`: delay-seconds, or an HTTP-date (a date
    already past asks for 0); None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if not text or text == "-":
        return None
    if text.isascii() and text.isdigit():
        return float(int(text)) if len(text) <= 12 else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max((when - at).total_seconds(), 0.0)


def findings(requests: Sequence[Request]) -> list[Finding]:
    """The back-off findings of one crawler's requests to one host, sorted by time."""
    times = [request.ts for request in requests]
    gaps = [(later - earlier).total_seconds() for earlier, later in zip(times, times[1:])]
    found = []
    for index, request in enumerate(requests):
        if request.status not in SLOW_DOWN:
            continue
        wait = retry_after_seconds(request.retry_after, request.ts)
        following = requests[index + 1].ts if index + 1 < len(requests) else None
        next_after = None if following is None else (following - request.ts).total_seconds()
        found.append(Finding(
            request.ts, request.status, wait, next_after, _backed_off(times, gaps, index, wait, next_after),
            request.source,
        ))
    return found


def _backed_off(
    times: Sequence[datetime], gaps: Sequence[float], index: int, wait: float | None, next_after: float | None,
) -> bool | None:
    if next_after is None:
        return None
    if wait is not None:
        return next_after >= wait
    # The gaps whose both ends lie within the hour up to and including the answered request.
    first = bisect_left(times, times[index] - PACE_WINDOW, 0, index + 1)
    earlier = gaps[first:index]
    if not earlier:
        return None
    return next_after >= max(2 * median(earlier), MIN_WAIT_S)
