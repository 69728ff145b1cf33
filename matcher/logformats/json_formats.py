"""JSON-lines formats: a user mapping (`jsonl`) or a preset (`cloudflare`, `gcp_lb`), and their parser."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote_plus

from matcher.logformats.fields import (
    cleaned_line, encodable, logged_host, request_host, request_line, signed_headers, target_path,
)
from matcher.logformats.record import LogParseError, LogRecord
from matcher.logformats.timestamps import clf_timestamp, epoch_timestamp, iso_timestamp
from matcher.logformats.json_text import loads_logged

# Digit runs are bounded: int() refuses very long digit strings with a ValueError.
_DECIMAL = re.compile(r"-?\d{1,20}(?:\.\d{1,12})?\Z", re.ASCII)


@lru_cache(maxsize=4096)
def _percent_decoded(text: str) -> str:
    """A %-encoded value (a space as `+`) as text; cached: a log repeats its User-Agents."""
    return encodable(unquote_plus(text))


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


# --------------------------------------------------------------- JSON formats

JSON_FIELDS: tuple[str, ...] = (
    "ts", "client_ip", "host", "method", "target", "query", "request", "status", "size",
    "referer", "user_agent", "forwarded_for", "x_robots_tag",
    "signature_agent", "signature_input", "signature", "content_usage", "retry_after",
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
        "target": "httpRequest.requestUrl",  # the URL the load balancer logged: the host comes from it
        "status": "httpRequest.status",
        "size": "httpRequest.responseSize",
        "referer": "httpRequest.referer",
        "user_agent": "httpRequest.userAgent",
    }),
    # Caddy's JSON access log (caddyserver.com/docs, "log"): header values are lists, one per line
    # of the header; client_ip is the address after trusted_proxies, remote_ip the peer.
    "caddy": MappingProxyType({
        "ts": "ts",
        "client_ip": "request.client_ip|request.remote_ip",
        "host": "request.host",
        "method": "request.method",
        "target": "request.uri",
        "status": "status",
        "size": "size",
        "referer": "request.headers.Referer.0",
        "user_agent": "request.headers.User-Agent.0",
        "forwarded_for": "request.headers.X-Forwarded-For.0",
        "content_usage": "resp_headers.Content-Usage",
    }),
    # Traefik's access log in JSON (doc.traefik.io, "Access Logs"); request headers appear as
    # request_<Name> when the log keeps them (accessLog.fields.headers).
    "traefik_json": MappingProxyType({
        "ts": "StartUTC|time",
        "client_ip": "ClientHost|ClientAddr",
        "host": "RequestHost",
        "method": "RequestMethod",
        "target": "RequestPath",
        "status": "DownstreamStatus",
        "size": "DownstreamContentSize",
        "referer": "request_Referer",
        "user_agent": "request_User-Agent",
        "forwarded_for": "request_X-Forwarded-For",
    }),
    # nginx `log_format ... escape=json` layouts whose keys are the variables' own names.
    "nginx_json": MappingProxyType({
        "ts": "time_iso8601|time_local|msec|timestamp|time",
        "client_ip": "remote_addr",
        "host": "host|http_host|server_name",
        "request": "request",
        "method": "request_method",
        "target": "request_uri",
        "status": "status",
        "size": "body_bytes_sent|bytes_sent",
        "referer": "http_referer",
        "user_agent": "http_user_agent",
        "forwarded_for": "http_x_forwarded_for",
    }),
    # The nginx `log_format matomo` JSON layout written for Matomo's log importer: no method is
    # logged, so each line is a request whose method is unknown.
    "matomo_json": MappingProxyType({
        "ts": "date",
        "client_ip": "ip",
        "host": "host",
        "target": "path",
        "status": "status",
        "size": "length",
        "referer": "referrer",
        "user_agent": "user_agent",
    }),
    # Fastly real-time log streaming in its documented JSON layout (docs.fastly.com, "Useful log
    # formats"): `request` there is the method, `url` the path and query.
    "fastly": MappingProxyType({
        "ts": "timestamp|time_start",
        "client_ip": "client_ip",
        "host": "host",
        "method": "request_method|request",
        "target": "url",
        "status": "response_status|status",
        "size": "response_body_size|response_bytes",
        "referer": "request_referer",
        "user_agent": "request_user_agent",
    }),
    # Akamai DataStream 2 JSON (techdocs.akamai.com, "Data set parameters"): path and query apart,
    # User-Agent and Referer %-encoded.
    "akamai_ds2": MappingProxyType({
        "ts": "reqTimeSec",
        "client_ip": "cliIP",
        "host": "reqHost",
        "method": "reqMethod",
        "target": "reqPath",
        "query": "queryStr",
        "status": "statusCode",
        "size": "bytes",
        "referer": "referer",
        "user_agent": "UA",
        "forwarded_for": "xForwardedFor",
    }),
})
# Preset fields written %-encoded (a space as `+`), decoded before they are audited.
PERCENT_ENCODED: Mapping[str, frozenset[str]] = MappingProxyType({
    "akamai_ds2": frozenset({"user_agent", "referer"}),
})
# Presets whose target field is a path that may be written without its leading slash: DataStream 2
# writes reqPath as `products/x.html`, the host apart in reqHost.
SLASHLESS_PATHS = frozenset({"akamai_ds2"})


# One key of a field path: in [brackets] or "quotes" it may hold dots and bars (Zeek's `id.orig_h`);
# a bare key is anything up to the next dot or bar that does not open with either.
_KEY = re.compile(r'\[([^\]]+)\]|"([^"]+)"|([^.|\["][^.|]*)')


def field_paths(source: str) -> tuple[tuple[str, ...], ...] | None:
    """A mapping's source -> its alternative paths, each a tuple of keys; None when it is no path.

    `a.b|c` is the path a.b, else c. A key in brackets or double quotes is taken as written, dots
    and bars included: `[id.orig_h]`, `request."x.y"`. Every key is non-empty."""
    alternatives: list[tuple[str, ...]] = []
    keys: list[str] = []
    position = 0
    while True:
        found = _KEY.match(source, position)
        if found is None:
            return None
        keys.append(next(group for group in found.groups() if group is not None))
        position = found.end()
        if position == len(source):
            alternatives.append(tuple(keys))
            return tuple(alternatives)
        if source[position] == "|":
            alternatives.append(tuple(keys))
            keys = []
        elif source[position] != ".":
            return None  # text right after a closing bracket or quote
        position += 1


def check_mapping(mapping: Mapping[str, str]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Validate a field mapping and split its paths once (`field_paths`)."""
    unknown = sorted(set(mapping) - set(JSON_FIELDS))
    if unknown:
        raise ValueError(f"unknown mapping fields {unknown}; known: {', '.join(JSON_FIELDS)}")
    paths = {field: field_paths(source) if isinstance(source, str) else None for field, source in mapping.items()}
    for field, source in mapping.items():
        if paths[field] is None:
            raise ValueError(
                f"mapping for {field!r} must be a dotted field path, got {source!r}"
                " (a key that holds a dot goes in brackets: [id.orig_h])"
            )
    # A layout may log no method (the request is then one whose method is unknown), never no target.
    has_request = "request" in mapping or "target" in mapping
    if not {"ts", "client_ip"} <= set(mapping) or not has_request:
        raise ValueError("a mapping needs 'ts', 'client_ip', and 'request' or 'target' (with 'method' where logged)")
    return paths


def json_parser(format_name: str, mapping: Mapping[str, str] | None, default_host: str | None) -> JsonParser:
    """The parser of `jsonl` with `mapping`, or of a preset with `mapping` extending or overriding its own."""
    if format_name == "jsonl" and not mapping:
        raise ValueError("format 'jsonl' needs a field mapping (our field -> source field path)")
    preset = PRESETS.get(format_name, {})
    merged = {**preset, **(mapping or {})}
    return JsonParser(
        format_name, merged, check_mapping(merged), default_host, PERCENT_ENCODED.get(format_name, frozenset()),
        format_name in SLASHLESS_PATHS and merged.get("target") == preset.get("target"),
    )


def _lookup(obj: Any, paths: tuple[tuple[str, ...], ...]) -> Any:
    """The value at the first of `paths` present and not empty; an empty value when that is all
    there is; None when none is present."""
    if len(paths) == 1:  # the common case: one path, most often one top-level key
        path = paths[0]
        return obj.get(path[0]) if len(path) == 1 else _follow(obj, path)
    found = None
    for path in paths:
        value = _follow(obj, path)
        if value is not None and value != "":
            return value
        found = value if value is not None else found
    return found


def _follow(obj: Any, path: tuple[str, ...]) -> Any:
    """Follow a dotted path through objects (and list indexes); None when any step is missing."""
    for key in path:
        if isinstance(obj, dict):
            obj = obj.get(key)
        elif isinstance(obj, list) and key.isdecimal() and len(key) < 10 and int(key) < len(obj):
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


def _json_header_values(value: Any, field: str = "x_robots_tag") -> tuple[str, ...]:
    """A header field as one string or a list of values (one per header line)."""
    values = value if isinstance(value, list) else [value]
    if not all(item is None or isinstance(item, str) for item in values):
        raise LogParseError("bad-field", f"{field} is not a string or list of strings: {value!r}")
    return tuple(encodable(item) for item in values if item and item != "-")


@dataclass(frozen=True)
class JsonParser:
    """Parser for one JSON object per line, read through a field mapping."""

    name: str
    mapping: dict[str, str]  # plain dicts, not mapping proxies: parsers are pickled to workers
    paths: dict[str, tuple[tuple[str, ...], ...]]
    default_host: str | None
    percent_encoded: frozenset[str] = frozenset()
    slashless_path: bool = False  # a target without its leading slash is still a path

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
        text = cleaned_line(line)
        try:
            obj = loads_logged(text)
        except (ValueError, RecursionError) as error:
            raise LogParseError("bad-json", f"not JSON: {error}") from None
        if not isinstance(obj, dict):
            raise LogParseError("bad-json", f"a JSON {type(obj).__name__}, not an object")
        values = {field: _lookup(obj, path) for field, path in self.paths.items()}
        ts = _json_timestamp(self._required(values, "ts"))
        client_ip = self._required_str(values, "client_ip")
        request = values.get("request")
        if request is not None or "target" not in values:
            if request is None:
                self._required(values, "request")
            # "" or "-": the server logged a connection that sent no request
            method, target = request_line(_json_str(request, "request") or "", escaped=False)
        else:
            method = self._required_str(values, "method") if "method" in values else None
            target = self._required_str(values, "target")
            if self.slashless_path and target[:1] != "/":
                target = "/" + target
            query = _json_str(values.get("query"), "query")
            if query and query != "-":
                target = f"{target}?{query}"
        path, target_host = target_path(target)
        # A layout that logs no host logs the URL it names as where the request went (gcp_lb's
        # requestUrl): its host is the logged host. A logged host wins over it.
        host = _json_str(values.get("host"), "host")
        if logged_host(host) is None:
            host = target_host
        referer = _json_str(values.get("referer"), "referer")
        user_agent = _json_str(values.get("user_agent"), "user_agent") or ""
        if self.percent_encoded:
            if "referer" in self.percent_encoded and referer:
                referer = _percent_decoded(referer)
            if "user_agent" in self.percent_encoded:
                user_agent = _percent_decoded(user_agent)
        return LogRecord(
            ts,
            request_host(host, self.default_host),
            client_ip,
            method,
            target,
            path,
            _json_status(values.get("status")),
            _json_int(values.get("size"), "size", "bad-field"),
            referer,
            user_agent,
            _json_str(values.get("forwarded_for"), "forwarded_for"),
            _json_header_values(values.get("x_robots_tag")),
            logged_host(target_host),
            signed_headers(
                host,
                _json_str(values.get("signature_agent"), "signature_agent"),
                _json_str(values.get("signature_input"), "signature_input"),
                _json_str(values.get("signature"), "signature"),
                "signature_agent" in values,
            ),
            # A header of several lines is one list of members, as HTTP joins field lines.
            ", ".join(_json_header_values(values.get("content_usage"), "content_usage")) or None,
            _json_str(values.get("retry_after"), "retry_after"),
        )
