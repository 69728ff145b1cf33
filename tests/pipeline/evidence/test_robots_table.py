"""The robots history readers: JSON Lines with exact bodies, and a folder of captures."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from helpers import write_jsonl
from matcher.history import RobotsTableError
from pipeline.cli.main import EXIT_ERROR, main
from pipeline.evidence.robots_table import read_robots_table

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


def _table(folder, *lines: str):
    table = folder / "history.jsonl"
    table.write_text("".join(line + "\n" for line in lines))
    return table


def _row(effective_from: str, status=404, **extra) -> str:
    return json.dumps({"host": "example.com", "effective_from": effective_from, "status": status, **extra})


# Each line a problem of its own kind; the launch check lists every one of them, with its row.
BAD_TABLE = (
    _row("2026-11-02T00:00:00Z"),
    "not json",
    _row("2026-11-03T00:00:00"),
    _row("2026-11-04T00:00:00Z", 200, body_file="missing.txt"),
    _row("2026-11-02T00:00:00Z", 503),
    _row("2026-11-05T00:00:00Z"),
    _row("2026-11-06T00:00:00Z", observed_before="2026-11-04T12:00:00Z"),
    _row("2026-11-05T00:00:00Z"),  # an equal repeat is one version, not a conflict
)


def _bad_table_problems(table) -> list[str]:
    return [
        f"5 problems in the robots table {table}:",
        f"  {table}:2: Expecting value: line 1 column 1 (char 0)",
        f"  {table}:3: effective_from needs a UTC offset or 'Z': '2026-11-03T00:00:00'",
        f"  {table}:4: body_file: cannot read {table.parent / 'missing.txt'}: No such file or directory",
        f"  example.com has two different versions at 2026-11-02T00:00:00Z: {table}:1 (status 404)"
        f" and {table}:5 (status 503)",
        f"  {table}:7: observed_before 2026-11-04T12:00:00Z is earlier than the version before it"
        f" ({table}:6, 2026-11-05T00:00:00Z)",
    ]


def test_every_problem_of_a_table_is_listed_with_its_row(tmp_path):
    table = _table(tmp_path, *BAD_TABLE)
    with pytest.raises(RobotsTableError) as raised:
        read_robots_table(str(table))
    assert str(raised.value).splitlines() == _bad_table_problems(table)


def test_an_observed_before_earlier_than_the_version_before_is_found_by_the_reader(tmp_path):
    # Otherwise it passes the reader and stops the run only when a worker builds the host's history.
    before = _row("2026-11-05T00:00:00Z")
    table = _table(tmp_path, before, _row("2026-11-06T00:00:00Z", observed_before="2026-11-04T12:00:00Z"))
    with pytest.raises(RobotsTableError, match=r"history.jsonl:2: observed_before 2026-11-04T12:00:00Z is earlier"):
        read_robots_table(str(table))
    # seen last at the previous version's own time: the change happened in between, which is fine
    table = _table(tmp_path, before, _row("2026-11-06T00:00:00Z", observed_before="2026-11-05T00:00:00Z"))
    assert len(read_robots_table(str(table))) == 2


def test_a_long_list_of_problems_is_cut_short(tmp_path):
    table = _table(tmp_path, *["not json"] * 25)
    with pytest.raises(RobotsTableError) as raised:
        read_robots_table(str(table))
    lines = str(raised.value).splitlines()
    assert lines[0] == f"25 problems in the robots table {table}:"
    listed = [f"  {table}:{n}: Expecting value: line 1 column 1 (char 0)" for n in range(1, 21)]
    assert lines[1:] == listed + ["  ... and 5 more"]


def test_every_problem_of_a_captures_folder_is_listed(tmp_path):
    host = tmp_path / "example.com"
    host.mkdir()
    (host / "20261102T000000Z.txt").write_bytes(b"")
    (host / "2026-11-02T00:00:00Z.404").write_bytes(b"")
    (host / "latest.txt").write_bytes(b"")
    (host / "20261399T000000Z.txt").write_bytes(b"")
    (host / "observations.log").write_text("2026-11-02T00:00:00Z  changed  x\nyesterday  same  x\n")
    with pytest.raises(RobotsTableError) as raised:
        read_robots_table(str(tmp_path))
    assert str(raised.value).splitlines() == [
        f"4 problems in the robots table {tmp_path}:",
        f"  {host / '20261399T000000Z.txt'}: 20261399T000000Z is not a valid time: time data"
        " '20261399T000000Z' does not match format '%Y%m%dT%H%M%SZ'",
        f"  {host / 'latest.txt'}: not a capture name (HOST/TIMESTAMP.txt|.NNN|.unreachable)",
        f"  example.com has two different versions at 2026-11-02T00:00:00Z: {host / '2026-11-02T00:00:00Z.404'}"
        f" (status 404) and {host / '20261102T000000Z.txt'} (status 200)",
        f"  {host / 'observations.log'}:2: not an RFC 3339 timestamp with an offset: 'yesterday'",
    ]


@pytest.mark.slow
def test_run_stops_at_launch_listing_every_problem_of_the_table(tmp_path, capsys):
    table = _table(tmp_path, *BAD_TABLE)
    (tmp_path / "access.log").write_text(
        'example.com 157.55.39.10 - - [02/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "bingbot/2.0"\n'
    )
    argv = [f"--logs={tmp_path / 'access.log'}", "--log-format=host_combined", f"--robots={table}",
            f"--out={tmp_path / 'out'}", "--runner=FnApiRunner"]
    assert main(["run", *argv]) == EXIT_ERROR
    captured = capsys.readouterr()
    problems = _bad_table_problems(table)
    assert captured.err.splitlines() == [f"crawl-audit: {problems[0]}", *problems[1:]]
    assert captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["access.log", "history.jsonl"]
