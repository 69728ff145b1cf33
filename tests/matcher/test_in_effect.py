"""The version in effect at a moment (`matcher.in_effect`): the latest that started at or before it,
against a reference that looks at every start."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from matcher.in_effect import index_in_effect
from matcher.timerange import EARLIEST, LATEST


def reference_in_effect(starts: list, at) -> int:
    """The last position whose start is at or before `at`; -1 when every start is later."""
    return max((position for position, start in enumerate(starts) if start <= at), default=-1)


@given(st.lists(st.integers(-5, 5), max_size=8).map(sorted), st.integers(-7, 7))
def test_the_latest_start_at_or_before_the_moment_is_in_effect(starts, at):
    assert index_in_effect(starts, at) == reference_in_effect(starts, at)


moments = st.one_of(
    st.sampled_from([EARLIEST, EARLIEST + timedelta(microseconds=1), LATEST - timedelta(microseconds=1), LATEST]),
    st.datetimes(timezones=st.just(timezone.utc)),
)


@given(st.lists(moments, max_size=6, unique=True).map(sorted), moments)
def test_at_the_ends_of_time_too(starts, at):
    assert index_in_effect(starts, at) == reference_in_effect(starts, at)


def test_a_change_takes_effect_at_its_start_and_never_before():
    starts = [datetime(2026, 11, 1, tzinfo=timezone.utc), datetime(2026, 11, 2, tzinfo=timezone.utc)]
    tick = timedelta(microseconds=1)
    assert index_in_effect(starts, starts[0] - tick) == -1
    assert index_in_effect(starts, starts[0]) == 0
    assert index_in_effect(starts, starts[1] - tick) == 0
    assert index_in_effect(starts, starts[1]) == 1
    assert index_in_effect(starts, LATEST) == 1
    assert index_in_effect([], LATEST) == -1
