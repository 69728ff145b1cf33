"""Envelopes: what a log shipper or runtime wraps around a log line, taken off before the format
reads it. A format name `ENVELOPE+FORMAT` (`syslog+nginx_json`, `cri+combined`) reads FORMAT lines
inside ENVELOPE; `--log-format auto` tries every envelope with every format.

    syslog   RFC 3164 (`<134>Nov  2 10:00:00 host tag[pid]: `, the <PRI> optional, as syslog
             daemons write files), the same header with an RFC 3339 time as rsyslog's
             `RSYSLOG_FileFormat` and syslog-ng's `ts-format(iso)` write it
             (`2026-11-02T10:00:00+01:00 host tag[pid]: `), or RFC 5424
             (`<134>1 2026-11-02T10:00:00Z host app - - - `).
             The envelope's own time is the shipper's; the line's time is the one read, so the
             year RFC 3164 leaves out is never needed.
    cri      Kubernetes CRI container logs: `TIME STREAM F|P line` (a `P` line is a part the
             runtime split; each part is read as it is).
    docker   Docker's json-file logging driver: `{"log": "line\\n", "stream": ..., "time": ...}`.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from matcher.logformats.fields import cleaned_line
from matcher.logformats.record import LogParseError, LogRecord
from matcher.logformats.json_text import loads_logged

# RFC 3164's header, its time as RFC 3164 writes it or as RFC 3339 does (a daemon's high-precision
# file format): the one syslog header of a line a program wrote through syslog.
SYSLOG_HEADER = re.compile(
    r"(?:<\d{1,3}>)?(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d))"
    r" \S+ [^\s:\[]+(?:\[[^\]\s]*\])?: ?",
    re.ASCII,
)
_RFC5424 = re.compile(r"<\d{1,3}>\d{1,2} \S+ \S+ \S+ \S+ \S+ (?:-|(?:\[(?:[^\]\\]|\\.)*\])+) ?", re.ASCII)
_CRI = re.compile(r"\d{4}-\d\d-\d\dT\S+ (?:stdout|stderr) [FP] ", re.ASCII)


def _syslog(text: str) -> str:
    match = SYSLOG_HEADER.match(text) or _RFC5424.match(text)
    if match is None:
        raise LogParseError("no-envelope", "no RFC 3164 or RFC 5424 syslog header")
    return text[match.end():]


def _cri(text: str) -> str:
    match = _CRI.match(text)
    if match is None:
        raise LogParseError("no-envelope", "no CRI container-log prefix (TIME STREAM F|P)")
    return text[match.end():]


def _docker(text: str) -> str:
    if not text.startswith("{"):
        raise LogParseError("no-envelope", "not a docker json-file record")
    try:
        record = loads_logged(text)
    except (ValueError, RecursionError):
        raise LogParseError("no-envelope", "not a docker json-file record") from None
    inner = record.get("log") if isinstance(record, dict) else None
    if not isinstance(inner, str):
        raise LogParseError("no-envelope", "a docker json-file record has a string `log`")
    return inner


ENVELOPES: Mapping[str, Callable[[str], str]] = MappingProxyType({"syslog": _syslog, "cri": _cri, "docker": _docker})


def unwrapped(envelope: str, line: str) -> str:
    """The line inside `envelope`; LogParseError("no-envelope") when the line has none."""
    return ENVELOPES[envelope](cleaned_line(line))


@dataclass(frozen=True)
class EnvelopedParser:
    """A format's parser reading the lines inside an envelope."""

    envelope: str
    inner: Callable[[str], LogRecord]

    @property
    def per_file(self) -> bool:
        return getattr(self.inner, "per_file", False)

    def skim(self, line: str) -> None:
        """Enveloped lines are always read whole."""
        return None

    def __call__(self, line: str) -> LogRecord:
        return self.inner(unwrapped(self.envelope, line))
