"""The span of time the audit handles (`matcher.timerange`): reading ISO 8601 times, moving them to
UTC, and sums that stop at the ends of time, against integer arithmetic on microseconds; the spans
a person types, and the text a span is written back as."""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone, tzinfo

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from matcher.timerange import (
    EARLIEST,
    EPOCH,
    LATEST,
    LONGEST_SPAN_S,
    NoOffset,
    OutOfRange,
    duration_text,
    from_micros,
    is_aware,
    micros,
    parse_duration,
    parse_moment,
    parse_timestamp,
    shifted,
    to_utc,
)

UTC = timezone.utc
TICK = timedelta(microseconds=1)
PLUS_ONE, MINUS_ONE = timezone(timedelta(hours=1)), timezone(timedelta(hours=-1))
# Microseconds of the two ends, counted by hand: 0001-01-01 is day 1 of the proleptic calendar,
# 1970-01-01 day 719163, and 9999-12-31 ends day 3652059.
DAY_US = 86_400 * 10**6
EARLIEST_US = (1 - 719_163) * DAY_US
LATEST_US = (3_652_059 - 719_163 + 1) * DAY_US - 1


def test_the_ends_are_the_first_and_last_microseconds_a_utc_datetime_holds():
    assert (micros(EARLIEST), micros(LATEST)) == (EARLIEST_US, LATEST_US)
    assert LONGEST_SPAN_S == (LATEST_US - EARLIEST_US) / 10**6
    assert micros(EPOCH) == 0


# ------------------------------------------------------------------ to_utc and is_aware


def test_to_utc_keeps_the_moment_and_writes_it_in_utc():
    local = datetime(2026, 11, 2, 10, 30, tzinfo=PLUS_ONE)
    assert to_utc(local) == local and to_utc(local).tzinfo is UTC
    assert to_utc(local).hour == 9


@pytest.mark.parametrize(
    "moment",
    [datetime(1, 1, 1, 0, 30, tzinfo=PLUS_ONE), datetime(9999, 12, 31, 23, 30, tzinfo=MINUS_ONE)],
)
def test_a_time_whose_offset_moves_it_past_either_end_is_out_of_range(moment):
    with pytest.raises(OutOfRange, match="outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999Z in UTC"):
        to_utc(moment)
    assert issubclass(OutOfRange, ValueError)


def test_the_ends_themselves_are_in_range_with_the_offset_that_keeps_them_there():
    assert to_utc(datetime(1, 1, 1, 1, 0, tzinfo=PLUS_ONE)) == EARLIEST
    assert to_utc(datetime(9999, 12, 31, 22, 59, 59, 999_999, tzinfo=MINUS_ONE)) == LATEST


@pytest.mark.parametrize(
    ("value", "aware"),
    [
        (datetime(2026, 11, 2, tzinfo=UTC), True),
        (datetime(2026, 11, 2, tzinfo=MINUS_ONE), True),
        (datetime(2026, 11, 2), False),
        (date(2026, 11, 2), False),
        ("2026-11-02T00:00:00Z", False),
        (None, False),
    ],
)
def test_is_aware_only_for_a_datetime_with_an_offset(value, aware):
    assert is_aware(value) is aware


def test_a_zone_that_gives_no_offset_is_not_aware():
    class NoOffsetZone(tzinfo):  # a zone whose utcoffset is None names no moment
        def utcoffset(self, moment):
            return None

    assert not is_aware(datetime(2026, 11, 2, tzinfo=NoOffsetZone()))


# ------------------------------------------------------------------ arithmetic at the ends

utc_moments = st.one_of(
    st.datetimes(timezones=st.just(UTC)),
    st.sampled_from([EARLIEST, EARLIEST + TICK, EPOCH, LATEST - TICK, LATEST]),
)
spans = st.one_of(
    st.timedeltas(),
    st.sampled_from([timedelta(0), TICK, -TICK, timedelta.max, timedelta.min, LATEST - EARLIEST, EARLIEST - LATEST]),
)


def clamped(value_us: int) -> int:
    return min(max(value_us, EARLIEST_US), LATEST_US)


@given(utc_moments, spans)
@example(LATEST, TICK)
@example(EARLIEST, -TICK)
def test_shifted_is_the_sum_stopped_at_either_end(moment, span):
    expected = clamped(micros(moment) + span // TICK)
    result = shifted(moment, span)
    assert micros(result) == expected
    assert result.tzinfo is UTC


@given(st.integers(EARLIEST_US - 10**20, LATEST_US + 10**20))
@example(EARLIEST_US - 1)
@example(LATEST_US + 1)
def test_from_micros_inverts_micros_inside_the_span_and_stops_at_its_ends(value):
    moment = from_micros(value)
    assert moment.tzinfo is UTC
    assert micros(moment) == clamped(value)


@given(st.datetimes(timezones=st.sampled_from([UTC, PLUS_ONE, MINUS_ONE])))
def test_micros_counts_exactly_whatever_the_offset(moment):
    try:
        utc = to_utc(moment)
    except OutOfRange:
        return
    assert micros(moment) == micros(utc)
    assert from_micros(micros(moment)) == utc


# ------------------------------------------------------------------ reading times


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-11-02T10:00:00Z", datetime(2026, 11, 2, 10, tzinfo=UTC)),
        ("2026-11-02T11:00:00+01:00", datetime(2026, 11, 2, 10, tzinfo=UTC)),
        ("2026-11-02T10:00:00.250000-00:30", datetime(2026, 11, 2, 10, 30, 0, 250_000, tzinfo=UTC)),
        ("2026-11-02 10:00:00Z", datetime(2026, 11, 2, 10, tzinfo=UTC)),
    ],
)
def test_parse_timestamp_reads_an_iso_time_with_its_offset(text, moment):
    parsed = parse_timestamp(text)
    assert parsed == moment and parsed.utcoffset() is not None


@pytest.mark.parametrize("text", ["2026-11-02T10:00:00", "2026-11-02"])
def test_a_table_time_without_an_offset_is_refused_as_naming_no_moment(text):
    with pytest.raises(NoOffset, match="no UTC offset"):
        parse_timestamp(text)


@pytest.mark.parametrize("text", ["yesterday", "", "2026-13-01T00:00:00Z", "02/Nov/2026:10:00:00 +0000"])
def test_text_that_is_no_iso_time_is_a_plain_value_error(text):
    with pytest.raises(ValueError) as caught:
        parse_timestamp(text)
    assert not isinstance(caught.value, NoOffset)


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-11-02", datetime(2026, 11, 2, tzinfo=UTC)),  # a date is its midnight, UTC
        (" 2026-11-02T10:00 ", datetime(2026, 11, 2, 10, tzinfo=UTC)),  # typed: blanks around it
        ("2026-11-02T10:00:00+05:00", datetime(2026, 11, 2, 5, tzinfo=UTC)),  # an offset is kept
        ("2026-11-02T10:00:00Z", datetime(2026, 11, 2, 10, tzinfo=UTC)),
    ],
)
def test_parse_moment_reads_what_a_person_types_and_takes_utc_without_an_offset(text, moment):
    parsed = parse_moment(text)
    assert parsed == moment and is_aware(parsed)


def test_parse_moment_keeps_the_offset_it_was_given():
    assert parse_moment("2026-11-02T10:00:00+05:00").utcoffset() == timedelta(hours=5)
    with pytest.raises(ValueError):
        parse_moment("next tuesday")


# ------------------------------------------------------------------ durations


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("24h", timedelta(hours=24)),
        (" 90m ", timedelta(minutes=90)),
        ("30d", timedelta(days=30)),
        ("45s", timedelta(seconds=45)),
        ("1.5h", timedelta(minutes=90)),
        ("0.000001s", TICK),
        ("2", timedelta(hours=2)),  # a bare number is hours
        ("0", timedelta(0)),
    ],
)
def test_parse_duration_reads_a_number_and_a_unit(text, span):
    assert parse_duration(text) == span


@pytest.mark.parametrize("text", ["", "h", "-1h", "1w", "1 h", "1e3s", "1,5h", "1.h", "24H"])
def test_what_is_no_duration_is_refused_with_examples_of_one(text):
    with pytest.raises(ValueError, match=r"not a duration: .* \(try 24h, 90m, 30d\)"):
        parse_duration(text)


def test_a_duration_too_long_to_hold_is_refused():
    with pytest.raises(ValueError, match="duration too long: '99999999999d'"):
        parse_duration("99999999999d")


@pytest.mark.parametrize(
    ("span", "text"),
    [
        (timedelta(hours=24), "1d"),  # the largest unit it is a whole number of
        (timedelta(minutes=90), "90m"),
        (timedelta(hours=36), "36h"),
        (timedelta(seconds=45), "45s"),
        (timedelta(seconds=90.5), "90.5s"),
        (timedelta(0), "0s"),
        (timedelta(seconds=1234567), "1234567s"),  # every digit, however many
        (timedelta(hours=1000001), "1000001h"),
        (TICK, "0.000001s"),
    ],
)
def test_duration_text_writes_a_span_in_its_largest_whole_unit(span, text):
    assert duration_text(span) == text


@given(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=10_000)))
@example(timedelta(seconds=1234567))
@example(timedelta(days=1234567))
@example(TICK)
def test_a_span_written_as_text_reads_back_as_the_same_span(span):
    assert parse_duration(duration_text(span)) == span
