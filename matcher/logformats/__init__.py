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
    asterisk-form     the target is "*" (`OPTIONS *`, a question about the server)
    authority-form    the target is `host:port` (`CONNECT host:443`, a tunnel)
    bad-target        the target is neither a path nor an http(s) URL (scanner junk)
    bad-json          the line is not a JSON object
    missing-field     a JSON line lacks a field the mapping requires
    bad-field         a JSON field has the wrong type
    bad-status        the status is not an HTTP status code

None of these is a crawler fetching a page, so none can receive a robots verdict.
Six of them (`blank`, `no-request`, `not-http`, `asterisk-form`, `authority-form` and a
W3C log's `directive`: `record.NOT_REQUEST_REASONS`) are lines that hold no
request for a resource: they are counted apart as not-requests, by reason. The
others are dead letters, counted and kept with their raw text.

`detect.rank_formats` scores every format on a sample of lines; `--log-format auto`
picks a file's format with it.

Text formats (Apache mod_log_config / nginx):
    common          %h %l %u %t "%r" %>s %b
    combined        common + "%{Referer}i" "%{User-Agent}i"
    vhost_combined  "%v:%p " + combined (the ":%p" is optional: SUSE omits it)
    vhost_common    "%v " + common (Apache's stock vhost_common)
    host_combined   "$host " + combined (nginx)
    combined_xrt    combined + "%{X-Robots-Tag}o"
    gandi           host + combined with the time taken, "(0 s) ", before the request (Gandi)
    lighttpd        combined with the Host in the identd field's place (lighttpd's default)
    ovh             the same layout (OVH web hosting)
    icecast2        combined + " <seconds connected>" (Icecast 2)
The combined family accepts one optional trailing quoted X-Forwarded-For field,
the layout of nginx's stock `main` format; in combined_xrt it sits before the
X-Robots-Tag field. Any other trailing content is a no-match, never ignored.
The host is the one the server logged (the line's host field), else the parser's
default host, else None. An absolute-form target (`GET http://host/p HTTP/1.1`)
gives its path; its authority is kept as `LogRecord.target_host`, evidence only.

CloudFront real-time logs: `cloudfront_realtime:` and the configuration's field list
(`cloudfront_realtime.py`).

JSON formats: `jsonl` with a user mapping (our field -> dotted source path) and
the presets `cloudflare` (Logpush http_requests) and `gcp_lb` (Cloud Logging
entries of an external Application Load Balancer). Neither preset maps
X-Forwarded-For (Cloudflare's ClientIP is authoritative; the load balancer does
not log it); a `jsonl` mapping may.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timezone, tzinfo

from matcher.logformats.fields import encodable, logged_host
from matcher.logformats.json_formats import (
    JSON_FIELDS, PRESETS, json_parser,
)
from matcher.logformats.record import NOT_REQUEST_REASONS, LogParseError, LogRecord, Skim, is_not_request
from matcher.logformats.cloudfront_realtime import REALTIME_KIND, RealtimeParser, compile_fields
from matcher.logformats.envelopes import ENVELOPES, EnvelopedParser
from matcher.logformats.format_string import FORMAT_STRING_KINDS, PASTE_YOUR_FORMAT, compile_format
from matcher.logformats.presets import LAYOUTS, PresetParser
from matcher.logformats.text import ALIASES as _ALIASES, TEXT_LAYOUTS, TextLayout, TextParser
from matcher.logformats.w3c import DEFAULT_FIELDS, W3CParser
from matcher.logformats.timestamps import clf_timestamp, epoch_timestamp, iso_timestamp

__all__ = [
    "AUTO", "FORMATS", "ZONELESS_FORMATS", "JSON_FIELDS", "NOT_REQUEST_REASONS", "PASTE_YOUR_FORMAT", "PRESETS", "LogParseError", "LogRecord", "Skim", "TextLayout", "TextParser",
    "clf_timestamp", "encodable", "epoch_timestamp", "is_not_request", "is_zoneless", "iso_timestamp", "parser_for",
    "reads_in_pieces",
]

# Not a format: each file's own is detected from its first lines (`detect`).
AUTO = "auto"

FORMATS: tuple[str, ...] = (
    "combined",
    "common",
    "vhost_combined",
    "vhost_common",
    "host_combined",
    "combined_xrt",
    "varnishncsa",
    "gandi",
    "lighttpd",
    "ovh",
    "icecast2",
    "jsonl",
    "cloudflare",
    "gcp_lb",
    "caddy",
    "traefik_json",
    "nginx_json",
    "matomo_json",
    "fastly",
    "akamai_ds2",
    "w3c",
    "cloudfront",
    "aws_alb",
    "aws_elb",
    "aws_s3",
    "haproxy",
    "python_http",
    "traefik",
    "squid",
)
# Formats whose times carry no zone: `zone` (`--log-timezone`) says which they are in.
ZONELESS_FORMATS = frozenset(name for name, layout in LAYOUTS.items() if not layout.time.zoned)


def is_zoneless(format_name: str) -> bool:
    """Times of this format carry no zone, so `--log-timezone` says which they are in."""
    envelope, plus, inner = format_name.partition("+")
    if plus and envelope in ENVELOPES:
        return is_zoneless(inner)
    kind, colon, spec = format_name.partition(":")
    if colon and kind in FORMAT_STRING_KINDS:
        return not compile_format(kind, spec).time.zoned
    return format_name in ZONELESS_FORMATS


def reads_in_pieces(format_name: str) -> bool:
    """A file in this format may be read in pieces cut at line ends, a piece carrying the W3C
    `#Fields:` line in force at its start: every format but a W3C one inside an envelope, whose
    directives the cutting, which reads bare lines, does not see."""
    envelope, plus, inner = format_name.partition("+")
    return not (plus and envelope in ENVELOPES and inner in DEFAULT_FIELDS)


def parser_for(
    format_name: str,
    default_host: str | None = None,
    mapping: Mapping[str, str] | None = None,
    zone: tzinfo = timezone.utc,
) -> Callable[[str], LogRecord]:
    """The line parser for a format named in FORMATS.

    `default_host` fills the host of lines whose server logged none (`fields.request_host`). `mapping` (our field -> dotted source path) is
    required for `jsonl`, extends or overrides a preset's, and is refused for text formats.
    `zone` is the zone of times written without one (ZONELESS_FORMATS, a W3C log's `date-local`).
    """
    envelope, plus, inner = format_name.partition("+")
    if plus and envelope in ENVELOPES:
        return EnvelopedParser(envelope, parser_for(inner, default_host, mapping, zone))
    host = logged_host(default_host)
    kind, colon, spec = format_name.partition(":")
    if colon and kind in FORMAT_STRING_KINDS:
        if mapping:
            raise ValueError(f"a {kind} format string is not JSON and takes no field mapping")
        return PresetParser(kind, compile_format(kind, spec), host, zone)
    if colon and kind == REALTIME_KIND:
        if mapping:
            raise ValueError(f"a {kind} field list is not JSON and takes no field mapping")
        return RealtimeParser(kind, compile_fields(spec), host)
    text_format = format_name in TEXT_LAYOUTS or format_name in _ALIASES or format_name in LAYOUTS
    if text_format or format_name in DEFAULT_FIELDS:
        if mapping:
            raise ValueError(f"format {format_name!r} is not JSON and takes no field mapping")
    if format_name in _ALIASES:
        # the one alias, varnishncsa, synthesizes its request line from the Host header
        return TextParser(format_name, TEXT_LAYOUTS[_ALIASES[format_name]], host, target_is_logged_url=True)
    if format_name in TEXT_LAYOUTS:
        return TextParser(format_name, TEXT_LAYOUTS[format_name], host)
    if format_name in LAYOUTS:
        return PresetParser(format_name, LAYOUTS[format_name], host, zone)
    if format_name in DEFAULT_FIELDS:
        return W3CParser(format_name, host, zone)
    if format_name == "jsonl" or format_name in PRESETS:
        return json_parser(format_name, mapping, host)
    raise ValueError(
        f"unknown log format {format_name!r}; known formats: {', '.join(FORMATS)},"
        " the server's own format string as apache:FORMAT or nginx:FORMAT,"
        f" or a CloudFront real-time field list as {REALTIME_KIND}:FIELD,FIELD,..."
    )
