"""W3C extended log files (W3C Working Draft WD-logfile-960323; IIS, CloudFront standard logs,
NetScaler, Imperva Incapsula): the fields are named by the file's own `#Fields:` directive.

A server that restarts, or is reconfigured, writes its directives again and may change the
fields; every `#Fields:` line replaces the last. Directive lines are the server's own and carry
no request: they are counted as not-requests (`directive`). A data line before any `#Fields:`
is read with the default fields of the layout (IIS's, or CloudFront's), so a batch cut from the
middle of a file still reads; the field count must agree.

Times are `date` + `time`, UTC by the W3C definition (IIS's W3C logs are UTC whatever the
server's zone); IIS Advanced Logging may log only the server's clock, `date-local` + `time-local`,
read in the zone it is given (`--log-timezone`). Values are separated by runs of spaces (IIS,
NetScaler, writers that pad columns) or by tabs (CloudFront); a value may be quoted (Incapsula).
IIS writes a space in a value as `+` and a `+` as itself (`;++http` is `; +http`); CloudFront
%-encodes values and keeps `+` as it is.
Incapsula writes `cs-uri` without its scheme (`www.example.com/page.php`), and Matomo's importer
reads it so: a `cs-uri` that begins with a host name and a slash is that host and that path. It
writes the query apart, in `cs-uri-query`, which is joined to a `cs-uri` that holds no query.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from types import MappingProxyType
from urllib.parse import unquote

from matcher.logformats.fields import (
    cleaned_line,
    logged_host,
    request_host,
    signed_headers,
    target_path,
    w3c_header,
    w3c_signature_header,
    w3c_spaces,
)
from matcher.logformats.record import LogParseError, LogRecord
from matcher.logformats.timestamps import iso_timestamp, unix_seconds_timestamp
from matcher.timerange import OutOfRange, to_utc

# Each of our fields -> the W3C field names that carry it, the first present wins.
W3C_SOURCES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "date": ("date", "date-utc"),
    "time": ("time", "time-utc"),
    # IIS Advanced Logging's server-local clock, read in --log-timezone when no UTC time is logged.
    "date_local": ("date-local",),
    "time_local": ("time-local",),
    "client_ip": ("c-ip", "cs-ip", "c-ip-address"),
    "method": ("cs-method",),
    "stem": ("cs-uri-stem",),
    "query": ("cs-uri-query",),
    "uri": ("cs-uri",),
    # CloudFront's cs(Host) is the distribution's own name (`Columns.of` passes it over there);
    # x-host-header is the site's Host.
    "host": ("x-host-header", "cs-host", "cs(host)", "s-sitename-host"),
    "status": ("sc-status",),
    "size": ("sc-bytes",),
    "referer": ("cs(referer)", "cs(referrer)"),
    "user_agent": ("cs(user-agent)",),
    "forwarded_for": ("x-forwarded-for", "cs(x-forwarded-for)", "x-forwarded-for-header"),
    "signature_agent": ("cs(signature-agent)",),
    "signature_input": ("cs(signature-input)",),
    "signature": ("cs(signature)",),
})

# A host name (with an optional port) and the slash that starts its path: Incapsula's cs-uri.
_SCHEMELESS_URI = re.compile(r"(?:[A-Za-z0-9-]+\.)+[A-Za-z0-9-]+(?::\d{1,5})?(?=/)")

# The fields of a line met before any `#Fields:` directive, per layout.
_IIS_DEFAULT = ("date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) "
                "cs(Referer) sc-status sc-substatus sc-win32-status time-taken").split()
_CLOUDFRONT_DEFAULT = (
    "date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) "
    "cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol "
    "cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type "
    "cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte "
    "x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end"
).split()
DEFAULT_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "w3c": tuple(_IIS_DEFAULT), "cloudfront": tuple(_CLOUDFRONT_DEFAULT),
})


@dataclass(frozen=True)
class Columns:
    """Where each of our fields sits in a data line: under one `#Fields:` directive, or in a
    CloudFront real-time record of a given field list."""

    count: int
    index: Mapping[str, int]
    plus_is_space: bool  # IIS; CloudFront %-encodes and keeps `+`
    signed: bool  # the fields name a signature header

    @classmethod
    def of(cls, names: tuple[str, ...], sources: Mapping[str, tuple[str, ...]] = W3C_SOURCES,
           cloudfront: bool = False) -> Columns:
        lowered = [name.lower() for name in names]
        cloudfront = cloudfront or "x-edge-location" in lowered
        index = {}
        for ours, candidates in sources.items():
            for source in candidates:
                # CloudFront's cs(Host) is the distribution's own name, never the site's
                if source in lowered and not (cloudfront and source == "cs(host)"):
                    index[ours] = lowered.index(source)
                    break
        signed = bool({"signature_agent", "signature_input", "signature"} & set(index))
        return cls(len(names), index, not cloudfront, signed)


def _values(text: str) -> list[str]:
    """A data line's values: tab-separated when it holds a tab, else separated by runs of spaces
    (a writer that pads its columns); a value in double quotes may hold the separator, and a
    doubled quote inside it (`" ""a"" b "`, IIS Advanced Logging) is one quote."""
    separator = "\t" if "\t" in text else " "
    if '"' not in text:
        return text.split("\t") if separator == "\t" else [value for value in text.split(" ") if value]
    values, position = [], 0
    while True:
        if text.startswith('"', position):
            end = text.find('"', position + 1)
            while end >= 0 and text.startswith('"', end + 1):
                end = text.find('"', end + 2)
            if end < 0:
                raise LogParseError("no-match", "a quoted W3C value is not closed")
            value = text[position + 1:end]
            values.append(value.replace('""', '"') if '""' in value else value)
            position = end + 1
            if position < len(text) and text[position] != separator:
                raise LogParseError("no-match", "a quoted W3C value runs into the next")
        else:
            end = text.find(separator, position)
            end = len(text) if end < 0 else end
            values.append(text[position:end])
            position = end
        if position >= len(text):
            return values
        position += 1
        if separator == " ":
            while text.startswith(" ", position):
                position += 1


def _is_fields(directive: str) -> bool:
    return directive.strip().lower() == "fields"


def is_fields_directive(line: str) -> bool:
    """A `#Fields:` directive, which names the fields of the data lines after it."""
    try:
        text = cleaned_line(line)
    except LogParseError:
        return False
    return text[0] == "#" and _is_fields(text[1:].partition(":")[0])


@dataclass
class W3CParser:
    """Parser for W3C extended logs; it keeps the last `#Fields:` directive it read, so one
    instance reads one file's lines in order (the audit keeps one per file)."""

    name: str
    default_host: str | None
    zone: tzinfo = timezone.utc  # of `date-local` and `time-local` (--log-timezone)
    columns: Columns = field(init=False)
    per_file = True  # the audit keeps one parser per file: the directives are the file's

    def __post_init__(self) -> None:
        self.columns = Columns.of(DEFAULT_FIELDS[self.name])

    def skim(self, line: str) -> None:
        """W3C lines are always read whole."""
        return None

    def __call__(self, line: str) -> LogRecord:
        text = cleaned_line(line)
        if text[0] == "#":
            directive, _, rest = text[1:].partition(":")
            if _is_fields(directive):
                names = tuple(rest.split())
                if not names:
                    raise LogParseError("no-match", "a #Fields directive that names no field")
                self.columns = Columns.of(names)
            raise LogParseError("directive", f"W3C #{directive.strip()[:20]} directive")
        return record_of(_values(text), self.columns, self.default_host, self.zone)


def record_of(
    values: list[str], columns: Columns, default_host: str | None, zone: tzinfo = timezone.utc
) -> LogRecord:
    """The record of one data line, its values already split, read where `columns` says; `zone`
    is the zone of its local times."""
    if len(values) != columns.count:
        raise LogParseError("no-match", f"{len(values)} values where the fields name {columns.count}")
    index = columns.index

    def value(ours: str) -> str | None:
        position = index.get(ours)
        if position is None:
            return None
        found = values[position]
        return None if found in ("", "-") else found

    stamp = value("ts")
    if stamp is not None:
        ts = unix_seconds_timestamp(stamp)
    else:
        ts = _w3c_time(value("date"), value("time"), value("date_local"), value("time_local"), zone)
    if "client_ip" not in index:
        raise LogParseError("missing-field", "the fields name no c-ip")
    # A `-` c-ip (IIS Advanced Logging writes some) is a request from a client the line does not
    # name, read like a combined line's `-` client: its claim cannot be checked by address.
    client_ip = value("client_ip") or "-"
    method = value("method")
    if method is None and "method" in index:
        raise LogParseError("no-request", "no cs-method: no request was received")
    # Fields that log no method at all (SHOUTcast's listeners) still log the request: its method is unknown.
    uri = value("uri")
    query = value("query")
    if uri is not None:
        # Incapsula writes the query apart from its cs-uri; a cs-uri that holds one is whole
        target = uri if query is None or "?" in uri else f"{uri}?{query}"
        # The scheme Incapsula leaves out changes nothing: the host and path are what is judged.
        path, target_host = target_path(f"http://{target}" if _SCHEMELESS_URI.match(target) else target)
    else:
        stem = value("stem")
        if stem is None:
            raise LogParseError("missing-field", "a W3C line needs cs-uri-stem or cs-uri")
        target = stem if query is None else f"{stem}?{query}"
        path, target_host = target_path(target)
    decode = _iis_decoded if columns.plus_is_space else unquote
    status, size = value("status"), value("size")
    referer, user_agent, forwarded_for = value("referer"), value("user_agent"), value("forwarded_for")
    host = value("host")
    return LogRecord(
        ts,
        # cs-uri is the URI the server wrote down, so without cs-host its host is the logged one
        request_host(host or (target_host if uri is not None else None), default_host),
        client_ip,
        method,
        target,
        path,
        _number(status, "bad-status", 999),
        _number(size, "bad-field", None),
        None if referer is None else decode(referer),
        "" if user_agent is None else decode(user_agent),
        forwarded_for,
        target_host=logged_host(target_host),
        signed=_signed(value, host or target_host, columns) if columns.signed else None,
    )


def _iis_decoded(text: str) -> str:
    """An IIS User-Agent or Referer: `+` for a space (`fields.w3c_spaces`), %-escapes undone."""
    return unquote(w3c_spaces(text))


def _signed(value, authority: str | None, columns: Columns):
    """The signature headers, IIS's `+` for a space undone (not inside the Signature's base64),
    CloudFront's %-encoding undone."""
    agent, given, signature = value("signature_agent"), value("signature_input"), value("signature")
    if columns.plus_is_space:
        agent, given = (None if v is None else w3c_header(v) for v in (agent, given))
        signature = None if signature is None else w3c_signature_header(signature)
    else:
        agent, given, signature = (None if v is None else unquote(v) for v in (agent, given, signature))
    if agent is not None and agent.startswith("https://"):
        # The header is a quoted string ("https://..."), a bare URL is no structured field:
        # the quotes were read as the W3C value's own.
        agent = f'"{agent}"'
    return signed_headers(authority, agent, given, signature, "signature_agent" in columns.index)


def _w3c_time(date: str | None, time: str | None, date_local: str | None, time_local: str | None,
              zone: tzinfo) -> datetime:
    """The time of a line: `date` and `time` in UTC, else `date-local` and `time-local` in `zone`."""
    if date is not None and time is not None:
        return _written_time(date, time)
    if date_local is None or time_local is None:
        raise LogParseError("missing-field", "the line has no date or no time")
    wall_clock = _written_time(date_local, time_local).replace(tzinfo=zone)
    try:
        return to_utc(wall_clock)
    except OutOfRange:
        raise LogParseError(
            "bad-timestamp", f"{date_local} {time_local}: outside 0001-01-01..9999-12-31 once in UTC"
        ) from None


def _written_time(date: str, time: str) -> datetime:
    if len(time) == 5:
        time += ":00"  # the draft allows hh:mm
    return iso_timestamp(f"{date}T{time}Z")


def _number(text: str | None, reason: str, limit: int | None) -> int | None:
    if text is None:
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= 20) or (limit is not None and int(text) > limit):
        raise LogParseError(reason, f"not a number: {text[:20]!r}")
    return int(text)
