"""The span of time the audit handles, and arithmetic that stays inside it.

Timestamps are Python datetimes in UTC, so they run from 0001-01-01 to 9999-12-31. A time that
only leaves that span once its UTC offset is applied (`01/Jan/0001:00:00:00 +0100`) is refused
where it is read, by `to_utc`; sums that would step past either end (a window's end, the start
of a grace period) stop at the end instead of raising.
"""
from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

__all__ = [
    "EARLIEST",
    "EPOCH",
    "LATEST",
    "LONGEST_SPAN_S",
    "NoOffset",
    "OutOfRange",
    "duration_text",
    "from_micros",
    "in_span",
    "is_aware",
    "micros",
    "parse_duration",
    "parse_moment",
    "parse_timestamp",
    "shifted",
    "shifted_day",
    "to_utc",
]

EARLIEST = datetime.min.replace(tzinfo=timezone.utc)
LATEST = datetime.max.replace(tzinfo=timezone.utc)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
EARLIEST_MICROS = (EARLIEST - EPOCH) // _MICROSECOND
LATEST_MICROS = (LATEST - EPOCH) // _MICROSECOND
# The longest span two representable times can be apart, in seconds.
LONGEST_SPAN_S = (LATEST - EARLIEST).total_seconds()


class OutOfRange(ValueError):
    """A time that has no UTC datetime: before 0001-01-01 or after 9999-12-31 in UTC."""


def to_utc(moment: datetime) -> datetime:
    """An aware datetime in UTC, or OutOfRange when its offset moves it past either end."""
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        raise OutOfRange(
            f"{moment.isoformat()} is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999Z in UTC"
        ) from None


def in_span(moment: datetime) -> datetime:
    """`moment` in UTC, or OutOfRange (one line) when it falls outside 1970-01-01..9999-12-31: the
    span a person may name, a capture may carry and a file name may spell (Unix time from its
    start, years of four digits)."""
    try:
        utc = to_utc(moment)
    except OutOfRange:
        utc = None
    if utc is None or utc < EPOCH:
        raise OutOfRange(f"{moment.isoformat()} is outside 1970-01-01..9999-12-31 in UTC")
    return utc


def is_aware(value: object) -> bool:
    """`value` is a datetime that names one moment: it has a UTC offset."""
    return isinstance(value, datetime) and value.utcoffset() is not None


def shifted(moment: datetime, span: timedelta) -> datetime:
    """`moment + span`, stopping at EARLIEST or LATEST."""
    try:
        return moment + span
    except OverflowError:
        return LATEST if span > timedelta(0) else EARLIEST


def shifted_day(day: date, span: timedelta) -> date:
    """`day + span`, stopping at the first or last day a date can be."""
    try:
        return day + span
    except OverflowError:
        return date.max if span > timedelta(0) else date.min


def micros(moment: datetime) -> int:
    """Microseconds since the Unix epoch, exactly."""
    return (moment - EPOCH) // _MICROSECOND


def from_micros(value: int) -> datetime:
    """The UTC datetime of microseconds since the epoch, stopping at EARLIEST or LATEST."""
    return EPOCH + min(max(value, EARLIEST_MICROS), LATEST_MICROS) * _MICROSECOND


class NoOffset(ValueError):
    """An ISO 8601 time without `Z` or a UTC offset, which names no single moment."""


def parse_timestamp(text: str) -> datetime:
    """An ISO 8601 date-time with `Z` or a UTC offset: the form of every table and record.

    ValueError when `text` is not ISO 8601; NoOffset (a ValueError) when it has no offset.
    """
    moment = datetime.fromisoformat(text)
    if moment.utcoffset() is None:
        raise NoOffset(f"no UTC offset: {text!r}")
    return moment


def parse_moment(text: str) -> datetime:
    """An ISO 8601 date or date-time a person typed; without an offset it is UTC."""
    moment = datetime.fromisoformat(text.strip())
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "": 3600}


def parse_duration(text: str) -> timedelta:
    """A span a person typed: `24h`, `90m`, `30d`, `45s`; a bare number is hours. ValueError for
    anything else, and for a span too long to represent."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a duration: {text!r} (try 24h, 90m, 30d)")
    try:
        return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2)])
    except OverflowError:
        raise ValueError(f"duration too long: {text!r}") from None


def duration_text(span: timedelta) -> str:
    """A span as `parse_duration` reads it, in the largest unit it is a whole number of."""
    # Whole microseconds, not float seconds: a float format would round or switch to an exponent,
    # which `parse_duration` does not read.
    count = span // _MICROSECOND
    for unit in ("d", "h", "m"):
        per_unit = _UNIT_SECONDS[unit] * 1_000_000
        if count and count % per_unit == 0:
            return f"{count // per_unit}{unit}"
    seconds, fraction = divmod(count, 1_000_000)
    return f"{seconds}.{fraction:06d}".rstrip("0").rstrip(".") + "s"
