"""The date forms of `unavailable_after` (`matcher.directives.dates`): each read as a UTC moment,
with whether a zone was given, and the pieces after a comma that can only continue a date."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from matcher.directives.dates import continues_date, parse_date

UTC = timezone.utc


@pytest.mark.parametrize(
    ("text", "moment", "zoned"),
    [
        ("2026-12-01", datetime(2026, 12, 1, tzinfo=UTC), True),  # a date alone needs no zone
        ("2026-12-01T10:00", datetime(2026, 12, 1, 10, tzinfo=UTC), False),
        ("2026-12-01T10:00:00Z", datetime(2026, 12, 1, 10, tzinfo=UTC), True),
        ("2026-12-01 10:00:00 UTC", datetime(2026, 12, 1, 10, tzinfo=UTC), True),
        ("2026-12-01T10:00:00 gmt", datetime(2026, 12, 1, 10, tzinfo=UTC), True),
        ("2026-12-01T10:00:00+0530", datetime(2026, 12, 1, 4, 30, tzinfo=UTC), True),
        ("2026-12-01T10:00:00-05:00", datetime(2026, 12, 1, 15, tzinfo=UTC), True),
        ("2026-12-01T10:00:00,5Z", datetime(2026, 12, 1, 10, 0, 0, 500_000, tzinfo=UTC), True),
        ("2026-12-01T10:00:00.123456789Z", datetime(2026, 12, 1, 10, 0, 0, 123_456, tzinfo=UTC), True),
        ("  2026-12-01  ", datetime(2026, 12, 1, tzinfo=UTC), True),
        ("Sun Jun 25 15:00:00 2017", datetime(2017, 6, 25, 15, tzinfo=UTC), False),  # asctime
        ("25 Jun 2010 15:00:00 PST", datetime(2010, 6, 25, 23, tzinfo=UTC), True),
        ("Fri, 25 Jun 2010 15:00 +0200", datetime(2010, 6, 25, 13, tzinfo=UTC), True),
        ("Sunday, 25-Jun-17 15:00:00 GMT", datetime(2017, 6, 25, 15, tzinfo=UTC), True),
        ("June 25, 2010 12:30 AM", datetime(2010, 6, 25, 0, 30, tzinfo=UTC), False),
        ("June 25, 2010 12:30 pm EDT", datetime(2010, 6, 25, 16, 30, tzinfo=UTC), True),
        ("Sept. 5 2010", datetime(2010, 9, 5, tzinfo=UTC), True),
        ("1-Jan-69", datetime(2069, 1, 1, tzinfo=UTC), True),  # two-digit years pivot at 69/70
        ("1-Jan-70", datetime(1970, 1, 1, tzinfo=UTC), True),
    ],
)
def test_each_form_is_read_as_a_utc_moment(text, moment, zoned):
    parsed, was_zoned = parse_date(text)
    assert (parsed, was_zoned) == (moment, zoned)
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "", "tomorrow", "2026-12-32", "31 Feb 2010", "25 Jun", "Jun 2010",
        "13:00 PM 25 Jun 2010",  # am/pm with an hour past 12
        "PM 25 Jun 2010",  # am/pm without a clock
        "25 Jun 2010 2011",  # two years
        "25 Jun 2010 GMT PST",  # two zones
        "25 Jun 2010 10:00 11:00",  # two clocks
        "9999-12-31T23:00:00-05:00",  # past the end of the calendar once in UTC
    ],
)
def test_what_is_no_date_of_these_forms_is_none(text):
    assert parse_date(text) is None


@pytest.mark.parametrize(
    ("piece", "continues"),
    [
        ("25-Jun-17 15:00:00 GMT", True),
        (" Jun 25", True),
        ("Sunday", True),
        ("sept 9", True),
        ("2010 15:00", True),
        ("noindex", False),
        ("max-snippet: 5", False),
        ("googlebot: noindex", False),
        ("", False),
        ("  ", False),
    ],
)
def test_a_piece_continues_a_date_only_when_it_starts_like_the_rest_of_one(piece, continues):
    assert continues_date(piece) is continues
