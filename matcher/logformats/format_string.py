"""The server's own format string, compiled into a layout: `apache:` + a mod_log_config
`LogFormat`, or `nginx:` + a `log_format`, pasted from the server's configuration.

Each directive (`%h`, `%{User-Agent}i`, `$remote_addr`, ...) becomes a pattern group; the text
between directives must appear as written. A directive between double quotes holds a quoted value
with the escapes both servers write; any other takes everything up to the first place the text
after it appears (or to the line's end when it is last), and may arrive quoted itself
(`fwd="1.2.3.4"`: the quotes are not the value's). Every directive may be empty or `-`. Directives
the audit does not use are matched and skipped. A format that lacks the client address, the time
or the request is refused when compiled, with what is missing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from functools import lru_cache

from matcher.logformats.fields import apache_header, nginx_header
from matcher.logformats.pattern_check import AmbiguousPattern, check_pattern, first_characters, last_characters
from matcher.logformats.presets import CLF, EPOCH_SECONDS, ISO, Layout, TimeField, _layout
from matcher.logformats.record import LogParseError
from matcher.timerange import EPOCH as EPOCH_START, to_utc

__all__ = ["FORMAT_STRING_KINDS", "PASTE_YOUR_FORMAT", "TIME_DIRECTIVES", "compile_format"]

FORMAT_STRING_KINDS = ("apache", "nginx")
# What a refusal tells someone whose server writes a layout of its own: it is read once pasted.
PASTE_YOUR_FORMAT = (
    "give your server's own format: --log-format 'nginx:<your log_format>' (or 'apache:<your LogFormat>'),"
    " see docs/logformats.md#your-servers-own-format"
)

_QUOTED_VALUE = r'[^"\\]*(?:\\.[^"\\]*)*'
_PLAIN_VALUE = r"\S+"  # a directive right against another: what `_side_by_side` bounds
_CLF_VALUE = r"\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}"
# Values of a known form are read as that form, so that the text after them ends them in one place:
# a scheme holds no `:` (`$scheme://$host`), a port or a duration no other character. Each may
# also be `-` or nothing, as a server writes a value it does not have.
# a proxy writes 0 for a request that got no answer (Envoy: the client left first)
_STATUS = r"\d{3}|0|-|"
_SIZE = r"\d{1,20}|-|"
_PORT = r"\d{1,5}|-|"
_SCHEME = r"[A-Za-z][A-Za-z0-9+.\-]{0,31}|-|"
# A request line the format does not quote: its own spaces are the method's and the protocol's.
_REQUEST_LINE = r"[A-Za-z]{1,20} [^ ]+(?: [A-Z]{1,10}/\d(?:\.\d)?)?|-|"

# --------------------------------------------------------------------- Apache

_APACHE_DIRECTIVE = re.compile(r"%(?:!?\d{3}(?:,\d{3})*)?[<>]?(?:\{([^}]*)\})?([a-zA-Z%])")
_APACHE_HEADERS = {
    "referer": "referer", "user-agent": "user_agent", "host": "host", "x-forwarded-for": "forwarded_for",
    "signature-agent": "signature_agent", "signature-input": "signature_input", "signature": "signature",
}
_APACHE_RESPONSE_HEADERS = {"content-usage": "content_usage", "retry-after": "retry_after"}
_APACHE_LETTERS = {
    "h": "client_ip", "a": "client_ip", "r": "request", "s": "status", "b": "size", "B": "size", "O": "size",
    "v": "host", "V": "host", "m": "method", "U": "target", "q": "query",
}
_APACHE_OWN = {"p": _PORT, "D": _SIZE, "k": _SIZE}
# strftime directives of `%{...}t`: each is one group read by `_StrftimeTime`, and `%T`, `%F` are
# written out as the directives they stand for, so every directive accepted is one that is read.
_STRFTIME = {
    "Y": r"(\d{4})", "m": r"(\d\d)", "d": r"(\d\d)", "e": r"([ \d]\d)", "H": r"(\d\d)", "M": r"(\d\d)",
    "S": r"(\d\d)", "b": r"([A-Za-z]{3})", "h": r"([A-Za-z]{3})", "y": r"(\d\d)",
    # the weekday, as asctime writes it (`Sun Mar 13 22:49:12 2016`): matched, the date says the day
    "a": r"([A-Za-z]{3})",
    "j": r"(\d{3})", "Z": r"([A-Za-z]{1,5})", "z": r"([+-]\d\d:?\d\d|Z)",
    # fractions of a second: `%f` up to nine digits, `%{msec_frac}t` and `%{usec_frac}t` three and six
    "f": r"(\d{1,9})", "{msec_frac}": r"(\d{3})", "{usec_frac}": r"(\d{6})",
}
_STRFTIME_SHORTHANDS = {"T": "%H:%M:%S", "F": "%Y-%m-%d", "D": "%m/%d/%y", "R": "%H:%M"}
_EPOCH_UNITS = {"sec": 1, "msec": 1_000, "usec": 1_000_000}
_FRACTIONS = {"{msec_frac}": "f", "{usec_frac}": "f"}
_FRACTION_DIGITS = {"msec_frac": 3, "usec_frac": 6}
# what `%{...}t` may hold
TIME_DIRECTIVES = frozenset({*(letter for letter in _STRFTIME if letter not in _FRACTIONS), *_STRFTIME_SHORTHANDS})


def _apache_unescaped(spec: str) -> str:
    """A LogFormat as the server reads it: pasted from the configuration with its surrounding
    quotes and `\"` escapes, it is the text between the quotes with each `\"` a quote."""
    text = spec.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and text[-2] != "\\":
        text = text[1:-1]
    return text.replace('\\"', '"') if '\\"' in text else text


def _apache_parts(spec: str) -> list[tuple[str, str | None, str, str]]:
    """A LogFormat -> (kind, our field or None, pattern, directive or the literal's text) pieces;
    kind "literal", "time" or "value"."""
    pieces = []
    position = 0
    matches = list(_APACHE_DIRECTIVE.finditer(spec))
    index = 0
    while index < len(matches):
        match = matches[index]
        index += 1
        if match.start() > position:
            text = spec[position:match.start()]
            pieces.append(("literal", None, re.escape(text), text))
        argument, letter = match.groups()
        position = match.end()
        directive = match.group(0)
        if letter == "%":
            pieces.append(("literal", None, "%", "%"))
        elif letter == "t" and (digits := _unix_fraction(
                argument, spec, position, matches[index] if index < len(matches) else None)) is not None:
            # `%{sec}t.%{msec_frac}t`: one time, Unix seconds and their fraction
            pieces.append(("time", TimeField(("time",), _EpochTime(1)), rf"(?P<time>\d{{1,20}}\.\d{{{digits}}})",
                           spec[match.start():matches[index].end()]))
            position = matches[index].end()
            index += 1
        elif letter == "t" and _clock(argument) is not None:
            # `%{%d/%b/%Y %T}t.%{msec_frac}t %{%z}t`, as Apache's manual writes a time with its
            # fraction: one time, read whole, from consecutive `%{...}t` and the text between them
            written = _clock(argument)
            while (index < len(matches) and matches[index].group(2) == "t"
                   and _clock(matches[index].group(1)) is not None):
                between = spec[position:matches[index].start()]
                written += between.replace("%", "%%") + _clock(matches[index].group(1))
                position = matches[index].end()
                index += 1
            pieces.append((*_apache_time(written), spec[match.start():position]))
        elif letter == "t":
            pieces.append((*_apache_time(argument), directive))
        elif letter == "i" and argument is not None:
            pieces.append(("value", _APACHE_HEADERS.get(argument.lower()), "", directive))
        elif letter == "o" and argument is not None:
            pieces.append(("value", _APACHE_RESPONSE_HEADERS.get(argument.lower()), "", directive))
        elif letter == "a" and argument == "c":
            pieces.append(("value", None, "", directive))  # the TCP peer; %a is the client
        elif argument is None and letter in _APACHE_LETTERS:
            # %U is the path alone and %q its "?query" or nothing, often written as one: %U%q
            own = {"U": r"[^\s?]+", "q": r"(?:\?\S*)?"}.get(letter, "")
            pieces.append(("value", _APACHE_LETTERS[letter], own, directive))
        else:
            pieces.append(("value", None, _APACHE_OWN.get(letter, ""), directive))
    if position < len(spec):
        text = spec[position:]
        pieces.append(("literal", None, re.escape(text), text))
    return pieces


def _unix_fraction(argument: str | None, spec: str, position: int, following: re.Match[str] | None) -> int | None:
    """The digits of the fraction when a `%{sec}t` ending at `position` is followed by `.` and
    `%{msec_frac}t` or `%{usec_frac}t` (Unix seconds with their fraction, as Squid and Zeek write
    them); else None."""
    if argument is None or following is None or following.group(2) != "t" or spec[position:following.start()] != ".":
        return None
    if argument.removeprefix("begin:").removeprefix("end:") != "sec":
        return None
    return _FRACTION_DIGITS.get((following.group(1) or "").removeprefix("begin:").removeprefix("end:"))


def _clock(argument: str | None) -> str | None:
    """The strftime text of a `%{...}t` that writes the clock, its fractions as `%{msec_frac}` and
    `%{usec_frac}`; None for `%t` and the Unix times."""
    if argument is None:
        return None
    text = argument.removeprefix("begin:").removeprefix("end:")
    if text in _EPOCH_UNITS:
        return None
    return "%{" + text + "}" if text in ("msec_frac", "usec_frac") else text


def _apache_time(argument: str | None) -> tuple[str, str | TimeField, str]:
    if argument is None:
        return ("time", "clf", r"\[(?P<time>" + _CLF_VALUE + r")\]")
    text = argument.removeprefix("begin:").removeprefix("end:")
    if text in _EPOCH_UNITS:
        return ("time", TimeField(("time",), _EpochTime(_EPOCH_UNITS[text])), r"(?P<time>\d{1,20})")
    for shorthand, written in _STRFTIME_SHORTHANDS.items():
        text = text.replace("%" + shorthand, written)
    pattern, visible, letters = [], [], []
    position = 0
    for match in re.finditer(r"%(\{[a-z_]+\}|.)", text, re.DOTALL):
        pattern.append(re.escape(text[position:match.start()]))
        visible.append(pattern[-1])
        letter = match.group(1)
        if letter == "%":
            pattern.append("%")
            visible.append("%")
        elif letter == "f" and pattern[-1].endswith(r"\."):
            # A writer drops a fraction of zero, point and all (Heroku's router, Python's isoformat).
            pattern[-1], visible[-1] = pattern[-1][:-2], visible[-1][:-2]
            pattern.append(r"(?:\." + _STRFTIME[letter] + ")?")
            visible.append(r"(?:\.(?:" + _STRFTIME[letter][1:] + ")?")
            letters.append(letter)
        elif letter in _STRFTIME:
            pattern.append(_STRFTIME[letter])
            visible.append("(?:" + _STRFTIME[letter][1:])
            letters.append(_FRACTIONS.get(letter, letter))
        else:
            raise ValueError(f"%{{{argument}}}t: the time directive %{letter} is not supported")
        position = match.end()
    if text in ("%{msec_frac}", "%{usec_frac}"):
        raise ValueError(f"%{{{text[2:-1]}}}t is a fraction of a second alone; write it right after a %{{...}}t "
                         "that writes the seconds, as in %{%d/%b/%Y:%T}t.%{msec_frac}t %{%z}t, or %{sec}t.%{msec_frac}t")
    pattern.append(re.escape(text[position:]))
    visible.append(pattern[-1])
    has = set(letters).__contains__
    if not ((has("Y") or has("y")) and (has("j") or ((has("m") or has("b") or has("h")) and (has("d") or has("e"))))):
        raise ValueError(f"%{{{argument}}}t does not write the date: give the year and the month and day "
                         "(%Y-%m-%d or %F) or the day of the year (%j)")
    reader = _StrftimeTime(re.compile("".join(pattern) + r"\Z", re.ASCII), tuple(letters))
    return ("time", TimeField(("time",), reader, zoned=reader.zoned), "(?P<time>" + "".join(visible) + ")")


# ---------------------------------------------------------------------- nginx

_NGINX_VARIABLE = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")
_NGINX_VARIABLES = {
    "remote_addr": "client_ip", "realip_remote_addr": None, "request": "request", "status": "status",
    "body_bytes_sent": "size", "bytes_sent": "size", "http_referer": "referer", "http_user_agent": "user_agent",
    "http_x_forwarded_for": "forwarded_for", "host": "host", "http_host": "host", "server_name": "host",
    "request_method": "method", "request_uri": "target",
    "http_signature_agent": "signature_agent", "http_signature_input": "signature_input", "http_signature": "signature",
    "sent_http_content_usage": "content_usage", "sent_http_retry_after": "retry_after",
}
_NGINX_OWN = {"scheme": _SCHEME, "remote_port": _PORT, "server_port": _PORT, "connection": _SIZE}
_NGINX_TIMES = {
    # nginx writes `+01:00`; a fraction or `Z` are what programs that copy its names write
    "time_local": ("clf", _CLF_VALUE),
    "time_iso8601": ("iso", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d)"),
    "msec": ("epoch_seconds", r"\d{1,12}\.\d{3}"),
}


def _nginx_parts(spec: str) -> list[tuple[str, str | TimeField | None, str, str]]:
    pieces = []
    position = 0
    for match in _NGINX_VARIABLE.finditer(spec):
        if match.start() > position:
            text = spec[position:match.start()]
            pieces.append(("literal", None, re.escape(text), text))
        name = match.group(1) or match.group(2)
        position = match.end()
        if name in _NGINX_TIMES:
            kind, pattern = _NGINX_TIMES[name]
            pieces.append(("time", kind, f"(?P<time>{pattern})", match.group(0)))
        else:
            pieces.append(("value", _NGINX_VARIABLES.get(name), _NGINX_OWN.get(name, ""), match.group(0)))
    if position < len(spec):
        text = spec[position:]
        pieces.append(("literal", None, re.escape(text), text))
    return pieces


# ------------------------------------------------------------------ compiling

_MONTH_NAMES = {name: number for number, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}


@dataclass(frozen=True)
class _StrftimeTime:
    """A `%{format}t` time, read directive by directive; without `%z` it is in the run's zone (a
    `%Z` of UTC or GMT names UTC, any other name is left to `--log-timezone`)."""

    pattern: re.Pattern[str]
    letters: tuple[str, ...]

    @property
    def zoned(self) -> bool:
        return "z" in self.letters

    def __call__(self, text: str, zone: tzinfo) -> datetime:
        match = self.pattern.match(text)
        if match is None:
            raise LogParseError("bad-timestamp", f"{text!r} is not written as the format says")
        values = dict(zip(self.letters, match.groups()))
        try:
            moment = self._moment(values, zone)
            return to_utc(moment)
        except (ValueError, OverflowError) as error:
            raise LogParseError("bad-timestamp", f"{text!r}: {error}") from None

    @staticmethod
    def _moment(values: dict[str, str], zone: tzinfo) -> datetime:
        year = int(values["Y"]) if "Y" in values else (lambda two: two + (1900 if two >= 69 else 2000))(int(values["y"]))
        if values.get("z") == "Z":
            zone = timezone.utc
        elif "z" in values:
            offset = values["z"]
            zone = timezone((1 if offset[0] == "+" else -1) * timedelta(hours=int(offset[1:3]), minutes=int(offset[-2:])))
        elif values.get("Z", "").upper() in ("UTC", "GMT"):
            zone = timezone.utc
        clock = (int(values.get("H", 0)), int(values.get("M", 0)), int(values.get("S", 0)),
                 int((values.get("f") or "")[:6].ljust(6, "0")))
        month_name = values.get("b") or values.get("h")
        if "m" in values or month_name:
            month = int(values["m"]) if "m" in values else _MONTH_NAMES.get(month_name.lower())
            if month is None:
                raise ValueError(f"unknown month {month_name!r}")
            day = int(values.get("d") or values["e"])
            return datetime(year, month, day, *clock, tzinfo=zone)
        day_of_year = int(values["j"])
        if not 1 <= day_of_year <= 366:
            raise ValueError(f"day of the year {day_of_year} is out of range")
        return datetime(year, 1, 1, *clock, tzinfo=zone) + timedelta(days=day_of_year - 1)


@dataclass(frozen=True)
class _EpochTime:
    """`%{sec}t`, `%{msec}t`, `%{usec}t`: Unix time in the unit the format names; seconds may carry
    the fraction `%{msec_frac}t` or `%{usec_frac}t` writes after them."""

    per_second: int

    def __call__(self, text: str, zone: tzinfo) -> datetime:
        whole, _, fraction = text.partition(".")
        try:
            return EPOCH_START + timedelta(
                microseconds=int(whole) * 1_000_000 // self.per_second + int(fraction.ljust(6, "0")[:6]))
        except OverflowError:
            raise LogParseError("bad-timestamp", f"{text}: after 9999-12-31 as a unix time") from None


_TIME_KINDS = {"clf": CLF, "iso": ISO, "epoch_seconds": EPOCH_SECONDS}
_BOUNDABLE = re.compile(r"\\S\+|\[\^\\s([^\]]*)\]\+")


def _value_pattern(pieces: list, index: int) -> str:
    """A piece's pattern as it stands alone: a value between double quotes is a quoted value with
    its escapes; one right against another directive is one run of non-blanks (`_side_by_side`
    bounds it); any other takes everything up to the text after it, or to the line's end, and
    may arrive quoted."""
    piece_kind, field, pattern, _ = pieces[index]
    if piece_kind != "value" or pattern:
        return pattern
    before = pieces[index - 1] if index > 0 else None
    after = pieces[index + 1] if index + 1 < len(pieces) else None
    if field in ("status", "size"):
        return {"status": _STATUS, "size": _SIZE}[field]
    if before is not None and after is not None and before[2].endswith('"') and after[2].startswith('"'):
        return _QUOTED_VALUE
    if (before is not None and before[0] != "literal") or (after is not None and after[0] != "literal"):
        return _PLAIN_VALUE
    rest = _REQUEST_LINE if field == "request" else ".*" if after is None else _up_to(after[3])
    return f'"{_QUOTED_VALUE}"|{rest}'


def _up_to(literal: str) -> str:
    """Any text in which `literal` does not appear: a value that the first `literal` after it ends.

    Written without lookarounds, as an automaton would read it: runs without the literal's first
    character, each run of that character followed by a beginning of the rest of the literal
    and then a character that does not continue it, and at the end a run of it alone. A literal
    whose first character comes back in it (`" "`) is cut before that, so that its beginnings
    cannot overlap: the value then ends at the first `" `."""
    first = literal[0]
    again = literal.find(first, 1)
    rest = literal[1:again] if again > 0 else literal[1:]
    each, runs = re.escape(first), rf"[^{re.escape(first)}]*"
    if not rest:
        return runs
    # the next character either breaks the literal off, or starts another run of `first`
    broken = "|".join(re.escape(rest[:j]) + f"[^{re.escape(rest[j])}{each}]" for j in range(len(rest)))
    begun = "|".join(re.escape(rest[:j]) for j in range(len(rest) - 1, 0, -1))
    element = f"(?:{broken}){runs}" + (f"|{begun}" if begun else "")
    return rf"{runs}(?:{each}+(?:{element}))*(?:{each}+)?"


def _side_by_side(first: tuple, first_pattern: str, second: tuple, second_pattern: str) -> tuple[str, str]:
    """Two directives with nothing between them: the first ends where the second's first character
    is, when that is a character the first cannot hold (`$host$request_uri`: the host ends at the
    path's `/`); ValueError when no such character tells them apart."""
    if second[1] == "target":
        second_pattern = "/" + _BOUNDABLE.sub(lambda m: m.group(0)[:-1] + "*", second_pattern, count=1)
    starts = first_characters(second_pattern)
    if not last_characters(first_pattern) & starts:
        return first_pattern, second_pattern
    bound = _BOUNDABLE.fullmatch(first_pattern)
    if bound and len(starts) <= 4 and not any(c.isalnum() or c.isspace() for c in starts):
        excluded = (bound.group(1) or "") + "".join(re.escape(c) for c in sorted(starts))
        return rf"[^\s{excluded}]+", second_pattern
    raise ValueError(
        f"{first[3]} and {second[3]} are side by side with nothing between them, so a line does not say "
        "where one ends (a directive may follow another directly only when it starts with a character such "
        "as `/`, `?` or `[` that the first cannot hold)"
    )


@lru_cache(maxsize=64)
def compile_format(kind: str, spec: str) -> Layout:
    """`apache` or `nginx` and the format string -> its layout; ValueError says what is missing, or
    why its lines could not be split one way only."""
    if kind not in FORMAT_STRING_KINDS:
        raise ValueError(f"unknown format-string kind {kind!r}: give apache:FORMAT or nginx:FORMAT")
    pieces = _apache_parts(_apache_unescaped(spec)) if kind == "apache" else _nginx_parts(spec)
    patterns = [_value_pattern(pieces, index) for index in range(len(pieces))]
    for index in range(len(pieces) - 1):
        if pieces[index][0] != "literal" and pieces[index + 1][0] != "literal":
            patterns[index], patterns[index + 1] = _side_by_side(
                pieces[index], patterns[index], pieces[index + 1], patterns[index + 1])
    parts, seen, time = [], set(), None
    for (piece_kind, field, _, _), pattern in zip(pieces, patterns):
        if piece_kind == "literal":
            parts.append(pattern)
        elif piece_kind == "time":
            if time is not None:
                parts.append(pattern.replace("(?P<time>", "(?:"))
                continue
            time = field
            parts.append(pattern)
        elif field is not None and field not in seen:
            seen.add(field)
            parts.append(f"(?P<{field}>{pattern})")
        else:
            parts.append(f"(?:{pattern})")
    missing = [name for name, present in (
        ("the client address (%h, %a / $remote_addr)", "client_ip" in seen),
        ("the time (%t, %{...}t / $time_local, $time_iso8601, $msec)", time is not None),
        ("the request (%r or %m with %U / $request or $request_method with $request_uri)",
         "request" in seen or {"method", "target"} <= seen),
    ) if not present]
    if missing:
        raise ValueError(f"the {kind} format {spec!r} lacks {', '.join(missing)}")
    if "request" in seen:
        parts = [part.replace("(?P<method>", "(?:").replace("(?P<target>", "(?:").replace("(?P<query>", "(?:")
                 for part in parts]
    try:
        check_pattern("".join(parts))
    except AmbiguousPattern as error:
        raise ValueError(f"the {kind} format {spec!r} does not split a line one way only: {error}") from None
    time_field = _TIME_KINDS[time] if isinstance(time, str) else time
    return _layout(parts, time_field, client_has_port=True, header=apache_header if kind == "apache" else nginx_header,
                   quoted_values=True)
