"""The server's own format string, compiled into a layout: `apache:` + a mod_log_config
`LogFormat`, or `nginx:` + a `log_format`, pasted from the server's configuration.

Each directive (`%h`, `%{User-Agent}i`, `$remote_addr`, ...) becomes a pattern group; the text
between directives must appear as written. A directive between double quotes may hold spaces
(and the escapes both servers write), one outside them is one run of non-blanks. Directives the
audit does not use are matched and skipped. A format that lacks the client address, the time
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
_PLAIN_VALUE = r"\S+"
_CLF_VALUE = r"\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}"
_STATUS = r"\d{3}|-"
_SIZE = r"\d{1,20}|-"
# Values of a known form are read as that form, so that the text after them ends them in one place:
# a scheme holds no `:` (`$scheme://$host`), a port or a duration no other character.
_PORT = r"\d{1,5}|-"
_SCHEME = r"[A-Za-z][A-Za-z0-9+.\-]{0,31}"

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
    "S": r"(\d\d)", "b": r"([A-Za-z]{3})", "h": r"([A-Za-z]{3})", "z": r"([+-]\d{4})", "y": r"(\d\d)",
    "j": r"(\d{3})", "Z": r"([A-Za-z]{1,5})",
}
_STRFTIME_SHORTHANDS = {"T": "%H:%M:%S", "F": "%Y-%m-%d", "D": "%m/%d/%y", "R": "%H:%M"}
_EPOCH_UNITS = {"sec": 1, "msec": 1_000, "usec": 1_000_000}
TIME_DIRECTIVES = frozenset({*_STRFTIME, *_STRFTIME_SHORTHANDS})  # what `%{...}t` may hold


def _apache_unescaped(spec: str) -> str:
    """A LogFormat as the server reads it: pasted from the configuration with its surrounding
    quotes and `\"` escapes, it is the text between the quotes with each `\"` a quote."""
    text = spec.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and text[-2] != "\\":
        text = text[1:-1]
    return text.replace('\\"', '"') if '\\"' in text else text


def _apache_parts(spec: str) -> list[tuple[str, str | None, str, str]]:
    """A LogFormat -> (kind, our field or None, pattern, directive) pieces; kind "literal",
    "time" or "value"."""
    pieces = []
    position = 0
    for match in _APACHE_DIRECTIVE.finditer(spec):
        if match.start() > position:
            pieces.append(("literal", None, re.escape(spec[position:match.start()]), ""))
        argument, letter = match.groups()
        position = match.end()
        directive = match.group(0)
        if letter == "%":
            pieces.append(("literal", None, "%", directive))
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
        pieces.append(("literal", None, re.escape(spec[position:]), ""))
    return pieces


def _apache_time(argument: str | None) -> tuple[str, str | TimeField, str]:
    if argument is None:
        return ("time", "clf", r"\[(?P<time>" + _CLF_VALUE + r")\]")
    text = argument
    for prefix in ("begin:", "end:"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    if text in ("sec", "msec", "usec", "msec_frac", "usec_frac"):
        if text.endswith("_frac"):
            raise ValueError(f"%{{{argument}}}t is a fraction of a second alone; log %t or %{{sec}}t too")
        return ("time", TimeField(("time",), _EpochTime(_EPOCH_UNITS[text])), r"(?P<time>\d{1,20})")
    for shorthand, written in _STRFTIME_SHORTHANDS.items():
        text = text.replace("%" + shorthand, written)
    pattern, visible, letters = [], [], []
    position = 0
    for match in re.finditer(r"%(.)", text, re.DOTALL):
        pattern.append(re.escape(text[position:match.start()]))
        visible.append(pattern[-1])
        letter = match.group(1)
        if letter == "%":
            pattern.append("%")
            visible.append("%")
        elif letter in _STRFTIME:
            pattern.append(_STRFTIME[letter])
            visible.append("(?:" + _STRFTIME[letter][1:])
            letters.append(letter)
        else:
            raise ValueError(f"%{{{argument}}}t: the time directive %{letter} is not supported")
        position = match.end()
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
    "time_local": ("clf", _CLF_VALUE), "time_iso8601": ("iso", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"),
    "msec": ("epoch_seconds", r"\d{1,12}\.\d{3}"),
}


def _nginx_parts(spec: str) -> list[tuple[str, str | TimeField | None, str, str]]:
    pieces = []
    position = 0
    for match in _NGINX_VARIABLE.finditer(spec):
        if match.start() > position:
            pieces.append(("literal", None, re.escape(spec[position:match.start()]), ""))
        name = match.group(1) or match.group(2)
        position = match.end()
        if name in _NGINX_TIMES:
            kind, pattern = _NGINX_TIMES[name]
            pieces.append(("time", kind, f"(?P<time>{pattern})", match.group(0)))
        else:
            pieces.append(("value", _NGINX_VARIABLES.get(name), _NGINX_OWN.get(name, ""), match.group(0)))
    if position < len(spec):
        pieces.append(("literal", None, re.escape(spec[position:]), ""))
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
        if "z" in values:
            offset = values["z"]
            zone = timezone((1 if offset[0] == "+" else -1) * timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])))
        elif values.get("Z", "").upper() in ("UTC", "GMT"):
            zone = timezone.utc
        clock = (int(values.get("H", 0)), int(values.get("M", 0)), int(values.get("S", 0)))
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
    """`%{sec}t`, `%{msec}t`, `%{usec}t`: Unix time in the unit the format names."""

    per_second: int

    def __call__(self, text: str, zone: tzinfo) -> datetime:
        try:
            return EPOCH_START + timedelta(microseconds=int(text) * 1_000_000 // self.per_second)
        except OverflowError:
            raise LogParseError("bad-timestamp", f"{text}: after 9999-12-31 as a unix time") from None


_TIME_KINDS = {"clf": CLF, "iso": ISO, "epoch_seconds": EPOCH_SECONDS}
_BOUNDABLE = re.compile(r"\\S\+|\[\^\\s([^\]]*)\]\+")


def _value_pattern(pieces: list, index: int) -> str:
    """A piece's pattern as it stands alone: a value between double quotes may hold spaces and
    escapes, any other is one run of non-blanks."""
    piece_kind, field, pattern, _ = pieces[index]
    if piece_kind != "value" or pattern:
        return pattern
    quoted = (0 < index < len(pieces) - 1 and pieces[index - 1][2].endswith('"')
              and pieces[index + 1][2].startswith('"'))
    return _QUOTED_VALUE if quoted else {"status": _STATUS, "size": _SIZE}.get(field or "", _PLAIN_VALUE)


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
    return _layout(parts, time_field, client_has_port=True, header=apache_header if kind == "apache" else nginx_header)
