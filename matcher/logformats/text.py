"""The Apache and nginx text formats: one layout of two patterns each, and its parser; and the one
pattern of every text format (`line_pattern`), for readers that run it elsewhere."""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from matcher.logformats.fields import (
    cleaned_line, logged_host, request_host, request_line, target_path, unescaped_text,
)
from matcher.logformats.record import LogParseError, LogRecord, Skim, logged_size, logged_status
from matcher.logformats.timestamps import clf_timestamp

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
    field: Callable[[str], str], request: str, *, host: str | None, combined: bool, xrt: bool,
    duration: bool, seconds: bool,
) -> re.Pattern[str]:
    parts = [
        r"(?P<host>\S+) " if host == "first" else "",
        r"(?P<client_ip>\S+) ",
        r"(?P<host>\S+) \S+ " if host == "ident" else r"\S+ \S+ ",
        r"\[(?P<time>[^\]]*)\] ",
        r"\([0-9A-Za-z ]*\) " if duration else "",
        request,
        r" (?P<status>\d{3}|-) (?P<size>\d{1,20}|-)",
    ]
    if host is None:
        parts.insert(0, "(?P<host>)")
    if combined:
        parts += [" ", field("referer"), " ", field("user_agent")]
        # a program that writes its own field after the User-Agent logs no X-Forwarded-For there
        parts.append(r" \d{1,20}(?P<forwarded_for>)" if seconds else "(?: " + field("forwarded_for") + ")?")
    else:
        parts.append("(?P<referer>)(?P<user_agent>)(?P<forwarded_for>)")
    parts.append(" " + field("x_robots_tag") if xrt else "(?P<x_robots_tag>)")
    # anchored inside the pattern, `$` for the end (cleaned lines end in no newline): RE2 reads it as it is
    return re.compile("^" + "".join(parts) + "$", re.ASCII)


# Formats whose lines are another's: varnishncsa's default format is Apache's combined, its
# targets absolute URLs.
ALIASES: Mapping[str, str] = MappingProxyType({"varnishncsa": "combined"})


@dataclass(frozen=True)
class TextLayout:
    r"""One Apache/nginx layout as two patterns over the same groups.

    `plain` covers the common line (origin-form target, no `\"` anywhere) with
    the request line already split; `general` covers every line of the format.
    """

    plain: re.Pattern[str]
    general: re.Pattern[str]

    @classmethod
    def of(cls, *, host: str | None = None, combined: bool = True, xrt: bool = False,
           duration: bool = False, seconds: bool = False) -> TextLayout:
        """`host`: "first" (a field before the client's) or "ident" (in the identd field's place);
        `duration`: a `(0 s)` before the request; `seconds`: a number after the User-Agent."""
        shape = {"host": host, "combined": combined, "xrt": xrt, "duration": duration, "seconds": seconds}
        return cls(
            _text_pattern(_plain_field, _PLAIN_REQUEST, **shape),
            _text_pattern(_escaped_field, _ANY_REQUEST, **shape),
        )


# combined with the Host where combined has the identd user: lighttpd's default `%h %V %u %t ...`
_HOST_FOR_IDENT = TextLayout.of(host="ident")

TEXT_LAYOUTS: Mapping[str, TextLayout] = MappingProxyType({
    "common": TextLayout.of(combined=False),
    "combined": TextLayout.of(),
    "vhost_combined": TextLayout.of(host="first"),
    # Apache's stock `LogFormat "%v %h %l %u %t \"%r\" %>s %b" vhost_common`: no User-Agent
    "vhost_common": TextLayout.of(host="first", combined=False),
    "host_combined": TextLayout.of(host="first"),
    "combined_xrt": TextLayout.of(xrt=True),
    # Gandi Simple Hosting: the Host, then combined with the time taken, `(0 s)`, before the request
    "gandi": TextLayout.of(host="first", duration=True),
    # lighttpd mod_accesslog's default format
    "lighttpd": _HOST_FOR_IDENT,
    # OVH web hosting writes the same layout
    "ovh": _HOST_FOR_IDENT,
    # Icecast 2 access.log: combined and the seconds the listener stayed connected
    "icecast2": TextLayout.of(seconds=True),
})


def line_pattern(format_name: str) -> re.Pattern[str]:
    """The one pattern a text format reads a line with: a preset, an Apache/nginx format, or a
    format string (`nginx:...`). Its named groups are the fields, each name once; it is anchored
    and carries its flags inside, and stays in the subset RE2 runs as it is (no lookaround, no
    backreference), so a vectorized reader (`pyarrow.compute.extract_regex`) splits a cleaned
    line (`fields.cleaned_line`) as the parser does. ValueError: the format is not one pattern
    (JSON, W3C, an envelope)."""
    from matcher.logformats.format_string import FORMAT_STRING_KINDS, compile_format
    from matcher.logformats.presets import LAYOUTS

    kind, colon, spec = format_name.partition(":")
    if colon and kind in FORMAT_STRING_KINDS:
        return compile_format(kind, spec).pattern
    name = ALIASES.get(format_name, format_name)
    if name in TEXT_LAYOUTS:
        return TEXT_LAYOUTS[name].general
    if name in LAYOUTS:
        return LAYOUTS[name].pattern
    raise ValueError(f"{format_name!r} is not a text format read by one pattern")


@dataclass(frozen=True)
class TextParser:
    """Parser for one Apache/nginx text format."""

    name: str
    layout: TextLayout
    default_host: str | None
    # The request line is one the server wrote itself from the request (varnishncsa's `%r` is
    # `GET http://HOST/path`, HOST from the Host header), so its host is the logged host.
    target_is_logged_url: bool = False

    def __call__(self, line: str) -> LogRecord:
        text = cleaned_line(line)
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
            method, target = request_line(request)
        path, target_host = target_path(target)
        return LogRecord(
            ts,
            request_host(target_host if self.target_is_logged_url and not host else host, self.default_host),
            client_ip,
            method,
            target,
            path,
            logged_status(status),
            logged_size(size),
            None if referer in ("", "-") else unescaped_text(referer),
            "" if user_agent == "-" else unescaped_text(user_agent),
            None if forwarded_for in (None, "", "-") else unescaped_text(forwarded_for),
            () if x_robots_tag in ("", "-") else (unescaped_text(x_robots_tag),),
            logged_host(target_host),
        )

    def audited_host(self, match: re.Match[str]) -> str | None:
        """The `host` of the record of a line this layout matched, without building the record
        when the line logs its host itself."""
        host = match.group("host")
        if self.target_is_logged_url and not host:
            return self.record(match).host
        return request_host(host, self.default_host)

    def skim(self, line: str) -> Skim | None:
        """The line's sender, time and User-Agent, as `__call__` would read them; None unless the
        line surely parses: the common layout with no escape anywhere (then every field is
        taken as written, and nothing after the match can fail but the time, checked here)."""
        try:
            text = cleaned_line(line)
        except LogParseError:
            return None
        if "\\" in text:
            return None
        match = self.layout.plain.match(text)
        if match is None:
            return None
        client_ip, time, user_agent, forwarded_for, referer = match.group(
            "client_ip", "time", "user_agent", "forwarded_for", "referer"
        )
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
            None if referer in (None, "", "-") else referer,
        )
