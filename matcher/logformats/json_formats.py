"""JSON-lines formats: a user mapping (`jsonl`) or a preset (`cloudflare`, `gcp_lb`), and their parser."""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from matcher.logformats.fields import cleaned_line, encodable, logged_host, request_host, request_line, target_path
from matcher.logformats.record import LogParseError, LogRecord
from matcher.logformats.timestamps import clf_timestamp, epoch_timestamp, iso_timestamp

# Digit runs are bounded: int() refuses very long digit strings with a ValueError.
_DECIMAL = re.compile(r"-?\d{1,20}(?:\.\d{1,12})?\Z", re.ASCII)


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
        "target": "httpRequest.requestUrl",  # the URL the load balancer logged: the host comes from it
        "status": "httpRequest.status",
        "size": "httpRequest.responseSize",
        "referer": "httpRequest.referer",
        "user_agent": "httpRequest.userAgent",
    }),
})


# Presets whose target is the URL the server wrote down; a user mapping's target is as the client sent it.
LOGGED_URL_PRESETS = frozenset({"gcp_lb"})


def check_mapping(mapping: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
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
class JsonParser:
    """Parser for one JSON object per line, read through a field mapping."""

    name: str
    mapping: dict[str, str]  # plain dicts, not mapping proxies: parsers are pickled to workers
    paths: dict[str, tuple[str, ...]]
    default_host: str | None
    # The target field is the URL the server itself wrote down (a load balancer's requestUrl,
    # built from the request it received): its host is the logged host.
    target_is_logged_url: bool = False

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
            obj = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise LogParseError("bad-json", f"not JSON: {error}") from None
        if not isinstance(obj, dict):
            raise LogParseError("bad-json", f"a JSON {type(obj).__name__}, not an object")
        values = {field: _lookup(obj, path) for field, path in self.paths.items()}
        ts = _json_timestamp(self._required(values, "ts"))
        client_ip = self._required_str(values, "client_ip")
        if "request" in values:
            method, target = request_line(self._required_str(values, "request"), escaped=False)
        else:
            method, target = self._required_str(values, "method"), self._required_str(values, "target")
        path, target_host = target_path(target)
        host = target_host if self.target_is_logged_url else _json_str(values.get("host"), "host")
        return LogRecord(
            ts,
            request_host(host, self.default_host),
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
            logged_host(target_host),
        )
