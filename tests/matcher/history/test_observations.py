"""When a change happened, as far as a capture job's fetches tell (`matcher.history.observations`):
each version's `observed_before`, by example and against a reference that scans every fetch."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from matcher.history import RobotsVersion, with_observations

HOST = "example.com"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)

ALLOW_ALL = "User-agent: *\nDisallow:\n"
BLOCK_PRIVATE = "User-agent: *\nDisallow: /private\n"


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def ok(when: datetime, body: str) -> RobotsVersion:
    return RobotsVersion(HOST, when, 200, body.encode())


def failed(when: datetime, status: int | None) -> RobotsVersion:
    return RobotsVersion(HOST, when, status)


def hours(n: int) -> datetime:
    return T0 + timedelta(hours=n)


def test_observation_times_give_each_version_the_last_fetch_before_it() -> None:
    first, second, third = ok(day(0), ALLOW_ALL), ok(day(2), BLOCK_PRIVATE), failed(day(5), 503)
    fetches = [day(0), day(0.5), day(1.5), day(2), day(3), day(4.9), day(5)]
    result = with_observations([third, first, second], fetches)
    assert [v.observed_before for v in result] == [None, day(1.5), day(4.9)]
    # A fetch log that never saw the previous content again falls back to its own capture.
    assert with_observations([first, second], [day(2)])[1].observed_before == day(0)


def test_without_fetches_between_captures_each_change_is_known_from_the_previous_capture_on() -> None:
    versions = [ok(day(0), ALLOW_ALL), failed(day(1), 503), ok(day(3), BLOCK_PRIVATE)]
    assert [v.observed_before for v in with_observations(versions, [])] == [None, day(0), day(1)]
    assert with_observations([], [day(1)]) == []


@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=5, unique=True),
    st.lists(st.integers(-5, 45), max_size=12),
)
def test_observed_before_is_the_last_fetch_before_the_change_and_never_before_the_previous_capture(starts, fetches):
    versions = [failed(hours(start), 404) for start in starts]
    result = with_observations(versions, map(hours, fetches))
    ordered = sorted(starts)
    assert [v.effective_from for v in result] == [hours(start) for start in ordered]
    assert result[0].observed_before is None
    for previous, start, version in zip(ordered, ordered[1:], result[1:]):
        before = [fetch for fetch in fetches if fetch < start]
        assert version.observed_before == hours(max([previous, *before]))
