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
from datetime import datetime, timezone, tzinfo
from functools import lru_cache

from matcher.logformats.fields import apache_header, nginx_header
from matcher.logformats.presets import CLF, EPOCH, ISO, Layout, TimeField, _layout
from matcher.logformats.record import LogParseError

__all__ = ["FORMAT_STRING_KINDS", "PASTE_YOUR_FORMAT", "compile_format"]

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

# --------------------------------------------------------------------- Apache

_APACHE_DIRECTIVE = re.compile(r"%(?:!?\d{3}(?:,\d{3})*)?[<>]?(?:\{([^}]*)\})?([a-zA-Z%])")
_APACHE_HEADERS = {
    "referer": "referer", "user-agent": "user_agent", "host": "host", "x-forwarded-for": "forwarded_for",
    "signature-agent": "signature_agent", "signature-input": "signature_input", "signature": "signature",
}
_APACHE_RESPONSE_HEADERS = {"content-usage": "content_usage"}
_APACHE_LETTERS = {
    "h": "client_ip", "a": "client_ip", "r": "request", "s": "status", "b": "size", "B": "size", "O": "size",
    "v": "host", "V": "host", "m": "method", "U": "target", "q": "query",
}
# strftime directives of `%{...}t` -> (pattern, strptime directive)
_STRFTIME = {
    "Y": r"\d{4}", "m": r"\d\d", "d": r"\d\d", "e": r"[ \d]\d", "H": r"\d\d", "M": r"\d\d", "S": r"\d\d",
    "b": r"[A-Za-z]{3}", "h": r"[A-Za-z]{3}", "z": r"[+-]\d{4}", "y": r"\d\d", "j": r"\d{3}",
    "T": r"\d\d:\d\d:\d\d", "F": r"\d{4}-\d\d-\d\d", "Z": r"[A-Z]{1,5}",
}


def _apache_parts(spec: str) -> list[tuple[str, str | None, str]]:
    """A LogFormat -> (kind, our field or None, pattern) pieces; kind "literal" or "value"."""
    pieces = []
    position = 0
    for match in _APACHE_DIRECTIVE.finditer(spec):
        if match.start() > position:
            pieces.append(("literal", None, re.escape(spec[position:match.start()])))
        argument, letter = match.groups()
        position = match.end()
        if letter == "%":
            pieces.append(("literal", None, "%"))
        elif letter == "t":
            pieces.append(_apache_time(argument))
        elif letter == "i" and argument is not None:
            pieces.append(("value", _APACHE_HEADERS.get(argument.lower()), ""))
        elif letter == "o" and argument is not None:
            pieces.append(("value", _APACHE_RESPONSE_HEADERS.get(argument.lower()), ""))
        elif letter == "a" and argument == "c":
            pieces.append(("value", None, ""))  # the TCP peer; %a is the client
        elif argument is None and letter in _APACHE_LETTERS:
            # %U is the path alone and %q its "?query" or nothing, often written as one: %U%q
            own = {"U": r"[^\s?]+", "q": r"(?:\?\S*)?"}.get(letter, "")
            pieces.append(("value", _APACHE_LETTERS[letter], own))
        else:
            pieces.append(("value", None, ""))
    if position < len(spec):
        pieces.append(("literal", None, re.escape(spec[position:])))
    return pieces


def _apache_time(argument: str | None) -> tuple[str, str | None, str]:
    if argument is None:
        return ("time", "clf", r"\[(?P<time>" + _CLF_VALUE + r")\]")
    text = argument
    for prefix in ("begin:", "end:"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    if text in ("sec", "msec", "usec", "msec_frac", "usec_frac"):
        if text.endswith("_frac"):
            raise ValueError(f"%{{{argument}}}t is a fraction of a second alone; log %t or %{{sec}}t too")
        return ("time", "epoch", r"(?P<time>\d{1,20})")
    pattern, directives = [], []
    position = 0
    for match in re.finditer(r"%(.)", text):
        pattern.append(re.escape(text[position:match.start()]))
        letter = match.group(1)
        if letter not in _STRFTIME:
            raise ValueError(f"%{{{argument}}}t: the time directive %{letter} is not supported")
        pattern.append(_STRFTIME[letter])
        directives.append(letter)
        position = match.end()
    pattern.append(re.escape(text[position:]))
    kind = "strftime-zoned" if "z" in directives else "strftime"
    return ("time", f"{kind}:{text}", "(?P<time>" + "".join(pattern) + ")")


# ---------------------------------------------------------------------- nginx

_NGINX_VARIABLE = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")
_NGINX_VARIABLES = {
    "remote_addr": "client_ip", "realip_remote_addr": None, "request": "request", "status": "status",
    "body_bytes_sent": "size", "bytes_sent": "size", "http_referer": "referer", "http_user_agent": "user_agent",
    "http_x_forwarded_for": "forwarded_for", "host": "host", "http_host": "host", "server_name": "host",
    "request_method": "method", "request_uri": "target",
    "http_signature_agent": "signature_agent", "http_signature_input": "signature_input", "http_signature": "signature",
    "sent_http_content_usage": "content_usage",
}
_NGINX_TIMES = {
    "time_local": ("clf", _CLF_VALUE), "time_iso8601": ("iso", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"),
    "msec": ("epoch", r"\d{1,12}\.\d{3}"),
}


def _nginx_parts(spec: str) -> list[tuple[str, str | None, str]]:
    pieces = []
    position = 0
    for match in _NGINX_VARIABLE.finditer(spec):
        if match.start() > position:
            pieces.append(("literal", None, re.escape(spec[position:match.start()])))
        name = match.group(1) or match.group(2)
        position = match.end()
        if name in _NGINX_TIMES:
            kind, pattern = _NGINX_TIMES[name]
            pieces.append(("time", kind, f"(?P<time>{pattern})"))
        else:
            pieces.append(("value", _NGINX_VARIABLES.get(name), ""))
    if position < len(spec):
        pieces.append(("literal", None, re.escape(spec[position:])))
    return pieces


# ------------------------------------------------------------------ compiling

@dataclass(frozen=True)
class _StrftimeTime:
    """A `%{format}t` time read with strptime; without `%z` it is in the run's zone."""

    format: str
    zoned: bool

    def __call__(self, text: str, zone: tzinfo) -> datetime:
        try:
            moment = datetime.strptime(text, self.format)
        except ValueError as error:
            raise LogParseError("bad-timestamp", f"{text!r}: {error}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
        try:
            return moment.astimezone(timezone.utc)
        except (OverflowError, ValueError):
            raise LogParseError("bad-timestamp", f"{text}: outside the datetime range once in UTC") from None


_TIME_KINDS = {"clf": CLF, "iso": ISO, "epoch": EPOCH}


@lru_cache(maxsize=64)
def compile_format(kind: str, spec: str) -> Layout:
    """`apache` or `nginx` and the format string -> its layout; ValueError says what is missing."""
    if kind not in FORMAT_STRING_KINDS:
        raise ValueError(f"unknown format-string kind {kind!r}: give apache:FORMAT or nginx:FORMAT")
    pieces = _apache_parts(spec) if kind == "apache" else _nginx_parts(spec)
    parts, seen, time = [], set(), None
    for index, (piece_kind, field, pattern) in enumerate(pieces):
        if piece_kind == "literal":
            parts.append(pattern)
        elif piece_kind == "time":
            if time is not None:
                parts.append(pattern.replace("(?P<time>", "(?:"))
                continue
            time = field
            parts.append(pattern)
        else:
            quoted = index > 0 and pieces[index - 1][2].endswith('"')
            value = pattern or (
                _QUOTED_VALUE if quoted else {"status": _STATUS, "size": _SIZE}.get(field or "", _PLAIN_VALUE)
            )
            if field is not None and field not in seen:
                seen.add(field)
                parts.append(f"(?P<{field}>{value})")
            else:
                parts.append(f"(?:{value})")
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
    if time in _TIME_KINDS:
        time_field = _TIME_KINDS[time]
    else:
        strftime_kind, _, text = time.partition(":")
        time_field = TimeField(("time",), _StrftimeTime(text, strftime_kind.endswith("zoned")),
                               zoned=strftime_kind.endswith("zoned"))
    return _layout(parts, time_field, client_has_port=True, header=apache_header if kind == "apache" else nginx_header)
