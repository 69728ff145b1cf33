"""Access-log lines -> LogRecord, one parser per log format.

Plain Python so it can be tested directly and called once per line from a DoFn.
`parser_for(name)` returns a callable that turns one line into a `LogRecord`
or raises `LogParseError`, whose `reason` is the dead-letter reason code:

    blank             the line is empty or whitespace
    no-match          the line does not have the shape of the format
    bad-timestamp     the time field is not a valid timestamp of a supported kind
    no-request        the request line is "-" or empty: the connection ended (or
                      timed out) before a request line arrived
    not-http          the request line is not HTTP at all, e.g. a TLS handshake
                      (logged as "\\x16\\x03\\x01...") sent to a plain-HTTP port
    bad-request-line  it starts like HTTP but has no request target
    bad-target        the target is neither a path nor an http(s) URL
                      ("*", "host:443" of CONNECT, scanner junk)
    bad-json          the line is not a JSON object
    missing-field     a JSON line lacks a field the mapping requires
    bad-field         a JSON field has the wrong type
    bad-status        the status is not an HTTP status code

None of these is a crawler fetching a page, so none can receive a robots verdict;
they are dead letters, counted and kept with their raw text.

Text formats (Apache mod_log_config / nginx):
    common          %h %l %u %t "%r" %>s %b
    combined        common + "%{Referer}i" "%{User-Agent}i"
    vhost_combined  "%v:%p " + combined (the ":%p" is optional: SUSE omits it)
    host_combined   "$host " + combined (nginx)
    combined_xrt    combined + "%{X-Robots-Tag}o"
The combined family accepts one optional trailing quoted X-Forwarded-For field,
the layout of nginx's stock `main` format; in combined_xrt it sits before the
X-Robots-Tag field. Any other trailing content is a no-match, never ignored.
The host is the line's own host field, else the authority of an absolute-form
target (`GET http://host/p HTTP/1.1`), else the parser's default host, else None.

JSON formats: `jsonl` with a user mapping (our field -> dotted source path) and
the presets `cloudflare` (Logpush http_requests) and `gcp_lb` (Cloud Logging
entries of an external Application Load Balancer). Neither preset maps
X-Forwarded-For (Cloudflare's ClientIP is authoritative; the load balancer does
not log it); a `jsonl` mapping may.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from types import MappingProxyType
from typing import Any, NamedTuple
from urllib.parse import quote

from matcher.timerange import OutOfRange, to_utc

FORMATS: tuple[str, ...] = (
    "combined",
    "common",
    "vhost_combined",
    "host_combined",
    "combined_xrt",
    "jsonl",
    "cloudflare",
    "gcp_lb",
)


@dataclass(frozen=True, init=False)
class LogRecord:
    """One request as logged, with the timestamp in UTC and the host lower-cased without port.

    `target` is the request target as written; `path` is its path+?query (equal to
    `target` for origin-form, the part after the authority for absolute-form).
    `user_agent` is "" when the request carried none.
    """

    ts: datetime
    host: str | None
    client_ip: str
    method: str
    target: str
    path: str
    status: int | None
    size: int | None
    referer: str | None
    user_agent: str
    forwarded_for: str | None = None
    x_robots_tag: tuple[str, ...] = ()

    def __init__(
        self,
        ts: datetime,
        host: str | None,
        client_ip: str,
        method: str,
        target: str,
        path: str,
        status: int | None,
        size: int | None,
        referer: str | None,
        user_agent: str,
        forwarded_for: str | None = None,
        x_robots_tag: tuple[str, ...] = (),
    ) -> None:
        # One write instead of the frozen __init__'s twelve guarded setattr calls:
        # a record is built per log line and that cost was a third of a parse.
        object.__setattr__(self, "__dict__", {
            "ts": ts, "host": host, "client_ip": client_ip, "method": method,
            "target": target, "path": path, "status": status, "size": size,
            "referer": referer, "user_agent": user_agent,
            "forwarded_for": forwarded_for, "x_robots_tag": x_robots_tag,
        })


class Skim(NamedTuple):
    """What decides whether a line can be a crawler request, read without building its record."""

    client_ip: str
    forwarded_for: str | None
    ts: datetime
    user_agent: str
    match: re.Match[str]  # `record` turns it into the line's record


class LogParseError(ValueError):
    """A line that yields no record; `reason` is a short code for the dead-letter table."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message

    def __reduce__(self) -> tuple[type[LogParseError], tuple[str, str]]:
        # The default reduce passes the formatted text as the only argument,
        # which does not fit __init__; workers that pickle errors need this.
        return (type(self), (self.reason, self.message))


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
# Digit runs are bounded: int() refuses very long digit strings with a ValueError.
_DECIMAL = re.compile(r"-?\d{1,20}(?:\.\d{1,12})?\Z", re.ASCII)


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


def _json_timestamp(value: Any) -> datetime:
    """A JSON time field: unix number (or numeric string), CLF string, or ISO 8601 string."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return epoch_timestamp(value)
    if not isinstance(value, str):
        raise LogParseError("bad-timestamp", f"time is a {type(value).__name__}, not a string or number")
    text = value.strip()
    if _DECIMAL.match(text):
        return epoch_timestamp(float(text) if "." in text else int(text))
    if "/" in text:
        return clf_timestamp(text.strip("[]"))
    return iso_timestamp(text)


# ------------------------------------------------------------- field helpers

_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|.)", re.DOTALL)
_SIMPLE_ESCAPES = MappingProxyType(
    {'"': b'"', "\\": b"\\", "n": b"\n", "r": b"\r", "t": b"\t", "b": b"\b", "v": b"\v"}
)
_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")  # RFC 9110 token
_AUTHORITY_END = re.compile(r"[/?#]")
# Printable ASCII stays as written in a target; only bytes that are not valid
# UTF-8 get escaped, exactly as robots.txt normalization would escape them.
_TARGET_SAFE = "".join(chr(code) for code in range(0x20, 0x7F))


def encodable(text: str) -> str:
    r"""`text` with every lone surrogate written as its `\udXXX` escape.

    No UTF-8 writer or Beam coder accepts a lone surrogate. JSON may spell one (`"\ud800"`),
    and a line handed over as text may hold one; every line a parser reads and every string a
    JSON value contributes pass here, and come out with the escape JSON uses for it (text logs
    escape bad bytes as `\xNN` alike).
    """
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _unescape(field: str) -> bytes:
    r"""Undo log escaping: Apache's `\"` `\\` `\n` ..., and `\xHH` (Apache and nginx)."""
    out = bytearray()
    position = 0
    for match in _ESCAPE.finditer(field):
        out += field[position:match.start()].encode("utf-8", "surrogateescape")
        code = match.group(1)
        if len(code) == 3:
            out.append(int(code[1:], 16))
        else:
            out += _SIMPLE_ESCAPES.get(code) or match.group(0).encode("utf-8", "surrogateescape")
        position = match.end()
    out += field[position:].encode("utf-8", "surrogateescape")
    return bytes(out)


def _text(field: str) -> str:
    """A quoted text field (referer, user agent, header) with escapes undone."""
    if "\\" not in field:
        return field
    return _unescape(field).decode("utf-8", "backslashreplace")


def _target_text(latin1: str) -> str:
    """A target whose bytes were carried as latin-1: UTF-8 text, or %-escapes for invalid bytes."""
    raw = latin1.encode("latin-1")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return quote(raw, safe=_TARGET_SAFE)


def _split_request_line(line: str) -> tuple[str, str]:
    """`METHOD target [HTTP/x.y]` -> (method, target); the target may contain spaces."""
    method, _, rest = line.partition(" ")
    if not _METHOD.match(method):
        hint = " (a TLS handshake sent to a plain-HTTP port)" if line.startswith("\x16\x03") else ""
        raise LogParseError("not-http", f"request line is not HTTP{hint}: {line[:40]!r}")
    target, space, version = rest.rpartition(" ")
    if not space or not version.startswith("HTTP/"):
        target = rest  # HTTP/0.9 has no version; or the target itself holds a space
    if not target or target[0] == " ":
        raise LogParseError("bad-request-line", f"no request target: {line[:80]!r}")
    return method, target


def _request(field: str, escaped: bool = True) -> tuple[str, str]:
    """A logged request line -> (method, target); `escaped` for text logs, not for JSON strings."""
    if field in ("", "-"):
        raise LogParseError("no-request", "no request line was received")
    if not escaped or "\\" not in field:
        return _split_request_line(field)
    # latin-1 maps byte n to code point n, so splitting stays byte-exact whatever
    # the escaped bytes were (TLS records, broken UTF-8).
    method, target = _split_request_line(_unescape(field).decode("latin-1"))
    return method, _target_text(target)


def _target_path(target: str) -> tuple[str, str | None]:
    """Request target -> (path+?query, authority or None). Origin-form or absolute http(s) form."""
    if target[0] == "/":
        return target, None
    scheme, separator, rest = target.partition("://")
    if separator and scheme.lower() in ("http", "https"):
        end = _AUTHORITY_END.search(rest)
        cut = end.start() if end else len(rest)
        authority = rest[:cut].rpartition("@")[2]
        if authority:
            path = rest[cut:]
            return (path if path[:1] == "/" else "/" + path), authority
    raise LogParseError("bad-target", f"target is neither a path nor an http(s) URL: {target[:80]!r}")


@lru_cache(maxsize=1024)
def normalize_host(value: str | None) -> str | None:
    """Lower-case host without port; "[v6]:port" keeps its brackets; "-"/"" -> None."""
    text = (value or "").strip().lower()
    if text in ("", "-"):
        return None
    if text[0] == "[":
        end = text.find("]")
        return text[: end + 1] if end > 0 else text
    head, colon, port = text.rpartition(":")
    if colon and ":" not in head and (port.isdecimal() or not port):
        return head or None
    return text  # no port, or a bare IPv6 address


def _clean(line: str) -> str:
    """Strip line endings, stray blanks and a byte order mark; blank lines are errors."""
    text = encodable(line.strip())
    if text[:1] == "\ufeff":
        text = text[1:].lstrip()
    if not text:
        raise LogParseError("blank", "blank line")
    return text


# --------------------------------------------------------------- text formats

# Every layout defines every group below (empty when the format lacks the field),
# so one unpacking serves all formats and both patterns of a format.
_TEXT_GROUPS = (
    "host", "client_ip", "time", "method", "target", "request", "status", "size",
    "referer", "user_agent", "forwarded_for", "x_robots_tag",
)


def _escaped_field(name: str) -> str:
    # Unrolled loop: runs of plain characters, each escape consumed as a pair,
    # so `\"` stays inside the field and nothing backtracks.
    return rf'"(?P<{name}>[^"\\]*(?:\\.[^"\\]*)*)"'


def _plain_field(name: str) -> str:
    # Same fields as _escaped_field on any line that holds no `\"`: there every
    # quote ends a field. About twice as fast.
    return rf'"(?P<{name}>[^"]*)"'


_ANY_REQUEST = "(?P<method>)(?P<target>)" + _escaped_field("request")
_PLAIN_REQUEST = r'"(?P<method>[A-Z]+) (?P<target>/[^"\\ ]*) HTTP/\d(?:\.\d)?"(?P<request>)'


def _text_pattern(
    field: Callable[[str], str], request: str, *, host: bool, combined: bool, xrt: bool
) -> re.Pattern[str]:
    parts = [
        r"(?P<host>\S+) " if host else "(?P<host>)",
        r"(?P<client_ip>\S+) \S+ \S+ \[(?P<time>[^\]]*)\] ",
        request,
        r" (?P<status>\d{3}|-) (?P<size>\d{1,20}|-)",
    ]
    if combined:
        parts += [" ", field("referer"), " ", field("user_agent"), "(?: ", field("forwarded_for"), ")?"]
    else:
        parts.append("(?P<referer>)(?P<user_agent>)(?P<forwarded_for>)")
    parts.append(" " + field("x_robots_tag") if xrt else "(?P<x_robots_tag>)")
    return re.compile("".join(parts) + r"\Z", re.ASCII)


@dataclass(frozen=True)
class _TextLayout:
    r"""One Apache/nginx layout as two patterns over the same groups.

    `plain` covers the common line (origin-form target, no `\"` anywhere) with
    the request line already split; `general` covers every line of the format.
    """

    plain: re.Pattern[str]
    general: re.Pattern[str]

    @classmethod
    def of(cls, *, host: bool = False, combined: bool = True, xrt: bool = False) -> _TextLayout:
        return cls(
            _text_pattern(_plain_field, _PLAIN_REQUEST, host=host, combined=combined, xrt=xrt),
            _text_pattern(_escaped_field, _ANY_REQUEST, host=host, combined=combined, xrt=xrt),
        )


_TEXT_LAYOUTS: Mapping[str, _TextLayout] = MappingProxyType({
    "common": _TextLayout.of(combined=False),
    "combined": _TextLayout.of(),
    "vhost_combined": _TextLayout.of(host=True),
    "host_combined": _TextLayout.of(host=True),
    "combined_xrt": _TextLayout.of(xrt=True),
})


@dataclass(frozen=True)
class _TextParser:
    """Parser for one Apache/nginx text format."""

    name: str
    layout: _TextLayout
    default_host: str | None

    def __call__(self, line: str) -> LogRecord:
        text = _clean(line)
        match = self.layout.plain.match(text) if '\\"' not in text else None
        if match is None:
            match = self.layout.general.match(text)
            if match is None:
                raise LogParseError("no-match", f"line does not have the {self.name} layout")
        return self.record(match)

    def record(self, match: re.Match[str]) -> LogRecord:
        """The record of a line this layout matched (a `Skim.match` needs no more checks)."""
        (host, client_ip, time, method, target, request, status, size,
         referer, user_agent, forwarded_for, x_robots_tag) = match.group(*_TEXT_GROUPS)
        ts = clf_timestamp(time)
        if not method:
            method, target = _request(request)
        path, target_host = _target_path(target)
        return LogRecord(
            ts,
            normalize_host(host) or normalize_host(target_host) or self.default_host,
            client_ip,
            method,
            target,
            path,
            None if status == "-" else int(status),
            None if size == "-" else int(size),
            None if referer in ("", "-") else _text(referer),
            "" if user_agent == "-" else _text(user_agent),
            None if forwarded_for in (None, "", "-") else _text(forwarded_for),
            () if x_robots_tag in ("", "-") else (_text(x_robots_tag),),
        )

    def skim(self, line: str) -> Skim | None:
        """The line's sender, time and User-Agent, as `__call__` would read them; None unless the
        line surely parses: the common layout with no escape anywhere (then every field is
        taken as written, and nothing after the match can fail but the time, checked here)."""
        try:
            text = _clean(line)
        except LogParseError:
            return None
        if "\\" in text:
            return None
        match = self.layout.plain.match(text)
        if match is None:
            return None
        client_ip, time, user_agent, forwarded_for = match.group("client_ip", "time", "user_agent", "forwarded_for")
        try:
            ts = clf_timestamp(time)
        except LogParseError:
            return None
        return Skim(
            client_ip,
            None if forwarded_for in (None, "", "-") else forwarded_for,
            ts,
            "" if user_agent == "-" else user_agent,
            match,
        )


# --------------------------------------------------------------- JSON formats

JSON_FIELDS: tuple[str, ...] = (
    "ts", "client_ip", "host", "method", "target", "request", "status", "size",
    "referer", "user_agent", "forwarded_for", "x_robots_tag",
)

PRESETS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "cloudflare": MappingProxyType({
        "ts": "EdgeStartTimestamp",
        "client_ip": "ClientIP",
        "host": "ClientRequestHost",
        "method": "ClientRequestMethod",
        "target": "ClientRequestURI",
        "status": "EdgeResponseStatus",
        "size": "EdgeResponseBytes",
        "referer": "ClientRequestReferer",
        "user_agent": "ClientRequestUserAgent",
        # Present only when the Logpush job adds the header as a custom field.
        "x_robots_tag": "ResponseHeaders.x-robots-tag",
        # No forwarded_for: ClientIP is the edge's own peer address and is
        # authoritative; an X-Forwarded-For sent by the client proves nothing.
    }),
    "gcp_lb": MappingProxyType({
        "ts": "timestamp",
        "client_ip": "httpRequest.remoteIp",
        "method": "httpRequest.requestMethod",
        "target": "httpRequest.requestUrl",  # absolute URL: the host comes from it
        "status": "httpRequest.status",
        "size": "httpRequest.responseSize",
        "referer": "httpRequest.referer",
        "user_agent": "httpRequest.userAgent",
    }),
})


def _check_mapping(mapping: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Validate a field mapping and split its dotted paths once."""
    unknown = sorted(set(mapping) - set(JSON_FIELDS))
    if unknown:
        raise ValueError(f"unknown mapping fields {unknown}; known: {', '.join(JSON_FIELDS)}")
    for field, source in mapping.items():
        if not isinstance(source, str) or not source or "" in source.split("."):
            raise ValueError(f"mapping for {field!r} must be a dotted field path, got {source!r}")
    has_request = "request" in mapping or {"method", "target"} <= set(mapping)
    if not {"ts", "client_ip"} <= set(mapping) or not has_request:
        raise ValueError("a mapping needs 'ts', 'client_ip', and 'request' or both 'method' and 'target'")
    return {field: tuple(source.split(".")) for field, source in mapping.items()}


def _lookup(obj: Any, path: tuple[str, ...]) -> Any:
    """Follow a dotted path through objects (and list indexes); None when any step is missing."""
    for key in path:
        if isinstance(obj, dict):
            obj = obj.get(key)
        elif isinstance(obj, list) and key.isdecimal() and int(key) < len(obj):
            obj = obj[int(key)]
        else:
            return None
    return obj


def _json_int(value: Any, field: str, reason: str) -> int | None:
    if value is None or value in ("", "-"):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        return int(value)
    raise LogParseError(reason, f"{field} is not a whole number: {value!r}")


def _json_status(value: Any) -> int | None:
    status = _json_int(value, "status", "bad-status")
    if status is not None and not 0 <= status <= 999:
        raise LogParseError("bad-status", f"status out of range: {status}")
    return status


def _json_str(value: Any, field: str) -> str | None:
    if value is None or isinstance(value, str):
        return encodable(value) if value else None
    raise LogParseError("bad-field", f"{field} is a {type(value).__name__}, not a string")


def _json_header_values(value: Any) -> tuple[str, ...]:
    """A header field as one string or a list of values (one per header line)."""
    values = value if isinstance(value, list) else [value]
    if not all(item is None or isinstance(item, str) for item in values):
        raise LogParseError("bad-field", f"x_robots_tag is not a string or list of strings: {value!r}")
    return tuple(encodable(item) for item in values if item and item != "-")


@dataclass(frozen=True)
class _JsonParser:
    """Parser for one JSON object per line, read through a field mapping."""

    name: str
    mapping: dict[str, str]  # plain dicts, not mapping proxies: parsers are pickled to workers
    paths: dict[str, tuple[str, ...]]
    default_host: str | None

    def _required(self, values: dict[str, Any], field: str) -> Any:
        value = values.get(field)
        if value is None or value == "":
            raise LogParseError("missing-field", f"no {field} ({self.mapping[field]}) in the {self.name} record")
        return value

    def _required_str(self, values: dict[str, Any], field: str) -> str:
        return _json_str(self._required(values, field), field) or ""

    def skim(self, line: str) -> None:
        """JSON lines are always read whole: a field mapping can put any field anywhere."""
        return None

    def __call__(self, line: str) -> LogRecord:
        text = _clean(line)
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise LogParseError("bad-json", f"not JSON: {error}") from None
        if not isinstance(obj, dict):
            raise LogParseError("bad-json", f"a JSON {type(obj).__name__}, not an object")
        values = {field: _lookup(obj, path) for field, path in self.paths.items()}
        ts = _json_timestamp(self._required(values, "ts"))
        client_ip = self._required_str(values, "client_ip")
        if "request" in values:
            method, target = _request(self._required_str(values, "request"), escaped=False)
        else:
            method, target = self._required_str(values, "method"), self._required_str(values, "target")
        path, target_host = _target_path(target)
        host = _json_str(values.get("host"), "host")
        return LogRecord(
            ts,
            normalize_host(host) or normalize_host(target_host) or self.default_host,
            client_ip,
            method,
            target,
            path,
            _json_status(values.get("status")),
            _json_int(values.get("size"), "size", "bad-field"),
            _json_str(values.get("referer"), "referer"),
            _json_str(values.get("user_agent"), "user_agent") or "",
            _json_str(values.get("forwarded_for"), "forwarded_for"),
            _json_header_values(values.get("x_robots_tag")),
        )


# ---------------------------------------------------------------- entry point


def parser_for(
    format_name: str, default_host: str | None = None, mapping: Mapping[str, str] | None = None
) -> Callable[[str], LogRecord]:
    """The line parser for a format named in FORMATS.

    `default_host` fills the host of lines that carry none (neither a host field
    nor an absolute-form target). `mapping` (our field -> dotted source path) is
    required for `jsonl`, extends or overrides a preset's, and is refused for text formats.
    """
    host = normalize_host(default_host)
    if format_name in _TEXT_LAYOUTS:
        if mapping:
            raise ValueError(f"format {format_name!r} is not JSON and takes no field mapping")
        return _TextParser(format_name, _TEXT_LAYOUTS[format_name], host)
    if format_name == "jsonl" or format_name in PRESETS:
        if format_name == "jsonl" and not mapping:
            raise ValueError("format 'jsonl' needs a field mapping (our field -> source field path)")
        merged = {**PRESETS.get(format_name, {}), **(mapping or {})}
        return _JsonParser(format_name, merged, _check_mapping(merged), host)
    raise ValueError(f"unknown log format {format_name!r}; known formats: {', '.join(FORMATS)}")
