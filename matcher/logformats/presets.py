"""Text presets of load balancers, proxies, CDNs and object stores: one pattern of named groups
per layout, read into the same record as the Apache/nginx formats.

Each layout follows its vendor's documentation of the default format (docs/inputs.md names
the fields each uses). A layout's pattern matches the fields it reads and the documented fields
before them; fields a vendor may append later are allowed after the last one read, as AWS says
its access logs grow at the end.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from types import MappingProxyType

from matcher.addresses import parse_ip
from matcher.logformats.envelopes import SYSLOG_HEADER
from matcher.logformats.fields import (
    cleaned_line, logged_host, request_host, request_line, signed_headers, target_path, unescaped_text,
)
from matcher.logformats.record import LogParseError, LogRecord, SignedHeaders, logged_size, logged_status
from matcher.logformats.timestamps import (
    clf_timestamp, epoch_timestamp, iso_timestamp, local_timestamp, unix_seconds_timestamp,
)

# ------------------------------------------------------------------ pieces of patterns

_QUOTED = r'"(?P<{}>[^"\\]*(?:\\.[^"\\]*)*)"'
_ANY = r"\S+"
_REST = r"(?: .*)?"  # fields a vendor appends after the last one read


def _quoted(name: str) -> str:
    return _QUOTED.format(name)


def without_port(text: str) -> str:
    """`a.b.c.d:port` or `[v6]:port` -> the address, as `addresses.parse_ip` reads it; `client:port`
    fields of IPv6 peers are written unbracketed by some vendors, so a colon-rich text that is no
    address loses its last part. A text that names no address is left as it is."""
    address = parse_ip(text)
    if address is None and text.count(":") > 1:
        address = parse_ip(text.rpartition(":")[0])
    return text if address is None else str(address)


@dataclass(frozen=True)
class TimeField:
    """How a layout writes its time: the groups holding it and the reader of their text."""

    groups: tuple[str, ...]
    read: Callable[..., datetime]
    zoned: bool = True  # False: the text carries no zone; `--log-timezone` says which it is


def _iso(text: str, zone: tzinfo) -> datetime:
    return iso_timestamp(text)


def _clf(text: str, zone: tzinfo) -> datetime:
    return clf_timestamp(text)


def _epoch(text: str, zone: tzinfo) -> datetime:
    try:
        return epoch_timestamp(float(text) if "." in text else int(text))
    except ValueError:
        raise LogParseError("bad-timestamp", f"not a unix time: {text!r}") from None


def _epoch_seconds(text: str, zone: tzinfo) -> datetime:
    return unix_seconds_timestamp(text)


def _clf_without_zone(text: str, zone: tzinfo) -> datetime:
    return local_timestamp(text, zone)


def _clf_spaced_without_zone(text: str, zone: tzinfo) -> datetime:
    """`21/Sep/2021 08:53:53`: CLF's date and clock with a space between them, no zone."""
    return local_timestamp(text.replace(" ", ":", 1), zone)


@dataclass(frozen=True)
class Layout:
    """One preset: its pattern, its time, and how its fields are written."""

    pattern: re.Pattern[str]
    time: TimeField
    client_has_port: bool = False
    # The request's URL is the one the program itself wrote down (a load balancer's
    # `scheme://host:port/uri`, a proxy's URL), so its host is the logged host.
    target_is_logged_url: bool = False
    # how the server escapes a header it logs (`fields.nginx_header`, `fields.apache_header`), for
    # the signature headers, which must come back byte for byte
    header: Callable[[str], str | None] | None = None
    # A value may arrive in double quotes the format did not write (`fwd="1.2.3.4"`): its group
    # then holds them, and they are not the value's.
    quoted_values: bool = False


def _layout(parts: list[str], time: TimeField, **options) -> Layout:
    """One pattern, its flags and anchors written inside it, so that RE2 (a vectorized reader) runs
    it as it is: RE2's `\\d \\s \\w` are ASCII, and `$` is the end of a line cleaned of its ending."""
    return Layout(re.compile("(?s)^" + "".join(parts) + "$", re.ASCII), time, **options)


ISO = TimeField(("time",), _iso)
CLF = TimeField(("time",), _clf)
EPOCH = TimeField(("time",), _epoch)
EPOCH_SECONDS = TimeField(("time",), _epoch_seconds)
LOCAL_CLF = TimeField(("time",), _clf_without_zone, zoned=False)
LOCAL_CLF_SPACED = TimeField(("time",), _clf_spaced_without_zone, zoned=False)
# The syslog header a daemon writes in front of an HAProxy line, part of the line's one pattern.
_SYSLOG_PREFIX = f"(?:{SYSLOG_HEADER.pattern})?"

LAYOUTS: Mapping[str, Layout] = MappingProxyType({
    # AWS Application Load Balancer access log entry (docs.aws.amazon.com, "Access log entries").
    "aws_alb": _layout([
        r"(?:http|https|h2|grpcs|ws|wss) (?P<time>\S+) \S+ (?P<client_ip>\S+) \S+ \S+ \S+ \S+ ",
        r"(?P<status>\d{3}|-) \S+ \S+ (?P<size>\d{1,20}|-) ", _quoted("request"), " ", _quoted("user_agent"), _REST,
    ], ISO, client_has_port=True, target_is_logged_url=True),
    # Classic Load Balancer access log entry (docs.aws.amazon.com, "Access logs for your Classic Load Balancer").
    "aws_elb": _layout([
        r"(?P<time>\d{4}-\S+) \S+ (?P<client_ip>\S+) \S+ \S+ \S+ \S+ (?P<status>\d{3}|-) \S+ \S+ (?P<size>\d{1,20}|-) ",
        _quoted("request"), " ", _quoted("user_agent"), _REST,
    ], ISO, client_has_port=True, target_is_logged_url=True),
    # Amazon S3 server access log record (docs.aws.amazon.com, "Amazon S3 server access log format").
    "aws_s3": _layout([
        r"\S+ \S+ \[(?P<time>[^\]]*)\] (?P<client_ip>\S+) \S+ \S+ \S+ \S+ ", _quoted("request"),
        r" (?P<status>\d{3}|-) \S+ (?P<size>\d{1,20}|-) \S+ \S+ \S+ ", _quoted("referer"), " ", _quoted("user_agent"),
        r"(?: \S+ \S+ \S+ \S+ \S+ (?P<host>\S+))?", _REST,
    ], CLF),
    # HAProxy `option httplog` (HAProxy configuration manual, 8.2.3 "HTTP log format"), with or
    # without the syslog header in front of it (`Feb  6 12:14:14 host haproxy[1]: `): the header's
    # time is the line's arrival; the line's own accept date is the one read.
    "haproxy": _layout([
        _SYSLOG_PREFIX, r"(?P<client_ip>\S+) \[(?P<time>[^\]]*)\] \S+ \S+ \S+ (?P<status>-?\d{1,3}) (?P<size>\+?\d{1,20}) ",
        r"\S+ \S+ \S+ \S+ \S+ (?:\{[^}]*\} ){0,2}", _quoted("request"), _REST,
    ], LOCAL_CLF, client_has_port=True),
    # Python's http.server (BaseHTTPRequestHandler.log_request) and Werkzeug's development server,
    # which writes the same line: `client - - [dd/Mon/yyyy HH:MM:SS] "request" status size`, the
    # server's local time with no zone.
    "python_http": _layout([
        r"(?P<client_ip>\S+) \S+ \S+ \[(?P<time>\d\d/[A-Za-z]{3}/\d{4} \d\d:\d\d:\d\d)\] ", _quoted("request"),
        r" (?P<status>\d{3}) (?P<size>\d{1,20}|-)",
    ], LOCAL_CLF_SPACED),
    # Traefik access log in its default Common Log Format (doc.traefik.io, "Access Logs").
    "traefik": _layout([
        r"(?P<client_ip>\S+) \S+ \S+ \[(?P<time>[^\]]*)\] ", _quoted("request"),
        # an empty Referer is written bare: `-`
        r" (?P<status>\d{3}|-) (?P<size>\d{1,20}|-) (?:", _quoted("referer"), "|-) ", _quoted("user_agent"),
        r' \d+ "[^"]*" "[^"]*" \d+ms',
    ], CLF),
    # Squid native access.log (wiki.squid-cache.org, "Squid native access.log format in detail").
    "squid": _layout([
        r"(?P<time>\d{1,12}\.\d{1,6}) +\d+ (?P<client_ip>\S+) \S+/(?P<status>\d{3}) (?P<size>\d{1,20}) ",
        # Apache Traffic Server's `squid` format appends a field of its own
        r"(?P<request>\S+ \S+) \S+ \S+ \S+", _REST,
    ], EPOCH_SECONDS, target_is_logged_url=True),
})


@dataclass(frozen=True)
class PresetParser:
    """Parser for one text preset."""

    name: str
    layout: Layout
    default_host: str | None
    zone: tzinfo

    def skim(self, line: str) -> None:
        """Preset lines are always read whole."""
        return None

    def __call__(self, line: str) -> LogRecord:
        text = cleaned_line(line)
        layout = self.layout
        match = layout.pattern.match(text)
        if match is None:
            raise LogParseError("no-match", f"line does not have the {self.name} layout")
        groups = match.groupdict()
        if layout.quoted_values:
            groups = {name: _unquoted(value) for name, value in groups.items()}
        ts = layout.time.read(*(groups[name] for name in layout.time.groups), self.zone)
        request = groups.get("request")
        if request is not None:
            method, target = request_line(request)
        else:
            method, target = groups["method"], groups["target"]
            if method in ("", "-") or target in ("", "-"):
                raise LogParseError("no-request", "no request line was received")
            query = groups.get("query")
            if query and query != "-":
                target += query if query[0] == "?" else "?" + query
        path, target_host = target_path(target)
        # A line whose client is empty or `-` is still a request, from a client it does not name
        # (a claimed crawler's identity is then unverified), as in W3C files.
        client_ip = groups["client_ip"] or "-"
        if layout.client_has_port:
            client_ip = without_port(client_ip)
        status = groups.get("status")
        size = groups.get("size")
        referer = groups.get("referer")
        user_agent = groups.get("user_agent")
        forwarded_for = groups.get("forwarded_for")
        return LogRecord(
            ts,
            request_host(target_host if layout.target_is_logged_url else groups.get("host"), self.default_host),
            client_ip,
            method,
            target,
            path,
            logged_status(status),
            logged_size(size),
            None if referer in (None, "", "-") else unescaped_text(referer),
            "" if user_agent in (None, "-") else unescaped_text(user_agent),
            None if forwarded_for in (None, "", "-") else unescaped_text(forwarded_for),
            target_host=logged_host(target_host),
            signed=_signed(groups, layout.header, target_host) if layout.header is not None else None,
            content_usage=_response_header(groups, "content_usage", layout.header),
            retry_after=_response_header(groups, "retry_after", layout.header),
        )


def _unquoted(value: str | None) -> str | None:
    if value is not None and len(value) > 1 and value[0] == '"' and value[-1] == '"':
        return value[1:-1]
    return value


def _response_header(groups: dict, name: str, header: Callable[[str], str | None] | None) -> str | None:
    """A response header a format string logs (Content-Usage, Retry-After), unescaped as its
    server wrote it."""
    value = groups.get(name)
    if value in (None, "", "-"):
        return None
    return header(value) if header is not None else value


def _signed(groups: dict, header: Callable[[str], str | None], target_host: str | None) -> SignedHeaders | None:
    """The signature headers the line carries, each unescaped as its server wrote it, with the
    Host as logged (port included) for `@authority`."""
    given, signature, agent = groups.get("signature_input"), groups.get("signature"), groups.get("signature_agent")
    if given is None and signature is None and agent is None:
        return None
    host = groups.get("host")
    return signed_headers(
        target_host if host in (None, "", "-") else host,
        None if agent is None else header(agent),
        None if given is None else header(given),
        None if signature is None else header(signature),
        "signature_agent" in groups,
    )
