"""Log timestamps in their written forms (`matcher.logformats.timestamps`): Apache/nginx `%t`, ISO
8601 and Unix time, each to UTC, refused with `bad-timestamp` when malformed or when the offset moves
it past either end of the calendar."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from matcher.logformats import LogParseError, clf_timestamp, epoch_timestamp, iso_timestamp
from matcher.timerange import LATEST

UTC = timezone.utc
# 2026-10-10T13:55:36-07:00
INSTANT = datetime(2026, 10, 10, 20, 55, 36, tzinfo=UTC)
INSTANT_UNIX = 1791665736
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def reason(read, text) -> str:
    with pytest.raises(LogParseError) as caught:
        read(text)
    return caught.value.reason


@pytest.mark.parametrize(("text", "utc"), [
    ("2026-10-10T20:55:36Z", INSTANT),
    ("2026-10-10t20:55:36z", INSTANT),
    ("2026-10-10 20:55:36+00:00", INSTANT),
    ("2026-10-10T13:55:36-07:00", INSTANT),
    ("2026-10-11T02:25:36+0530", INSTANT),
    ("2026-10-10T20:55:36,25Z", INSTANT + timedelta(milliseconds=250)),
    ("2026-10-10T20:55:36.123456789Z", INSTANT + timedelta(microseconds=123456)),
])
def test_iso_time_converts_to_utc(text: str, utc: datetime):
    assert iso_timestamp(text) == utc


@pytest.mark.parametrize("text", [
    "2026-10-10T20:55:36", "2026-10-10", "2026-13-10T20:55:36Z", "2026-10-10T20:55:36+25:00", "10 Oct 2026",
])
def test_bad_iso_time(text: str):
    with pytest.raises(LogParseError) as caught:
        iso_timestamp(text)
    assert caught.value.reason == "bad-timestamp"


def test_unix_time_in_every_unit_is_the_same_instant():
    precise = INSTANT + timedelta(microseconds=123456)
    assert epoch_timestamp(INSTANT_UNIX) == INSTANT
    assert epoch_timestamp(INSTANT_UNIX * 1000 + 123) == INSTANT + timedelta(milliseconds=123)
    assert epoch_timestamp(INSTANT_UNIX * 1_000_000 + 123456) == precise
    assert epoch_timestamp(INSTANT_UNIX * 1_000_000_000 + 123456789) == precise
    assert epoch_timestamp(INSTANT_UNIX + 0.5) == INSTANT + timedelta(milliseconds=500)


def test_clf_time_is_read_to_utc():
    assert clf_timestamp("10/Oct/2026:13:55:36 -0700") == INSTANT
    assert clf_timestamp("10/Oct/2026:13:55:36 -0700").tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    ["10/Oct/2026:13:55:36", "10/oct/2026:13:55:36 -0700", "10/Okt/2026:13:55:36 -0700", "29/Feb/2026:00:00:00 +0000",
     "10/Oct/2026:24:00:00 +0000", "10/Oct/2026:13:55:36 +2400", "[10/Oct/2026:13:55:36 -0700]", "1/Oct/2026:13:55:36 -0700"],
)
def test_a_malformed_clf_time_is_a_bad_timestamp(text):
    assert reason(clf_timestamp, text) == "bad-timestamp"


@pytest.mark.parametrize(
    ("read", "text", "moment"),
    [
        (clf_timestamp, "01/Jan/0001:00:00:00 -0100", datetime(1, 1, 1, 1, tzinfo=UTC)),
        (clf_timestamp, "31/Dec/9999:23:59:59 +0000", LATEST.replace(microsecond=0)),
        (iso_timestamp, "0001-01-01T00:00:00-01:00", datetime(1, 1, 1, 1, tzinfo=UTC)),
        (iso_timestamp, "9999-12-31T23:59:59.999999Z", LATEST),
        (epoch_timestamp, -62135596800, datetime(1, 1, 1, tzinfo=UTC)),  # seconds before 1970 too
    ],
)
def test_the_ends_of_the_calendar_are_read(read, text, moment):
    assert read(text) == moment


@pytest.mark.parametrize(
    ("read", "text"),
    [
        (clf_timestamp, "01/Jan/0001:00:00:00 +0100"),
        (clf_timestamp, "31/Dec/9999:23:59:59 -0100"),
        (iso_timestamp, "0001-01-01T00:30:00+01:00"),
        (iso_timestamp, "9999-12-31T23:30:00-01:00"),
        (epoch_timestamp, 253402300800 * 10**9),  # 10000-01-01 in nanoseconds, the one unit that reaches it
        (epoch_timestamp, float("nan")),
    ],
)
def test_a_time_past_either_end_once_in_utc_is_a_bad_timestamp(read, text):
    assert reason(read, text) == "bad-timestamp"


local_times = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59))
offsets = st.integers(-(23 * 60 + 59), 23 * 60 + 59)


@given(local_times, offsets)
@example(datetime(1, 1, 1), 1)
@example(datetime(9999, 12, 31, 23, 59, 59), -1)
def test_clf_time_agrees_with_datetime_arithmetic(local, offset_minutes):
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    text = (f"{local.day:02d}/{MONTHS[local.month - 1]}/{local.year:04d}:"
            f"{local.hour:02d}:{local.minute:02d}:{local.second:02d} {sign}{hours:02d}{minutes:02d}")
    try:
        expected = local.replace(microsecond=0, tzinfo=timezone(timedelta(minutes=offset_minutes))).astimezone(UTC)
    except OverflowError:
        assert reason(clf_timestamp, text) == "bad-timestamp"
    else:
        assert clf_timestamp(text) == expected
