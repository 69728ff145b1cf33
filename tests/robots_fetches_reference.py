"""A slow, obviously correct reference of the fetch-history rule (docs/semantics.md § The robots.txt
the crawler fetched), and strategies that draw histories, fetches and requests for it.

For each request it scans every earlier robots.txt request of the same crawler, identity and
host from the start, with nothing kept between requests; the versions are scanned one by one."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import strategies as st

from matcher.history import HostHistory, RobotsVersion

T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)
BODIES = (
    b"User-agent: *\nDisallow: /a\n",
    b"User-agent: *\nDisallow: /\n",
    b"User-agent: *\nAllow: /\n",
    b"User-agent: googlebot\nDisallow: /b\n",
)
PATHS = ("/a", "/a/x", "/b", "/c", "/robots.txt")
FETCH_STATUSES = (200, 200, 304, 304, 404, 301, 503, 429, None)


def _latest_at(fetches, ts):
    """The index of the latest fetch at or before ts, in (ts, source) order; -1 for none."""
    ordered = sorted(fetches, key=lambda fetch: (fetch.ts, fetch.source))
    latest = -1
    for index, fetch in enumerate(ordered):
        if fetch.ts <= ts:
            latest = index
    return ordered, latest


def _is_error(status):
    return status is None or status == 429 or status >= 500 or status < 200


def reference_held(fetches, ts):
    """What the crawler held at ts, as (kind, served_at, error_since, fallback), from a scan."""
    ordered, latest = _latest_at(fetches, ts)
    if latest < 0:
        return None
    return _held_after(ordered, latest)


def _held_after(ordered, index):
    fetch = ordered[index]
    if fetch.status == 304:
        # revalidates the last non-error holding before it, skipping a run of errors
        before = index - 1
        while before >= 0 and ordered[before].status != 304 and _is_error(ordered[before].status):
            before -= 1
        if before < 0:
            return ("ok", fetch.ts, None, None)
        return _held_after(ordered, before)
    if not _is_error(fetch.status):
        return ("ok" if fetch.status < 300 else "unavailable", fetch.ts, None, None)
    start = index
    while start > 0 and ordered[start - 1].status != 304 and _is_error(ordered[start - 1].status):
        start -= 1
    fallback = _held_after(ordered, start - 1) if start > 0 else None
    return ("error", None, ordered[start].ts, fallback)


def reference_decision(versions, grace, error_limit, fetches, ts, tokens, path, catch_all=True):
    """(decision, unread_for) of one request."""
    history = HostHistory(versions, grace=grace, error_limit=error_limit)
    judged = history.judge(ts, tokens, path, catch_all)
    if judged.decision not in ("disallowed", "disallowed-within-grace"):
        return judged.decision, None
    held = reference_held(fetches, ts)
    if held is None:
        return judged.decision, None
    kind, served_at, error_since, fallback = held
    if kind == "error":
        if ts - error_since <= error_limit:
            return "disallowed", None
        if fallback is None:
            return "allowed", None
        kind, served_at, _, _ = fallback
    if kind == "unavailable":
        allowed = True
    else:
        by_held = history.judge_held(served_at, ts, tokens, path, catch_all).decision
        if by_held == "unknown":
            return judged.decision, None
        allowed = by_held == "allowed"
    if not allowed:
        return "disallowed", None
    later = [v.effective_from for v in history.versions if v.effective_from > served_at]
    if not later or min(later) > ts:
        return "allowed", None
    unread_for = ts - min(later)
    return ("disallowed-before-refetch" if unread_for <= grace else "disallowed"), unread_for


@st.composite
def histories(draw):
    """One host's versions, hours apart, none between captures."""
    count = draw(st.integers(1, 4))
    offsets = sorted(set(draw(st.lists(st.integers(0, 96), min_size=count, max_size=count))))
    versions = []
    for hours in offsets:
        status = draw(st.sampled_from((200, 200, 200, 404, 503)))
        body = draw(st.sampled_from(BODIES)) if status == 200 else None
        versions.append(RobotsVersion("example.com", T0 + timedelta(hours=hours), status, body))
    return versions


def moments(hours=120):
    return st.integers(0, hours * 60).map(lambda minutes: T0 + timedelta(minutes=minutes))
