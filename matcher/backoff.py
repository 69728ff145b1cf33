"""Did a crawler back off when the server asked it to? One finding per 429 or 503 answered to a
crawler (or to undeclared crawler traffic), judged by that crawler's next request to the host.

With a `Retry-After` the server said how long to wait: the crawler backed off when its next
request came no sooner. Without one, it backed off when the gap to its next request is at least
max(2 x the median of its gaps on the host in the hour before, 10 s): twice its own pace, and
never less than ten seconds. Unknown (None) when there is no next request, or (without
Retry-After) no earlier gap to measure its pace by (docs/semantics.md § Back-off).

The requests are those the crawl-delay audit already gathers per crawler and host: each keeps its
`Answer`, so back-off needs no grouping of its own. A batch run judges a sequence whole
(`findings`); a stream judges it release by release (`judge_release`), carrying the last request
and the hour before it, and gets the same findings.
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
    "Answer",
    "Request",
    "Finding",
    "Carried",
    "answer_of",
    "retry_after_seconds",
    "findings",
    "judge_release",
    "rows",
]

# The answers Google documents as "slow down": too many requests, unavailable.
SLOW_DOWN = frozenset({429, 503})
# The crawler's pace is measured over the hour before the answer.
PACE_WINDOW = timedelta(hours=1)
MIN_WAIT_S = 10.0
_CRAWLER = "crawler"

# What back-off keeps of a request besides its time and source: None when it does not count (an
# automated client or a signed agent); (status, Retry-After as logged) for a 429 or 503; () for
# any other answer. Only an answer that asked to slow down is truthy, so a crawler never asked is
# passed over at a glance.
Answer = tuple[int, str | None] | tuple[()] | None


def answer_of(client_kind: str, status: int | None, retry_after: str | None) -> Answer:
    """The `Answer` of a request: claimed crawlers and undeclared crawler traffic count."""
    if client_kind != _CRAWLER:
        return None
    return (status, retry_after) if status in SLOW_DOWN else ()


@dataclass(frozen=True)
class Request:
    """One request of a crawler to a host, in time order with its others."""

    ts: datetime
    status: int | None  # 429 or 503; any other status may be None
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


def findings(requests: Sequence[Request], before: Sequence[datetime] = (), final: bool = True) -> list[Finding]:
    """The back-off findings of one crawler's requests to one host, in time order.

    `before`: the times of its requests before the first of `requests` (those of the hour before
    it suffice). Unless `final`, a later request may still come, so the last request's finding
    is left out: it is judged with the next."""
    times = [*before, *(request.ts for request in requests)]
    gaps = [(later - earlier).total_seconds() for earlier, later in zip(times, times[1:])]
    offset = len(before)
    found = []
    for index, request in enumerate(requests):
        if request.status not in SLOW_DOWN:
            continue
        following = requests[index + 1].ts if index + 1 < len(requests) else None
        if following is None and not final:
            break
        wait = retry_after_seconds(request.retry_after, request.ts)
        next_after = None if following is None else (following - request.ts).total_seconds()
        found.append(Finding(
            request.ts, request.status, wait, next_after,
            _backed_off(times, gaps, offset + index, wait, next_after), request.source,
        ))
    return found


@dataclass(frozen=True)
class Carried:
    """What a stream keeps of a crawler's requests to a host between releases: the last request
    released, not judged yet, and the times of those in the hour before it."""

    last: Request | None = None
    before: tuple[datetime, ...] = ()


def judge_release(carried: Carried, released: Sequence[Request], final: bool) -> tuple[list[Finding], Carried]:
    """The findings a release of `released` (in time order, after `carried.last`) settles, and
    what to carry to the next; `final` when no request can follow (the end of the stream)."""
    requests = released if carried.last is None else [carried.last, *released]
    if not requests:
        return [], carried
    found = findings(requests, carried.before, final) if any(r.status in SLOW_DOWN for r in requests) else []
    last = requests[-1]
    times = [*carried.before, *(request.ts for request in requests[:-1])]
    first = bisect_left(times, last.ts - PACE_WINDOW)
    return found, Carried(last, tuple(times[first:]))


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


def rows(key: tuple[str | None, str | None, str | None, str], found: Sequence[Finding]) -> list[dict]:
    """The `records.BACKOFF` rows of a crawler's findings on a host; `key` is (host, crawler,
    operator, identity)."""
    host, crawler, operator, identity = key
    return [
        {
            "host": host, "crawler": crawler, "operator": operator, "identity": identity,
            "at": finding.at, "status": finding.status, "retry_after_s": finding.retry_after_s,
            "next_request_after_s": finding.next_request_after_s, "backed_off": finding.backed_off,
            "source": finding.source,
        }
        for finding in found
    ]
