"""`X-Robots-Tag` header values and robots `<meta>` elements, parsed into `Directives`.

Parsing never raises: what cannot be used becomes lint with the text it came from. Nothing
here depends on the content type: the header is how PDFs, images and other non-HTML files
carry directives, so they count the same.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from types import MappingProxyType

from matcher.directives.dates import continues_date, parse_date
from matcher.directives.model import Directive, Directives, Lint, combine
from matcher.directives.vocabulary import (
    EXPANSIONS,
    FLAG_SET,
    IMAGE_SIZES,
    KNOWN,
    MAX_COUNT,
    UNLIMITED,
    DirectiveValue,
)

__all__ = ["parse_meta", "parse_x_robots_tag", "x_robots_tag_directives"]

# A bot name before the first colon of a header value. Spaces or other punctuation
# mean the text is not a name, so it is read as a directive (and linted if unknown).
_BOT_NAME = re.compile(r"[a-z0-9_.-]+")
_COUNT = re.compile(r"[+-]?\d{1,19}", re.ASCII)


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
        if bot_prefixes and colon and key not in KNOWN and _BOT_NAME.fullmatch(key):
            bot = key
            name, colon, rest = rest.partition(":")
            key = name.strip().lower()
            if not key and not colon:
                lint.append(Lint("empty-bot-section", f"no directive follows the bot name {bot!r}", raw, source))
                continue
        if key == "unavailable_after":
            # Dates carry commas of their own ("Sunday, 25-Jun-17 ..."): pieces that can
            # only continue a date are glued back on.
            while index < len(pieces) and continues_date(pieces[index]):
                rest += ", " + pieces[index]
                raw += ", " + pieces[index]
                index += 1
        found, problems = _interpret(key, bool(colon), rest.strip(), raw, bot, source)
        items.extend(found)
        lint.extend(problems)
    return Directives(tuple(items), tuple(lint))


def _interpret(
    key: str, has_value: bool, value: str, raw: str, bot: str | None, source: str
) -> tuple[tuple[Directive, ...], tuple[Lint, ...]]:
    """One directive's text -> what it applies, and what was wrong with it."""
    if key in FLAG_SET or key in EXPANSIONS:
        names = EXPANSIONS.get(key, (key,))
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
    if len(words) > 1 and KNOWN.intersection(words):
        return f"unknown directive {key!r}; directives are separated by commas"
    return f"unknown directive {key!r}"


class _BadValue(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


_Read = tuple[DirectiveValue, str | None]


def _read_count(text: str) -> _Read:
    if not _COUNT.fullmatch(text):
        raise _BadValue("bad-number", f"not a whole number: {text!r}")
    count = int(text)
    if count < UNLIMITED or count > MAX_COUNT:
        raise _BadValue("bad-number", f"{count} is out of range (-1 for no limit, or 0 and up)")
    return count, None


def _read_image_size(text: str) -> _Read:
    size = text.lower()
    if size not in IMAGE_SIZES:
        raise _BadValue("bad-value", f"{text!r} is not one of none, standard, large")
    return size, None


def _read_date(text: str) -> _Read:
    parsed = parse_date(text)
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
