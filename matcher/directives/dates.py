"""The date forms `unavailable_after` is written in, read as UTC moments.

Robots directives predate any one standard: sites write ISO 8601, the HTTP dates of RFC 822/1123
and RFC 850, asctime and month-first prose, with or without a zone. This is not the strict
ISO 8601 of the project's tables (`matcher/timerange.py`): it accepts `UTC` and `GMT` after an
ISO time, a comma before fractions, and reports whether a zone was given.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from types import MappingProxyType

__all__ = ["continues_date", "parse_date"]

_MONTHS: Mapping[str, int] = MappingProxyType({
    **{name: number for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)},
    **{name: number for number, name in enumerate(
        ("january", "february", "march", "april", "may", "june", "july", "august", "september",
         "october", "november", "december"), start=1)},
    "sept": 9,
})
_WEEKDAYS = frozenset(
    ("mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun",
     "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
)
# RFC 822 §5 zone names, hours east of UTC.
_ZONES: Mapping[str, int] = MappingProxyType({
    "ut": 0, "utc": 0, "gmt": 0, "z": 0,
    "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
})
_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)"
    r"(?:[Tt ](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d{1,9}))?)?)?"
    r"\s*(?:([Zz]|UTC|GMT|utc|gmt)|([+-])(\d\d):?(\d\d))?",
    re.ASCII,
)
_CLOCK = re.compile(r"(\d{1,2}):(\d\d)(?::(\d\d))?", re.ASCII)
_OFFSET = re.compile(r"([+-])(\d\d):?(\d\d)", re.ASCII)
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})-([A-Za-z]+)-(\d{2}|\d{4})", re.ASCII)
_FIRST_WORD = re.compile(r"\s*([A-Za-z]+|\d)", re.ASCII)


def parse_date(text: str) -> tuple[datetime, bool] | None:
    """A date in the forms robots directives use -> (UTC datetime, zone given or date-only).

    ISO 8601 (`2026-12-01`, `2026-12-01T00:00:00Z`, with an offset), RFC 822/1123
    (`[Sun, ]25 Jun 2010 15:00[:00] PST`), RFC 850 (`Sunday, 25-Jun-17 15:00:00 GMT`),
    asctime (`Sun Jun 25 15:00:00 2017`) and month-first prose (`June 25, 2010 3:00 PM EST`).
    """
    iso = _ISO.fullmatch(text.strip())
    try:
        if iso is not None:
            return _iso_date(iso)
        return _text_date(text)
    except (ValueError, OverflowError):
        return None


def continues_date(piece: str) -> bool:
    """`piece`, after a comma, can only be the rest of a date ("Sunday, 25-Jun-17 ...")."""
    word = _FIRST_WORD.match(piece)
    if word is None:
        return False
    first = word.group(1).lower()
    return first.isdigit() or first in _MONTHS or first in _WEEKDAYS


def _iso_date(match: re.Match[str]) -> tuple[datetime, bool]:
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    micros = int((fraction or "").ljust(6, "0")[:6])
    local = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0), micros)
    if sign:
        return _at_offset(local, sign, off_h, off_m), True
    return local.replace(tzinfo=timezone.utc), bool(zulu) or hour is None


@dataclass
class _DateParts:
    day: int | None = None
    month: int | None = None
    year: int | None = None
    clock: tuple[int, int, int] | None = None
    meridiem: str | None = None
    offset: timedelta | None = None

    def set(self, name: str, value: object) -> None:
        if getattr(self, name) is not None:
            raise ValueError(f"two {name} values")
        setattr(self, name, value)


def _text_date(text: str) -> tuple[datetime, bool]:
    parts = _DateParts()
    for token in _date_tokens(text):
        _take(parts, token)
    if parts.day is None or parts.month is None or parts.year is None:
        raise ValueError("day, month and year are required")
    hour, minute, second = parts.clock or (0, 0, 0)
    if parts.meridiem is not None:
        if parts.clock is None or not 1 <= hour <= 12:
            raise ValueError("am/pm needs an hour from 1 to 12")
        hour = hour % 12 + (12 if parts.meridiem == "pm" else 0)
    local = datetime(parts.year, parts.month, parts.day, hour, minute, second, tzinfo=timezone.utc)
    if parts.offset is None:
        return local, parts.clock is None
    return local - parts.offset, True


def _date_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    for token in text.replace(",", " ").split():
        dashed = _DAY_MONTH_YEAR.fullmatch(token)
        tokens.extend(dashed.groups() if dashed else (token,))
    return tokens


def _take(parts: _DateParts, token: str) -> None:
    """Fill one slot of `parts` from `token`, or reject the date."""
    word = token.lower().rstrip(".")
    clock = _CLOCK.fullmatch(token)
    offset = _OFFSET.fullmatch(token)
    if word in _WEEKDAYS:
        return
    if word in _MONTHS:
        parts.set("month", _MONTHS[word])
    elif word in ("am", "pm"):
        parts.set("meridiem", word)
    elif word in _ZONES:
        parts.set("offset", timedelta(hours=_ZONES[word]))
    elif clock is not None:
        parts.set("clock", tuple(int(group or 0) for group in clock.groups()))
    elif offset is not None:
        sign, hours, minutes = offset.groups()
        span = timedelta(hours=int(hours), minutes=int(minutes))
        parts.set("offset", span if sign == "+" else -span)
    elif token.isascii() and token.isdigit() and len(token) == 4:
        parts.set("year", int(token))
    elif token.isascii() and token.isdigit() and len(token) <= 2:
        if parts.day is None:
            parts.set("day", int(token))
        else:
            parts.set("year", _two_digit_year(int(token)))
    else:
        raise ValueError(f"unexpected {token!r}")


def _two_digit_year(year: int) -> int:
    # The POSIX strptime pivot: RFC 850 dates with 69 and below are this century.
    return year + (2000 if year < 70 else 1900)


def _at_offset(local: datetime, sign: str, hours: str, minutes: str) -> datetime:
    span = timedelta(hours=int(hours), minutes=int(minutes))
    utc = local - span if sign == "+" else local + span
    return utc.replace(tzinfo=timezone.utc)
