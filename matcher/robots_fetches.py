"""What a crawler held of a host's robots.txt, from its own requests for it, and the judgement
that uses it (docs/semantics.md § The robots.txt the crawler fetched).

The access log holds every crawler's requests for `/robots.txt`: when it came and what status it
got. Those requests form one `FetchHistory` per `FetchKey` (host, fetch family, identity): the
fetch family is the registry's `robots_fetch_family` (operators that document one robots.txt
fetch shared by several crawlers) or the crawler itself, and the identity keeps a spoofed
crawler's fetches apart from the real one's. After each fetch the crawler holds, by RFC 9309
§2.3.1 and the logged status:

- 2xx: the version in effect at the fetch (the host's history says which);
- 304: what it held before, revalidated (with no earlier fetch seen, the version in effect then);
- 3xx otherwise and 4xx but 429: no robots.txt, everything allowed;
- 5xx, 429, or no status: complete disallow; after `error_limit` of errors in a row, what it held
  before the errors (nothing held before them: everything allowed).

`revise` then changes a request's judgement from the history (`HostHistory.judge`, with the fixed
cache grace) by what the crawler held at the request: a request its held copy disallowed is a plain
`disallowed`, whatever the grace; one only a change it had not fetched yet disallowed is
`disallowed-before-refetch` for the cache grace after that change, a plain `disallowed` after it.
With no fetch seen the judgement stands, and says the grace was assumed.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from matcher.history import (
    ALLOWED,
    DISALLOWED,
    DISALLOWED_BEFORE_REFETCH,
    DISALLOWED_WITHIN_GRACE,
    UNKNOWN,
    HostHistory,
    Judgement,
    RobotsVersion,
)
from matcher.timerange import micros

__all__ = [
    "FetchHistory",
    "FetchKey",
    "Held",
    "HeldKind",
    "Revised",
    "RobotsFetch",
    "carried_over",
    "follow",
    "held_kind",
    "held_version",
    "may_revise",
    "revise",
    "still_deciding",
]

# (host, fetch family, identity status): a plain tuple, so Beam can key by it.
FetchKey = tuple[str | None, str, str]

HeldKind = Literal["ok", "unavailable", "error"]

_NOT_MODIFIED = 304


@dataclass(frozen=True, slots=True)
class RobotsFetch:
    """One logged request for /robots.txt: its time, the status it got (None: none logged), the
    log file and line it came from, and the crawler that made it (one of its fetch family)."""

    ts: datetime
    status: int | None
    source: str
    crawler: str | None = None
    # carried over from an earlier run's robots_fetches table (`--prior-run`)
    carried: bool = False


def held_kind(status: int | None) -> HeldKind:
    """What a fetch with this status leaves the crawler with (a 304 aside: see `follow`)."""
    if status is None or status == 429 or status >= 500 or status < 200:
        return "error"
    return "ok" if status < 300 else "unavailable"


@dataclass(frozen=True, slots=True)
class Held:
    """What a crawler held after its latest fetch (`fetch`).

    `served_at` is when what it holds was served: the 2xx (or the 304 that opened a chain with
    no earlier fetch seen) or the 4xx; for an error, None. For an error `error_since` is the
    first fetch of the run of errors and `before_errors` what the crawler held before it."""

    fetch: RobotsFetch
    kind: HeldKind
    served_at: datetime | None
    error_since: datetime | None = None
    before_errors: Held | None = None


def follow(previous: Held | None, fetch: RobotsFetch) -> Held:
    """What the crawler holds after `fetch`, having held `previous` (None: no fetch seen)."""
    if fetch.status == _NOT_MODIFIED:
        kept = previous.before_errors if previous is not None and previous.kind == "error" else previous
        if kept is None:
            return Held(fetch, "ok", fetch.ts)
        return replace(kept, fetch=fetch)
    kind = held_kind(fetch.status)
    if kind != "error":
        return Held(fetch, kind, fetch.ts)
    if previous is not None and previous.kind == "error":
        return replace(previous, fetch=fetch)
    return Held(fetch, "error", None, fetch.ts, previous)


class FetchHistory:
    """One key's robots.txt fetches in time order, and what the crawler held after each.

    Fetches in the same microsecond are taken in the order of their source, so every run that
    reads the same lines holds the same."""

    def __init__(self, fetches: Iterable[RobotsFetch]):
        ordered = sorted(fetches, key=lambda fetch: (fetch.ts, fetch.source))
        self._times = [micros(fetch.ts) for fetch in ordered]
        held: list[Held] = []
        for fetch in ordered:
            held.append(follow(held[-1] if held else None, fetch))
        self._held = tuple(held)

    @property
    def fetches(self) -> tuple[RobotsFetch, ...]:
        return tuple(held.fetch for held in self._held)

    @property
    def held(self) -> tuple[Held, ...]:
        """What the crawler held after each fetch, in time order."""
        return self._held

    def held_at(self, ts: datetime) -> Held | None:
        """What the crawler held at `ts`: after its latest fetch at or before it (None: none)."""
        index = bisect_right(self._times, micros(ts)) - 1
        return None if index < 0 else self._held[index]

    def kept_after(self, cut: datetime) -> tuple[RobotsFetch, ...]:
        """The fetches that still decide what the crawler holds at any time after `cut`: those
        after it, and from the last one at or before it that was served something on."""
        start = _last_served(self._held[: bisect_right(self._times, micros(cut))])
        return tuple(after.fetch for after in self._held[start:])


def carried_over(history: FetchHistory) -> frozenset[RobotsFetch]:
    """The fetches a later run needs to hold what the crawler held after the last of them: from
    the last one that was served something (a 2xx or unavailable) on; all when none was."""
    return frozenset(after.fetch for after in history.held[_last_served(history.held):])


def still_deciding(kept: Sequence[RobotsFetch], fetch: RobotsFetch) -> tuple[RobotsFetch, ...]:
    """The fewest of `kept` and `fetch`, in time order, from which the crawler holds what it held
    after all of them: the fetch that served its copy and its latest fetch, and in a run of errors
    the run's first fetch and the fetch before the run. Folding one key's fetches through it in
    time order keeps at most four, however many there were; `kept` is what the fold kept so far."""
    if (not kept or (fetch.ts, fetch.source) > (kept[-1].ts, kept[-1].source)) and _serves_whatever_came_before(fetch):
        return (fetch,)
    held = FetchHistory((*kept, fetch)).held
    last = len(held) - 1
    wanted = {last}
    before = last
    if held[last].kind == "error":
        first_error = max(i for i in range(last + 1) if held[i].kind == "error" and (i == 0 or held[i - 1].kind != "error"))
        wanted.add(first_error)
        before = first_error - 1
        if before >= 0:
            wanted.add(before)
    served = [i for i in range(before + 1) if _serves(held, i)]
    if served:
        wanted.add(served[-1])
    return tuple(held[i].fetch for i in sorted(wanted))


def _serves(held: Sequence[Held], index: int) -> bool:
    """Whether the fetch at `index` served what the crawler then held (rather than revalidating or
    failing): any 2xx or unavailable, and a 304 with nothing held before it."""
    after = held[index]
    if after.kind == "error":
        return False
    if _serves_whatever_came_before(after.fetch):
        return True
    previous = held[index - 1] if index else None
    return previous is None or (previous.kind == "error" and previous.before_errors is None)


def _serves_whatever_came_before(fetch: RobotsFetch) -> bool:
    """A 2xx (but a 304) or an unavailable status: what the crawler holds after it owes nothing
    to earlier fetches."""
    return fetch.status != _NOT_MODIFIED and held_kind(fetch.status) != "error"


def _last_served(held: Sequence[Held]) -> int:
    """The index of the last fetch that was served something (0 when none was)."""
    start = 0
    for index, after in enumerate(held):
        if after.kind != "error" and after.fetch.status != _NOT_MODIFIED:
            start = index
    return start


@dataclass(frozen=True)
class Revised:
    """A judgement revised by what the crawler held.

    `held` is what it held at the request (None: no fetch seen). `unread_change` is the first
    robots.txt change after what it held was served, when a request its held copy allowed was
    disallowed by the version in effect; `unread_for` is how long that change had been in effect
    at the request. `grace_assumed`: no fetch was seen, so the fixed cache grace was applied."""

    judgement: Judgement
    held: Held | None
    held_version: RobotsVersion | None = None
    unread_change: RobotsVersion | None = None
    unread_for: timedelta | None = None
    grace_assumed: bool = False


def revise(
    history: HostHistory | None,
    judgement: Judgement,
    held: Held | None,
    ts: datetime,
    tokens: Sequence[str],
    path: str,
    catch_all: bool = True,
) -> Revised:
    """`judgement` (the history's, at `ts`) as what the crawler held at `ts` makes it.

    Only a request the version in effect disallows changes, and only when a fetch was seen: a
    change time known only between two captures keeps its `disallowed-between-captures`."""
    version = held_version(history, held)
    if not may_revise(history, judgement.decision):
        return Revised(judgement, held, version)
    bound_by, served_at = _bound_by(history, held, ts, tokens, path, catch_all)
    if bound_by is None or bound_by.decision == UNKNOWN:
        return Revised(judgement, held, version, grace_assumed=judgement.decision == DISALLOWED_WITHIN_GRACE)
    plain = replace(judgement, decision=DISALLOWED, grace_version=None)
    if bound_by.decision != ALLOWED:
        return Revised(plain, held, version)
    change = history.first_change_after(served_at) if served_at is not None else None
    if change is None or change.effective_from > ts:
        # Nothing changed since it was served what allowed it (a 4xx, errors past the limit).
        allowed = replace(judgement, decision=ALLOWED, reason=f"fetched-{bound_by.reason}", grace_version=None)
        return Revised(allowed, held, version)
    unread_for = ts - change.effective_from
    if unread_for <= history.grace:
        before_refetch = replace(judgement, decision=DISALLOWED_BEFORE_REFETCH, grace_version=None)
        return Revised(before_refetch, held, version, change, unread_for)
    return Revised(plain, held, version, change, unread_for)


def may_revise(history: HostHistory | None, decision: str) -> bool:
    """Whether what a crawler held can change a judgement with this decision (`revise`): only one
    the version in effect disallows, on a host with a history. Any other keeps its columns, and
    what was held only fills `robots_fetch`."""
    return history is not None and decision in (DISALLOWED, DISALLOWED_WITHIN_GRACE)


def held_version(history: HostHistory | None, held: Held | None) -> RobotsVersion | None:
    """The history's version a crawler holding `held` was served (None unless a 2xx or 304, or
    without a history)."""
    if history is None or held is None or held.kind != "ok":
        return None
    return history.version_at(held.served_at)


def _bound_by(
    history: HostHistory, held: Held | None, ts: datetime, tokens: Sequence[str], path: str, catch_all: bool
) -> tuple[Judgement | None, datetime | None]:
    """The judgement of the request by what the crawler held, and when that was served."""
    if held is None:
        return None, None
    if held.kind == "error":
        if ts - held.error_since <= history.error_limit:
            reason = "robots-unreachable" if held.fetch.status is None else "robots-server-error"
            return Judgement(DISALLOWED, reason), None
        if held.before_errors is None:
            return Judgement(ALLOWED, "error-over-30-days-allow"), None
        held = held.before_errors
    if held.kind == "unavailable":
        return Judgement(ALLOWED, "robots-unavailable"), held.served_at
    return history.judge_held(held.served_at, ts, tokens, path, catch_all), held.served_at
