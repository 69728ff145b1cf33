"""Which of two values of one directive restricts more (`matcher.directives.strictness`): the value
that wins a conflict, against the order search engines document."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matcher.directives.strictness import stricter

UTC = timezone.utc


def reference_rank(name: str, value) -> object:
    """Smaller restricts more: any count beats no limit (-1), a smaller preview a larger one, an
    earlier date a later one."""
    if name in ("max-snippet", "max-video-preview"):
        return float("inf") if value == -1 else value
    if name == "max-image-preview":
        return ["none", "standard", "large"].index(value)
    return value


@pytest.mark.parametrize(
    ("name", "first", "second", "stricter_one"),
    [
        ("max-snippet", 50, 20, 20),
        ("max-snippet", -1, 300, 300),  # -1 is no limit
        ("max-snippet", 0, -1, 0),
        ("max-video-preview", -1, -1, -1),
        ("max-image-preview", "large", "standard", "standard"),
        ("max-image-preview", "none", "standard", "none"),
        ("unavailable_after", datetime(2027, 1, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC),
         datetime(2026, 12, 1, tzinfo=UTC)),
    ],
)
def test_the_more_restrictive_value_wins(name, first, second, stricter_one):
    assert stricter(name, first, second) == stricter_one
    assert stricter(name, second, first) == stricter_one


def test_on_a_tie_the_first_value_is_kept():
    at_ten = datetime(2026, 12, 1, 10, tzinfo=UTC)
    same_moment = datetime(2026, 12, 1, 11, tzinfo=timezone(timedelta(hours=1)))
    assert stricter("unavailable_after", at_ten, same_moment) is at_ten
    assert stricter("unavailable_after", same_moment, at_ten) is same_moment


counts = st.one_of(st.just(-1), st.integers(0, 2**63 - 1))
values = {
    "max-snippet": counts,
    "max-video-preview": counts,
    "max-image-preview": st.sampled_from(["none", "standard", "large"]),
    "unavailable_after": st.datetimes(timezones=st.just(UTC)),
}


@given(st.sampled_from(sorted(values)).flatmap(lambda name: st.tuples(st.just(name), values[name], values[name])))
def test_the_winner_is_one_of_the_two_and_restricts_at_least_as_much(drawn):
    name, first, second = drawn
    winner = stricter(name, first, second)
    assert winner in (first, second)
    assert reference_rank(name, winner) == min(reference_rank(name, first), reference_rank(name, second))
