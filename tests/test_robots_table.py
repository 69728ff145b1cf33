"""The robots history readers: JSON Lines with exact bodies, and a folder of captures."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from helpers import write_jsonl
from matcher.history import RobotsTableError
from pipeline.robots_table import read_robots_table

BOM_CRLF = b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /\r\n"


def test_jsonl_body_file_keeps_exact_bytes(tmp_path):
    (tmp_path / "bodies").mkdir()
    (tmp_path / "bodies" / "v1.txt").write_bytes(BOM_CRLF)
    rows = [
        {"host": "Example.com", "effective_from": "2026-11-02T10:00:00+01:00", "status": 200, "body_file": "bodies/v1.txt"},
        {"host": "example.com", "effective_from": "2026-11-03T00:00:00Z", "status": 503},
        {"host": "example.com", "effective_from": "2026-11-04T00:00:00Z", "status": "unreachable"},
        {"host": "example.com", "effective_from": "2026-11-05T00:00:00Z", "status": 200, "body": "User-agent: *\n"},
    ]
    table = tmp_path / "history.jsonl"
    table.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    first, error, unreachable, inline = read_robots_table(str(table))
    assert first.body == BOM_CRLF and first.host == "example.com"
    assert first.effective_from == datetime(2026, 11, 2, 9, tzinfo=timezone.utc)
    assert (error.status, error.kind) == (503, "error")
    assert (unreachable.status, unreachable.kind) == (None, "error")
    assert inline.body == b"User-agent: *\n"


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "history.jsonl:2"),
        ('["a list"]', "a row must be a JSON object"),
        ('{"host": "x.test", "effective_from": "2026-11-02T00:00:00", "status": 200, "body": ""}', "offset"),
        ('{"host": "x.test", "effective_from": "2026-11-02T00:00:00Z", "status": 200, "body_file": "nope.txt"}',
         "history.jsonl:2"),
    ],
)
def test_a_bad_row_stops_the_run_naming_file_and_row(tmp_path, line, message):
    table = tmp_path / "history.jsonl"
    good = {"host": "x.test", "effective_from": "2026-11-01T00:00:00Z", "status": 404}
    table.write_text(json.dumps(good) + "\n" + line + "\n")
    with pytest.raises(RobotsTableError, match=message):
        read_robots_table(str(table))


def test_captures_folder(tmp_path):
    host = tmp_path / "example.com"
    host.mkdir()
    (host / "20261102T090000Z.txt").write_bytes(BOM_CRLF)
    (host / "2026-11-03T00:00:00Z.503").write_bytes(b"")
    (host / "20261104T000000Z.unreachable").write_bytes(b"")
    versions = sorted(read_robots_table(str(tmp_path)), key=lambda v: v.effective_from)
    assert [(v.effective_from.day, v.status, v.body) for v in versions] == [
        (2, 200, BOM_CRLF),
        (3, 503, b""),
        (4, None, None),
    ]


def test_captures_folder_rejects_unknown_names(tmp_path):
    (tmp_path / "example.com").mkdir()
    (tmp_path / "example.com" / "latest.txt").write_text("User-agent: *\n")
    with pytest.raises(RobotsTableError, match="latest.txt"):
        read_robots_table(str(tmp_path))


def test_jsonl_rows_carry_observed_before(tmp_path):
    rows = [
        {"host": "example.com", "effective_from": "2026-11-02T00:00:00Z", "status": 200, "body": ""},
        {"host": "example.com", "effective_from": "2026-11-04T00:00:00Z", "status": 404,
         "observed_before": "2026-11-03T06:00:00Z"},
    ]
    table = write_jsonl(tmp_path / "history.jsonl", rows)
    first, second = read_robots_table(str(table))
    assert (first.observed_before, second.observed_before) == (None, datetime(2026, 11, 3, 6, tzinfo=timezone.utc))


def test_captures_folder_observations_log_gives_observed_before(tmp_path):
    host = tmp_path / "example.com"
    host.mkdir()
    (host / "20261102T000000Z.txt").write_bytes(BOM_CRLF)
    (host / "20261104T000000Z.503").write_bytes(b"")
    (host / ".20261105T000000Z.txt.part").write_bytes(b"half")  # a writer's temporary file
    (host / "observations.log").write_text(
        "2026-11-02T00:00:00Z  changed  20261102T000000Z.txt\n"
        "2026-11-03T00:00:00Z  same  20261102T000000Z.txt\n"
        "2026-11-03T12:00:00+00:00  same  20261102T000000Z.txt\n\n"
        "2026-11-04T00:00:00Z  changed  20261104T000000Z.503\n"
    )
    (tmp_path / "other.test").mkdir()
    (tmp_path / "other.test" / "20261101T000000Z.404").write_bytes(b"")
    (tmp_path / "other.test" / "20261102T000000Z.txt").write_bytes(b"")
    versions = sorted(read_robots_table(str(tmp_path)), key=lambda v: (v.host, v.effective_from))
    assert [(v.host, v.status, v.observed_before) for v in versions] == [
        ("example.com", 200, None),
        ("example.com", 503, datetime(2026, 11, 3, 12, tzinfo=timezone.utc)),
        ("other.test", 404, None),
        ("other.test", 200, None),  # no log: a hand-made folder's change times are exact
    ]


def test_a_bad_observations_line_names_file_and_line(tmp_path):
    host = tmp_path / "example.com"
    host.mkdir()
    (host / "20261102T000000Z.txt").write_bytes(b"")
    (host / "observations.log").write_text("2026-11-02T00:00:00Z  changed  x\n2026-11-03 00:00  same  x\n")
    with pytest.raises(RobotsTableError, match=r"observations.log:2: not an RFC 3339 timestamp with an offset: '2026-11-03'"):
        read_robots_table(str(tmp_path))
