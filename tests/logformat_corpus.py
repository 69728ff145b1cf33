"""The log-format corpus (tests/data/logformats/<writer>/, provenance in its SOURCES.md) and what
`--log-format auto` makes of it: read by tests/matcher/logformats/test_corpus.py and by
bench/logformat_corpus_bench.py, which adds GoAccess's side and the timings.

A writer's file is read the way a batch run reads it: the format the detector picks on the file's
first lines, or the layout inferred from them where no preset is taken, then that format's parser on
every line, in order (a W3C parser follows the `#Fields:` lines it passes).
"""
from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from matcher.addresses import address_text
from matcher.logformats import LogParseError, LogRecord, is_not_request, parser_for
from matcher.logformats.detect import SAMPLE_LINES
from matcher.logformats.inference import InferredFormat, detected_format

CORPUS = Path(__file__).resolve().parent / "data" / "logformats"
# The goals: request records for this share of the request lines, and at least GoAccess's count.
SHARE = 0.95
FIELDS = ("host", "path", "status", "user_agent", "client", "time")


def writers() -> list[str]:
    return sorted(path.parent.name for path in CORPUS.glob("*/expected.json"))


def expected(writer: str) -> dict:
    return json.loads((CORPUS / writer / "expected.json").read_text(encoding="utf-8"))


def raw_lines(writer: str) -> list[bytes]:
    return (CORPUS / writer / "access.log").read_bytes().split(b"\n")


def first_lines(raw: list[bytes]) -> list[bytes]:
    """The sample the detector judges a file on: its first non-blank lines."""
    return [line for line in raw if line.strip()][:SAMPLE_LINES]


@dataclass(frozen=True)
class Reading:
    """What `auto` makes of one writer's file: the format it chose (None: refused), the record of
    each request line it read, by line number from 1, and how many lines it read as written that
    hold no request (a 408 with "-", a CONNECT: lines GoAccess counts as requests; W3C directives,
    which it does not, are left out)."""

    chosen: str | None
    records: dict[int, LogRecord]
    not_requests: int = 0
    field_map: dict[str, str] | None = None  # the map inferred for JSON lines no preset reads

    @property
    def lines_read(self) -> int:
        return len(self.records) + self.not_requests


def read_like_auto(writer: str) -> Reading:
    raw = raw_lines(writer)
    chosen = detected_format(first_lines(raw))
    if chosen is None:
        return Reading(None, {})
    field_map = dict(chosen.field_map) if isinstance(chosen, InferredFormat) and chosen.field_map else None
    parse = parser_for(chosen.name, mapping=field_map)
    records, not_requests = {}, 0
    for number, line in enumerate(raw, start=1):
        try:
            records[number] = parse(line.decode("utf-8", "backslashreplace"))
        except LogParseError as error:
            not_requests += is_not_request(error.reason) and error.reason != "directive"
    return Reading(chosen.name, records, not_requests, field_map)


def wrong_fields(writer: str, reading: Reading) -> list[str]:
    """Every annotated field the reading gets wrong, as `line N: field got, not want`. The client
    is compared as the audit writes it (`addresses.address_text`: `::ffff:a.b.c.d` is `a.b.c.d`,
    a port is dropped); a record keeps it as logged."""
    wrong = []
    for number, fields in expected(writer)["annotated"].items():
        record = reading.records.get(int(number))
        if record is None:
            wrong.append(f"line {number}: not read (auto chose {reading.chosen})")
            continue
        actual = {"host": record.host, "path": record.path, "status": record.status, "user_agent": record.user_agent,
                  "client": address_text(record.client_ip), "time": record.ts}
        for field, want in fields.items():
            if field == "time":
                right = abs(record.ts - datetime.fromisoformat(want.replace("Z", "+00:00"))) < timedelta(milliseconds=1)
            else:
                right = actual[field] == want
            if not right:
                wrong.append(f"line {number}: {field} {actual[field]!r}, not {want!r}")
    return wrong


def goaccess_reads(writer: str) -> int:
    """GoAccess's `valid_requests` on the writer's file with the format expected.json names: a
    predefined name or `{"log_format": ..., "date_format": ..., "time_format": ..., "datetime_format": ...}`;
    0 where it names none or GoAccess reads none of the first lines (it then writes no report)."""
    spec = expected(writer)["goaccess"]["format"]
    if spec is None:
        return 0
    given = {"log_format": spec} if isinstance(spec, str) else spec
    options = [f"--{key.replace('_', '-')}={value}" for key, value in given.items()]
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        subprocess.run(["goaccess", str(CORPUS / writer / "access.log"), "--no-global-config", *options, "-o", str(report)],
                       capture_output=True, timeout=120)
        if not report.exists():
            return 0
        return int(json.loads(report.read_text())["general"]["valid_requests"])
