"""CloudFront real-time logs: records of the fields the site owner chose, tab-separated, no header.

The format is named with its field list as the real-time log configuration gives it:
`cloudfront_realtime:timestamp,c-ip,sc-status,cs-method,cs-uri-stem,cs-user-agent`. CloudFront
writes the chosen fields in the order of its own field list, whatever order they were chosen in
(Amazon CloudFront Developer Guide, "Real-time logs": "the fields in every real-time log record are
always delivered in the same order"), so a list in another order is refused rather than read
into the wrong fields.

Fields named as in CloudFront's standard logs mean what they mean there (`w3c.W3C_SOURCES`); the
ones below differ. Values are %-encoded as in standard logs, `+` kept as it is.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from matcher.logformats.fields import cleaned_line
from matcher.logformats.record import LogRecord
from matcher.logformats.w3c import W3C_SOURCES, Columns, record_of

__all__ = ["REALTIME_KIND", "RealtimeParser", "compile_fields"]

REALTIME_KIND = "cloudfront_realtime"

# Every field of a real-time log configuration, in the order CloudFront writes them.
REALTIME_FIELDS = (
    "timestamp", "c-ip", "time-to-first-byte", "sc-status", "sc-bytes", "cs-method", "cs-protocol", "cs-host",
    "cs-uri-stem", "cs-bytes", "x-edge-location", "x-edge-request-id", "x-host-header", "time-taken",
    "cs-protocol-version", "c-ip-version", "cs-user-agent", "cs-referer", "cs-cookie", "cs-uri-query",
    "x-edge-response-result-type", "x-forwarded-for", "ssl-protocol", "ssl-cipher", "x-edge-result-type",
    "fle-encrypted-fields", "fle-status", "sc-content-type", "sc-content-len", "sc-range-start", "sc-range-end",
    "c-port", "x-edge-detailed-result-type", "c-country", "cs-accept-encoding", "cs-accept",
    "cache-behavior-path-pattern", "cs-headers", "cs-header-names", "cs-headers-count",
)

# Where real-time names or meanings differ from the standard logs'.
_OWN_SOURCES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "ts": ("timestamp",),  # Unix seconds with milliseconds
    # the whole target, query included (the standard logs' stem is the path alone)
    "uri": ("cs-uri-stem",),
    "stem": (),
    "query": (),
    # the viewer's Host header; here x-host-header is the distribution's own domain name
    "host": ("cs-host",),
    "user_agent": ("cs-user-agent",),
    "referer": ("cs-referer",),
})
_SOURCES: Mapping[str, tuple[str, ...]] = MappingProxyType({**W3C_SOURCES, **_OWN_SOURCES})
_NEEDED = (("timestamp", "the time"), ("c-ip", "the client address"), ("cs-method", "the method"),
           ("cs-uri-stem", "the request path"), ("cs-user-agent", "the User-Agent"))


@lru_cache(maxsize=16)
def compile_fields(spec: str) -> Columns:
    """A comma-separated field list -> where each of our fields sits in a record; ValueError names
    fields out of CloudFront's order and the fields a verdict needs that are missing. A field this
    list does not know (AWS adds fields now and then) is read past."""
    names = tuple(name.strip() for name in spec.split(","))
    if not all(names):
        raise ValueError(f"{REALTIME_KIND}: an empty field name in {spec!r}")
    if len(set(names)) != len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise ValueError(f"{REALTIME_KIND}: the field {twice!r} is named twice")
    known = [name for name in names if name in REALTIME_FIELDS]
    for before, after in zip(known, known[1:]):
        if REALTIME_FIELDS.index(before) > REALTIME_FIELDS.index(after):
            raise ValueError(f"{REALTIME_KIND}: CloudFront writes {after} before {before}: list the fields in its order")
    missing = [what for name, what in _NEEDED if name not in names]
    if missing:
        raise ValueError(f"{REALTIME_KIND}: the field list lacks {', '.join(missing)}")
    return Columns.of(names, _SOURCES, cloudfront=True)


@dataclass(frozen=True)
class RealtimeParser:
    """Parser for CloudFront real-time records of one field list."""

    name: str
    columns: Columns
    default_host: str | None

    def skim(self, line: str) -> None:
        """Real-time records are always read whole."""
        return None

    def __call__(self, line: str) -> LogRecord:
        return record_of(cleaned_line(line).split("\t"), self.columns, self.default_host)
