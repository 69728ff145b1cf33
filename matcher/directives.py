"""Page-level directives: the indexing facet, kept apart from the crawl decision
(docs/semantics.md § Page directives).

Directives come from `X-Robots-Tag` header values and `<meta name="robots">` /
`<meta name="BOTNAME">` contents. Each source is parsed once into `Directives`: every
directive with the bot it addresses (None for all crawlers), plus lint for what could not
be used. `Directives.effective(tokens)` then picks those for one crawler and resolves
conflicts to the most restrictive, as search engines document; the result is the record's
`indexing` object. Nothing here depends on the content type: the header is how PDFs,
images and other non-HTML files carry directives, so they count the same.

The page-directives table holds captured directives per host, path and time; a
`PageDirectivesTable` finds the row in effect for a request the way the robots history
finds the robots.txt version in effect.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from matcher.history import DISALLOWED, DISALLOWED_BETWEEN_CAPTURES, DISALLOWED_WITHIN_GRACE
from matcher.hosts import host_key
from matcher.in_effect import index_in_effect
from matcher.normalize import normalize
from matcher.records import rfc3339
from matcher.timerange import parse_timestamp, to_utc

# Flags recognised by at least one major engine. `nocache` (Bing), `noyaca` (Yandex),
# `noodp`/`noydir` (retired, still common in templates) and the `noai`/`noimageai`
# opt-outs are kept so a site owner sees them in effect rather than flagged as typos.
FLAGS: tuple[str, ...] = (
    "indexifembedded",
    "noai",
    "noarchive",
    "nocache",
    "nofollow",
    "noimageai",
    "noimageindex",
    "noindex",
    "noodp",
    "nosnippet",
    "nositelinkssearchbox",
    "notranslate",
    "noydir",
    "noyaca",
)
# Directive name -> type of its value in the `indexing` object (records.Column types).
VALUED: Mapping[str, str] = MappingProxyType({
    "max-image-preview": "string",
    "max-snippet": "int",
    "max-video-preview": "int",
    "unavailable_after": "string",
})
# Names that stand for other directives: `none` restricts like two flags, the rest
# restate the defaults and so restrict nothing.
_EXPANSIONS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "none": ("noindex", "nofollow"),
    "all": (),
    "index": (),
    "follow": (),
})
_FLAG_SET = frozenset(FLAGS)
_KNOWN = _FLAG_SET | set(VALUED) | set(_EXPANSIONS)

_IMAGE_SIZES = ("none", "standard", "large")  # most restrictive first
_UNLIMITED = -1  # max-snippet / max-video-preview: no limit
_MAX_COUNT = 2**63 - 1  # fits the int64 columns of Parquet and BigQuery

# A bot name before the first colon of a header value. Spaces or other punctuation
# mean the text is not a name, so it is read as a directive (and linted if unknown).
_BOT_NAME = re.compile(r"[a-z0-9_.-]+")
_COUNT = re.compile(r"[+-]?\d{1,19}", re.ASCII)
_FIRST_WORD = re.compile(r"\s*([A-Za-z]+|\d)", re.ASCII)

DirectiveValue = int | str | datetime


class PageDirectivesError(ValueError):
    """A page-directives row or set of rows that cannot be used as given."""


@dataclass(frozen=True)
class Directive:
    """One directive as it applies: a flag (value None) or a named value, for one bot or all.

    `name` is lower-case; `none` is already split into `noindex` and `nofollow`.
    `value` is an int for counts, a lower-case word for `max-image-preview`, and a UTC
    datetime for `unavailable_after`. `bot` is the lower-case token addressed, None for all.
    """

    name: str
    value: DirectiveValue | None = None
    bot: str | None = None


@dataclass(frozen=True)
class Lint:
    """Something in a source that could not be used as written, or was read by assumption.

    Codes: unknown-directive, unexpected-value, missing-value, bad-number, bad-value,
    bad-date, assumed-utc, empty-bot-section, bad-meta-name.
    """

    code: str
    message: str
    raw: str
    source: str


@dataclass(frozen=True)
class Directives:
    """Directives of one or more sources for every crawler, and the lint found reading them."""

    items: tuple[Directive, ...] = ()
    lint: tuple[Lint, ...] = ()

    def effective(self, tokens: Sequence[str]) -> dict[str, bool | int | str]:
        """The `indexing` object for a crawler with these robots tokens.

        Generic directives and those addressed to any of the tokens apply; for each name
        the most restrictive value wins. Keys are sorted; flags map to True, valued
        directives to their value, `unavailable_after` to an RFC 3339 UTC string.
        """
        addressed = frozenset(token.lower() for token in tokens)
        strictest: dict[str, DirectiveValue | bool] = {}
        for directive in self.items:
            if directive.bot is not None and directive.bot not in addressed:
                continue
            current = strictest.get(directive.name)
            if directive.value is None:
                strictest[directive.name] = True
            elif current is None:
                strictest[directive.name] = directive.value
            else:
                strictest[directive.name] = min(current, directive.value, key=_STRICTNESS[directive.name])
        return {name: _record_value(strictest[name]) for name in sorted(strictest)}


def combine(parts: Iterable[Directives]) -> Directives:
    """Several sources as one; conflicts are resolved later, per crawler, by `effective`."""
    items: list[Directive] = []
    lint: list[Lint] = []
    for part in parts:
        items.extend(part.items)
        lint.extend(part.lint)
    return Directives(tuple(items), tuple(lint))


@lru_cache(maxsize=4096)
def parse_x_robots_tag(value: str) -> Directives:
    """One `X-Robots-Tag` header value; never raises.

    A leading `botname:` addresses the rest of the value to that bot. A later item of the
    form `botname: directive` starts a new section for another bot: that is how a server
    that joins repeated header lines with commas logs `googlebot: noindex` followed by
    `bingbot: nofollow`. A name before a colon is a bot only when it is not a directive.
    Cached: a log repeats a handful of distinct values.
    """
    return _parse_list(value, "X-Robots-Tag", bot_prefixes=True)


@lru_cache(maxsize=4096)
def parse_meta(name: str, content: str) -> Directives:
    """One `<meta name=... content=...>` element; `robots` addresses every crawler."""
    bot = name.strip().lower()
    source = f'<meta name="{name}">'
    if not bot:
        return Directives((), (Lint("bad-meta-name", "a robots meta element needs a name", content, source),))
    parsed = _parse_list(content, source, bot_prefixes=False)
    if bot == "robots":
        return parsed
    return Directives(tuple(Directive(d.name, d.value, bot) for d in parsed.items), parsed.lint)


def x_robots_tag_directives(values: Iterable[str]) -> Directives:
    """Several `X-Robots-Tag` header instances of one response, combined."""
    return combine(parse_x_robots_tag(value) for value in values)


@dataclass(frozen=True)
class PageDirectives:
    """One row of the page-directives table: a page's directives from `effective_from` on.

    `x_robots_tag` holds header values, one per header line; `meta_robots` holds
    (name, content) per `<meta>` element. `host` is stored as robots history stores it
    (lower-case, no trailing dot), `effective_from` in UTC. `directives` is the parsed,
    combined content of both.
    """

    host: str
    path: str
    effective_from: datetime
    x_robots_tag: tuple[str, ...] = ()
    meta_robots: tuple[tuple[str, str], ...] = ()
    directives: Directives = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not host_key(self.host):
            raise PageDirectivesError(f"host must be a non-empty string, got {self.host!r}")
        if not isinstance(self.path, str) or not self.path.startswith("/") or "#" in self.path:
            raise PageDirectivesError(
                f"path must be a path (and ?query) starting with '/', without a fragment, got {self.path!r}"
            )
        if not _is_aware(self.effective_from):
            raise PageDirectivesError(
                f"effective_from must be a timezone-aware datetime, got {self.effective_from!r}"
            )
        if not isinstance(self.x_robots_tag, tuple) or not all(isinstance(v, str) for v in self.x_robots_tag):
            raise PageDirectivesError(f"x_robots_tag must be a tuple of strings, got {self.x_robots_tag!r}")
        if not isinstance(self.meta_robots, tuple) or not all(_is_meta_pair(m) for m in self.meta_robots):
            raise PageDirectivesError(
                f"meta_robots must be a tuple of (name, content) string pairs, got {self.meta_robots!r}"
            )
        object.__setattr__(self, "host", host_key(self.host))
        object.__setattr__(self, "effective_from", self.effective_from.astimezone(timezone.utc))
        parts = [x_robots_tag_directives(self.x_robots_tag)]
        parts += [parse_meta(name, content) for name, content in self.meta_robots]
        object.__setattr__(self, "directives", combine(parts))

    @property
    def key(self) -> tuple[str, str]:
        """(host, normalized path and query): what a request must equal to be covered."""
        return self.host, normalize(self.path)


class PageDirectivesTable:
    """Page-directives rows by host, path and time.

    A row covers requests whose host and normalized path+query equal its own exactly: a
    query string makes a different page, and no row extends to a prefix or to other
    query strings. For a covered page, the row in effect is the latest with
    effective_from <= ts; a request before the page's first row is not covered.
    """

    def __init__(self, rows: Iterable[PageDirectives]) -> None:
        by_page: dict[tuple[str, str], list[PageDirectives]] = {}
        for row in rows:
            by_page.setdefault(row.key, []).append(row)
        self._pages = {key: _ordered(page_rows) for key, page_rows in by_page.items()}
        self._times = {key: tuple(row.effective_from for row in page_rows) for key, page_rows in self._pages.items()}

    def __len__(self) -> int:
        return sum(len(page_rows) for page_rows in self._pages.values())

    def lookup(self, host: str | None, path: str, ts: datetime) -> PageDirectives | None:
        """The row in effect for a request at `ts`; `path` is path+query as the log has it."""
        if not _is_aware(ts):
            raise ValueError(f"request time must be a timezone-aware datetime, got {ts!r}")
        if host is None:
            return None
        key = (host_key(host), normalize(path))
        times = self._times.get(key)
        if times is None:
            return None
        index = index_in_effect(times, ts)
        return None if index < 0 else self._pages[key][index]


def page_directives_from_row(row: Mapping[str, object]) -> PageDirectives:
    """Build a row from one decoded JSON Lines object of the page-directives table.

    Required: host, path, effective_from (ISO 8601 with Z or an offset). Optional:
    x_robots_tag (list of header values), meta_robots (list of {"name", "content"}).
    A row with neither says the page carried no directives from that time on.
    """
    unknown = sorted(set(row) - _ROW_KEYS)
    if unknown:
        raise PageDirectivesError(f"unknown field(s) {', '.join(unknown)} in page-directives row")
    for key in ("host", "path", "effective_from"):
        if key not in row:
            raise PageDirectivesError(f"page-directives row is missing {key!r}")
    return PageDirectives(
        host=_row_string(row["host"], "host"),
        path=_row_string(row["path"], "path"),
        effective_from=_row_timestamp(row["effective_from"]),
        x_robots_tag=_row_headers(row.get("x_robots_tag", [])),
        meta_robots=_row_metas(row.get("meta_robots", [])),
    )


def effective_indexing(
    header_values: Sequence[str], page: PageDirectives | None, tokens: Sequence[str]
) -> dict[str, bool | int | str] | None:
    """The `indexing` object of a request: None when neither the log nor the table covers it.

    `header_values` are the X-Robots-Tag values the log carries (blank ones count as
    absent), `page` the table row in effect, `tokens` the crawler's robots tokens.
    """
    present = [value for value in header_values if value.strip()]
    if not present and page is None:
        return None
    parts = [x_robots_tag_directives(present)]
    if page is not None:
        parts.append(page.directives)
    return combine(parts).effective(tokens)


def indexing_unseen(decision: str, indexing: Mapping[str, object] | None) -> bool:
    """robots.txt disallows the URL, so a crawler that obeys it never sees these directives."""
    return indexing is not None and decision in (DISALLOWED, DISALLOWED_WITHIN_GRACE, DISALLOWED_BETWEEN_CAPTURES)


def noindex_unseen(decision: str, indexing: Mapping[str, object] | None) -> bool:
    """The page relies on a noindex that robots.txt keeps crawlers from reading.

    Such a URL can still be indexed from links, without its content.
    """
    return indexing_unseen(decision, indexing) and bool(indexing and indexing.get("noindex"))


def unavailable_after_passed(indexing: Mapping[str, object] | None, ts: datetime) -> bool:
    """`unavailable_after` is in effect and `ts` is later than it."""
    moment = None if indexing is None else indexing.get("unavailable_after")
    if moment is None:
        return False
    if not isinstance(moment, str):
        raise ValueError(f"unavailable_after must be an RFC 3339 string, got {moment!r}")
    return ts > parse_timestamp(moment)


# ------------------------------------------------------------------ parsing lists


def _parse_list(text: str, source: str, *, bot_prefixes: bool) -> Directives:
    """Comma-separated directives; with `bot_prefixes`, `bot:` starts a section for that bot."""
    pieces = [piece.strip() for piece in text.split(",")]
    items: list[Directive] = []
    lint: list[Lint] = []
    bot: str | None = None
    index = 0
    while index < len(pieces):
        raw = pieces[index]
        index += 1
        if not raw:
            continue
        name, colon, rest = raw.partition(":")
        key = name.strip().lower()
        if bot_prefixes and colon and key not in _KNOWN and _BOT_NAME.fullmatch(key):
            bot = key
            name, colon, rest = rest.partition(":")
            key = name.strip().lower()
            if not key and not colon:
                lint.append(Lint("empty-bot-section", f"no directive follows the bot name {bot!r}", raw, source))
                continue
        if key == "unavailable_after":
            # Dates carry commas of their own ("Sunday, 25-Jun-17 ..."): pieces that can
            # only continue a date are glued back on.
            while index < len(pieces) and _continues_date(pieces[index]):
                rest += ", " + pieces[index]
                raw += ", " + pieces[index]
                index += 1
        found, problems = _interpret(key, bool(colon), rest.strip(), raw, bot, source)
        items.extend(found)
        lint.extend(problems)
    return Directives(tuple(items), tuple(lint))


def _continues_date(piece: str) -> bool:
    word = _FIRST_WORD.match(piece)
    if word is None:
        return False
    first = word.group(1).lower()
    return first.isdigit() or first in _MONTHS or first in _WEEKDAYS


def _interpret(
    key: str, has_value: bool, value: str, raw: str, bot: str | None, source: str
) -> tuple[tuple[Directive, ...], tuple[Lint, ...]]:
    """One directive's text -> what it applies, and what was wrong with it."""
    if key in _FLAG_SET or key in _EXPANSIONS:
        names = _EXPANSIONS.get(key, (key,))
        found = tuple(Directive(name, None, bot) for name in names)
        if has_value and value:
            return found, (Lint("unexpected-value", f"{key} takes no value; the value is ignored", raw, source),)
        return found, ()
    reader = _READERS.get(key)
    if reader is None:
        return (), (Lint("unknown-directive", _unknown_message(key), raw, source),)
    if not value:
        return (), (Lint("missing-value", f"{key} needs a value ({key}: ...)", raw, source),)
    try:
        parsed, warning = reader(value)
    except _BadValue as error:
        return (), (Lint(error.code, f"{key}: {error}", raw, source),)
    warnings = () if warning is None else (Lint("assumed-utc", f"{key}: {warning}", raw, source),)
    return (Directive(key, parsed, bot),), warnings


def _unknown_message(key: str) -> str:
    words = re.split(r"[\s;]+", key)
    if len(words) > 1 and _KNOWN.intersection(words):
        return f"unknown directive {key!r}; directives are separated by commas"
    return f"unknown directive {key!r}"


# ------------------------------------------------------------------ values


class _BadValue(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


_Read = tuple[DirectiveValue, str | None]


def _read_count(text: str) -> _Read:
    if not _COUNT.fullmatch(text):
        raise _BadValue("bad-number", f"not a whole number: {text!r}")
    count = int(text)
    if count < _UNLIMITED or count > _MAX_COUNT:
        raise _BadValue("bad-number", f"{count} is out of range (-1 for no limit, or 0 and up)")
    return count, None


def _read_image_size(text: str) -> _Read:
    size = text.lower()
    if size not in _IMAGE_SIZES:
        raise _BadValue("bad-value", f"{text!r} is not one of none, standard, large")
    return size, None


def _read_date(text: str) -> _Read:
    parsed = _parse_date(text)
    if parsed is None:
        raise _BadValue("bad-date", f"not a date and time in a known format: {text!r}")
    moment, zoned = parsed
    if not 1000 <= moment.year <= 9999:
        raise _BadValue("bad-date", f"year out of range: {text!r}")
    return moment, None if zoned else "no time zone given; read as UTC"


_READERS: Mapping[str, Callable[[str], _Read]] = MappingProxyType({
    "max-snippet": _read_count,
    "max-video-preview": _read_count,
    "max-image-preview": _read_image_size,
    "unavailable_after": _read_date,
})


def _count_strictness(count: int) -> float:
    return float("inf") if count == _UNLIMITED else float(count)


_STRICTNESS: Mapping[str, Callable[[Any], Any]] = MappingProxyType({
    "max-snippet": _count_strictness,
    "max-video-preview": _count_strictness,
    "max-image-preview": _IMAGE_SIZES.index,
    "unavailable_after": lambda moment: moment,
})


def _record_value(value: DirectiveValue | bool) -> bool | int | str:
    return rfc3339(value) if isinstance(value, datetime) else value


# ------------------------------------------------------------------ dates

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


def _parse_date(text: str) -> tuple[datetime, bool] | None:
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


# ------------------------------------------------------------------ table rows

_ROW_KEYS = frozenset({"host", "path", "effective_from", "x_robots_tag", "meta_robots"})


def _ordered(rows: list[PageDirectives]) -> tuple[PageDirectives, ...]:
    """One page's rows by time; identical duplicates dropped, conflicting ones rejected.

    Rows may reach a worker in any order, so order cannot settle a conflict.
    """
    ordered = sorted(rows, key=lambda row: row.effective_from)
    kept = [ordered[0]]
    for row in ordered[1:]:
        previous = kept[-1]
        if row.effective_from != previous.effective_from:
            kept.append(row)
        elif (row.x_robots_tag, row.meta_robots) != (previous.x_robots_tag, previous.meta_robots):
            raise PageDirectivesError(
                f"{row.host}{row.path} has two different rows at {row.effective_from.isoformat()}"
            )
    return tuple(kept)


def _is_aware(value: object) -> bool:
    return isinstance(value, datetime) and value.utcoffset() is not None


def _is_meta_pair(value: object) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(part, str) for part in value)


def _row_string(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise PageDirectivesError(f"{name} must be a string, got {value!r}")
    return value


def _row_timestamp(value: object) -> datetime:
    if not isinstance(value, str):
        raise PageDirectivesError(f"effective_from must be a timestamp string, got {value!r}")
    try:
        return to_utc(parse_timestamp(value))
    except ValueError:
        raise PageDirectivesError(
            f"effective_from is not an ISO 8601 date-time with Z or an offset: {value!r}"
        ) from None


def _row_headers(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PageDirectivesError(f"x_robots_tag must be a list of header values (strings), got {value!r}")
    return tuple(value)


def _row_metas(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        raise PageDirectivesError(f"meta_robots must be a list of {{name, content}} objects, got {value!r}")
    metas = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) != {"name", "content"}
            or not isinstance(item["name"], str)
            or not isinstance(item["content"], str)
        ):
            raise PageDirectivesError(
                f'each meta_robots item must be {{"name": str, "content": str}}, got {item!r}'
            )
        metas.append((item["name"], item["content"]))
    return tuple(metas)
