"""`crawl-audit history import-wayback` against a CDX server on 127.0.0.1 replaying recorded
answers for a made-up host: collapsed runs, an http:// redirect capture, a 5xx capture."""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from urllib.parse import parse_qs, urlsplit

import pytest

from loopback import Server
from pipeline.cli import main as cli
from pipeline.evidence import wayback
from pipeline.evidence.http_client import Client
from pipeline.evidence.robots_table import read_robots_table

BODY_A = b"User-agent: *\nDisallow: /private\n"
BODY_B = b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /private\r\nAllow: /private/open\r\n"
# What the CDX API answers for url=site.example/robots.txt&output=json&collapse=digest&
# showSkipCount=true&lastSkipTimestamp=true&fl=timestamp,original,statuscode,digest
CDX_ROWS = [
    ["timestamp", "original", "statuscode", "digest", "skipcount", "endtimestamp"],
    ["20240101000000", "http://site.example/robots.txt", "200", "AAAADIGEST", "3", "20240301120000"],
    ["20240315000000", "http://site.example/robots.txt", "302", "REDIRECTDIGEST", "0", "-"],
    ["20240320000000", "https://site.example/robots.txt", "200", "AAAADIGEST", "0", "-"],
    ["20240601000000", "https://site.example/robots.txt", "503", "ERRORPAGE", "1", "20240602000000"],
    ["20240701000000", "https://site.example/robots.txt", "200", "BBBBDIGEST", "0", "-"],
]
RAW = {
    "/web/20240101000000id_/http://site.example/robots.txt": BODY_A,
    "/web/20240701000000id_/https://site.example/robots.txt": BODY_B,
}


class Archive:
    """Replays CDX_ROWS and RAW; `failures[path]` answers that many 503s (or 429s) first."""

    def __init__(self) -> None:
        self.cdx_body = json.dumps(CDX_ROWS).encode()
        self.failures: dict[str, int] = {}
        self.times: list[float] = []

    def __call__(self, handler) -> None:
        self.times.append(time.monotonic())
        path = urlsplit(handler.path).path
        if self.failures.get(path, 0) > 0:
            self.failures[path] -= 1
            handler.answer(429 if path.startswith("/cdx") else 503, b"slow down", {"Retry-After": "0"})
        elif path == "/cdx/search/cdx":
            handler.answer(200, self.cdx_body, {"Content-Type": "application/json"})
        elif handler.path in RAW:
            handler.answer(200, RAW[handler.path])
        else:
            handler.answer(404)


@pytest.fixture
def archive():
    return Archive()


@pytest.fixture
def server(tls, archive):
    with Server(tls, archive) as running:
        yield running


def _archive(tls, server, delay=0.0) -> wayback.Archive:
    client = Client(
        user_agent=wayback.USER_AGENT, timeout=5, max_bytes=1 << 20, ca_file=str(tls.ca),
        connect_to={"archive.example": ("127.0.0.1", server.port)},
    )
    return wayback.Archive(client, "https://archive.example", delay=delay, retries=2)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def test_each_change_is_a_version_with_its_first_capture_and_the_last_before_it(tls, server, archive, tmp_path):
    archive.failures["/web/20240701000000id_/https://site.example/robots.txt"] = 1  # retried
    result = wayback.import_wayback(_archive(tls, server), "site.example", tmp_path)
    assert (result.versions, len(result.written), result.failed) == (3, 3, None)
    assert result.skipped == (
        "20240315000000: HTTP 302 capture left out (a redirect's target is captured on its own)",
    )
    versions = read_robots_table(str(tmp_path))
    assert [(v.effective_from, v.status, v.body, v.observed_before) for v in versions] == [
        (utc("2024-01-01T00:00:00"), 200, BODY_A, None),
        # the 302 between the two captures of A does not split A's run: A was last seen 03-20
        (utc("2024-06-01T00:00:00"), 503, b"", utc("2024-03-20T00:00:00")),
        (utc("2024-07-01T00:00:00"), 200, BODY_B, utc("2024-06-02T00:00:00")),
    ]
    cdx_query = parse_qs(urlsplit(server.seen[0][1]).query)
    assert cdx_query["url"] == ["site.example/robots.txt"] and cdx_query["collapse"] == ["digest"]
    assert cdx_query["output"] == ["json"] and "filter" not in cdx_query  # every status kept
    paths = [path for _, path, _ in server.seen]
    assert paths.count("/web/20240701000000id_/https://site.example/robots.txt") == 2
    assert not any("20240601000000" in path for path in paths)  # a 5xx has no body to fetch
    assert {host for host, _, _ in server.seen} == {"archive.example"}


@pytest.mark.slow
def test_requests_are_one_at_a_time_with_a_delay(tls, server, archive, tmp_path):
    wayback.import_wayback(_archive(tls, server, delay=0.2), "site.example", tmp_path)
    gaps = [later - earlier for earlier, later in zip(archive.times, archive.times[1:])]
    assert len(archive.times) == 3 and min(gaps) >= 0.2


def test_a_failed_fetch_stops_the_import_and_a_second_run_resumes(tls, server, archive, tmp_path):
    archive.failures["/web/20240701000000id_/https://site.example/robots.txt"] = 3  # more than 2 retries
    first = wayback.import_wayback(_archive(tls, server), "site.example", tmp_path)
    assert first.failed.startswith("HTTP 503 from https://archive.example/web/20240701000000id_/")
    assert first.failed.endswith("(gave up after 3 attempts)")
    assert len(first.written) == 2
    seen_before = len(server.seen)
    second = wayback.import_wayback(_archive(tls, server), "site.example", tmp_path)
    assert (len(second.written), second.already_there, second.failed) == (1, 2, None)
    assert [path for _, path, _ in server.seen[seen_before:]] == [
        server.seen[0][1], "/web/20240701000000id_/https://site.example/robots.txt"
    ]  # the CDX list again, then only what was missing
    log = (tmp_path / "site.example" / "observations.log").read_text().splitlines()
    assert len(log) == len(set(log)) == 6  # first and last capture of each version, once


def test_the_command_passes_dates_and_reports(tls, server, archive, tmp_path, capsys):
    archive.failures["/cdx/search/cdx"] = 1  # a 429 first
    argv = [
        "history", "import-wayback", "site.example", f"--into={tmp_path}", "--from=2024-01-01", "--to=20241231",
        "--archive=https://archive.example", f"--connect-to=archive.example=127.0.0.1:{server.port}",
        f"--ca-file={tls.ca}", "--delay=0",
    ]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "site.example: 3 version(s) archived, 3 written, 0 already there"
    query = parse_qs(urlsplit(server.seen[-1 - 2][1]).query)
    assert (query["from"], query["to"]) == (["20240101"], ["20241231"])
    assert cli.main([*argv, "--from=last week"]) == 2
    assert "expected a date like 2024-01-31" in capsys.readouterr().err


def test_versions_of_merges_runs_the_index_split():
    rows = [
        ["timestamp", "original", "statuscode", "digest"],
        ["20240101000000", "h/robots.txt", "404", "X1"],
        ["20240102000000", "h/robots.txt", "410", "X2"],  # same class: one "unavailable" run
        ["20240103000000", "h/robots.txt", "-", "X3"],  # a revisit without status
        ["2024010400000", "h/robots.txt", "200", "X4"],  # a broken timestamp
        ["20240105000000", "h/robots.txt"],  # a short row
        [],
    ]
    versions, skipped = wayback.versions_of(rows)
    assert [(v.first, v.last, v.status) for v in versions] == [
        (utc("2024-01-01T00:00:00"), utc("2024-01-02T00:00:00"), 404)
    ]
    assert skipped[0] == "malformed CDX row ['20240105000000', 'h/robots.txt']"
    assert len(skipped) == 3 and all("no usable time or status" in reason for reason in skipped[1:])


def test_a_cdx_answer_that_is_not_json_exits_2_with_one_line(tls, server, archive, tmp_path, capsys):
    archive.cdx_body = b"<html>maintenance</html>"
    argv = [
        "history", "import-wayback", "site.example", f"--into={tmp_path}", "--archive=https://archive.example",
        f"--connect-to=archive.example=127.0.0.1:{server.port}", f"--ca-file={tls.ca}", "--delay=0",
    ]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.startswith("crawl-audit: history import-wayback: CDX answer is not JSON: ")
    assert not (tmp_path / "site.example").exists()
