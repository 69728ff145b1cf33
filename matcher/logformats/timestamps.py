"""Log timestamps in their written forms -> UTC datetimes: Apache/nginx `%t`, ISO 8601, Unix time."""
from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
from functools import lru_cache
from types import MappingProxyType

from matcher.timerange import OutOfRange, to_utc
from matcher.logformats.record import LogParseError

# ---------------------------------------------------------------- timestamps

_MONTHS = MappingProxyType(
    {name: number for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}
)
_CLF_TIME = re.compile(
    r"\d\d/[A-Za-z]{3}/\d{4}:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d [+-](?:[01]\d|2[0-3])[0-5]\d\Z", re.ASCII
)
# Written out rather than datetime.fromisoformat, which before Python 3.11
# rejects `Z` and fractions other than 3 or 6 digits.
_ISO_TIME = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,12}))?"
    r"(?:(Z)|([+-])([01]\d|2[0-3]):?([0-5]\d))\Z",
    re.ASCII | re.IGNORECASE,
)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# Unix time arrives in seconds, ms, µs or ns; its magnitude tells which (seconds
# stay below 1e11 until the year 5138). Entries: (upper bound, units per second).
_EPOCH_UNITS = ((1e11, 1), (1e14, 1_000), (1e17, 1_000_000), (math.inf, 1_000_000_000))


@lru_cache(maxsize=4096)
def clf_timestamp(text: str) -> datetime:
    """`10/Oct/2026:13:55:36 -0700` (Apache %t / nginx $time_local, brackets removed) -> UTC.

    Cached: a busy log repeats each second on many consecutive lines.
    """
    if not _CLF_TIME.match(text):
        raise LogParseError("bad-timestamp", f"not a [dd/Mon/yyyy:HH:MM:SS +hhmm] time: {text!r}")
    # Fixed-width fields: the day's start is cached per (date, offset) and the
    # clock added as integer seconds; datetime(...) per line cost several times more.
    clock = int(text[12:14]) * 3600 + int(text[15:17]) * 60 + int(text[18:20])
    try:
        return _utc_of_local_midnight(text[:11], text[21:]) + timedelta(0, clock)
    except OverflowError:
        raise _out_of_range(text) from None


@lru_cache(maxsize=1024)
def _utc_of_local_midnight(date: str, offset: str) -> datetime:
    """`10/Oct/2026`, `-0700` -> the UTC instant of that local midnight."""
    month = _MONTHS.get(date[3:6])
    if month is None:
        raise LogParseError("bad-timestamp", f"unknown month {date[3:6]!r}")
    try:
        midnight = datetime(int(date[7:11]), month, int(date[:2]), tzinfo=timezone.utc)
    except ValueError as error:
        raise LogParseError("bad-timestamp", f"{date}: {error}") from None
    return _in_utc(midnight, offset[0], int(offset[1:3]), int(offset[3:5]), f"{date} {offset}")


def iso_timestamp(text: str) -> datetime:
    """RFC 3339 / ISO 8601 date-time with `Z` or an offset, any fraction length -> UTC.

    A time without a zone is rejected: guessing one would shift every lookup by
    hours. Fractions beyond microseconds (Cloud Logging writes nanoseconds) are cut.
    """
    match = _ISO_TIME.match(text)
    if match is None:
        raise LogParseError("bad-timestamp", f"not an ISO 8601 time with Z or a UTC offset: {text!r}")
    year, month, day, hour, minute, second, fraction, zulu, sign, offset_hours, offset_minutes = match.groups()
    micros = int((fraction or "")[:6].ljust(6, "0"))
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, timezone.utc)
    except ValueError as error:
        raise LogParseError("bad-timestamp", f"{text!r}: {error}") from None
    if zulu:
        return moment
    return _in_utc(moment, sign, int(offset_hours), int(offset_minutes), text)


def epoch_timestamp(value: int | float) -> datetime:
    """Unix time in seconds, milliseconds, microseconds or nanoseconds -> UTC."""
    if isinstance(value, float) and not math.isfinite(value):
        raise LogParseError("bad-timestamp", f"not a finite unix time: {value!r}")
    magnitude = abs(value)
    per_second = next(units for limit, units in _EPOCH_UNITS if magnitude < limit)
    try:
        if isinstance(value, int):
            micros = value * 1_000_000 // per_second  # integer maths keeps ns timestamps exact
        else:
            micros = round(value * 1_000_000 / per_second)  # huge floats overflow to inf here
        return _EPOCH + timedelta(0, 0, micros)
    except OverflowError:
        raise _out_of_range(repr(value)) from None


_UNIX_SECONDS = re.compile(r"(\d{1,12})(?:\.(\d{1,6}))?\Z", re.ASCII)


def unix_seconds_timestamp(text: str) -> datetime:
    """Unix time written in seconds with an optional fraction (`1286536308.779`, as Squid and
    CloudFront's real-time logs write it) -> UTC. The unit is written, so none is guessed."""
    match = _UNIX_SECONDS.match(text)
    if match is None:
        raise LogParseError("bad-timestamp", f"not a unix time in seconds: {text[:40]!r}")
    seconds, fraction = match.groups()
    try:
        return _EPOCH + timedelta(0, int(seconds), int((fraction or "").ljust(6, "0")))
    except OverflowError:
        raise _out_of_range(text) from None


def _in_utc(moment: datetime, sign: str, hours: int, minutes: int, text: str) -> datetime:
    """A local time written with offset `sign hours:minutes`, in UTC; refused when that leaves
    the datetime range (the one check for every time format: see matcher.timerange)."""
    local = moment.replace(tzinfo=timezone(timedelta(hours=hours, minutes=minutes) * (1 if sign == "+" else -1)))
    try:
        return to_utc(local)
    except OutOfRange:
        raise _out_of_range(text) from None


def _out_of_range(text: str) -> LogParseError:
    return LogParseError("bad-timestamp", f"{text}: outside 0001-01-01..9999-12-31 once in UTC")


_CLF_LOCAL = re.compile(
    r"(\d\d)/([A-Za-z]{3})/(\d{4}):([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,6}))?\Z", re.ASCII
)


def local_timestamp(text: str, zone: tzinfo) -> datetime:
    """`06/Feb/2009:12:14:14.655` (HAProxy's accept date: CLF without a zone, optional fraction),
    a wall-clock time in `zone` (`--log-timezone`) -> UTC. A time a clock change skips or repeats
    is read as zoneinfo reads it (fold 0: the earlier of the two)."""
    match = _CLF_LOCAL.match(text)
    if match is None:
        raise LogParseError("bad-timestamp", f"not a dd/Mon/yyyy:HH:MM:SS[.fff] time: {text!r}")
    day, month_name, year, hour, minute, second, fraction = match.groups()
    month = _MONTHS.get(month_name)
    if month is None:
        raise LogParseError("bad-timestamp", f"unknown month {month_name!r}")
    micros = int((fraction or "").ljust(6, "0"))
    try:
        local = datetime(int(year), month, int(day), int(hour), int(minute), int(second), micros, tzinfo=zone)
        return to_utc(local)
    except ValueError as error:
        raise LogParseError("bad-timestamp", f"{text!r}: {error}") from None
    except (OutOfRange, OverflowError):
        raise _out_of_range(text) from None


def time_zone(name: str) -> tzinfo:
    """`--log-timezone`: `UTC`, an IANA name (`Europe/Paris`) or a fixed offset (`+02:00`, `-0500`);
    ValueError when it is none of these."""
    text = name.strip()
    offset = re.fullmatch(r"([+-])([01]\d|2[0-3]):?([0-5]\d)", text)
    if offset:
        sign, hours, minutes = offset.groups()
        return timezone(timedelta(hours=int(hours), minutes=int(minutes)) * (1 if sign == "+" else -1))
    if text.upper() in ("UTC", "Z", "GMT"):
        return timezone.utc
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}: give UTC, an IANA name such as Europe/Paris, or +HH:MM") from None
