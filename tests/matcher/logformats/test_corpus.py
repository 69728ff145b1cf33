"""The log-format corpus (tests/data/logformats/<writer>/, provenance in SOURCES.md) read the way
`--log-format auto` reads a file (tests/logformat_corpus.py).

For each writer: at least as many lines read as GoAccess counts requests (its count recorded in
expected.json by bench/logformat_corpus_bench.py; like GoAccess, a line read as written that holds no
request, a 408 with "-" or a CONNECT, counts, a W3C directive does not), request records for at least
95% of the request lines, and on the annotated lines the host, path, status, User-Agent, client and
time a reader must give. A writer today's reader falls short on is an expected failure saying how;
it turns into a pass (and the strict mark into a failure to remove) once the reader learns the layout.
"""
from __future__ import annotations

import functools
import shutil

import pytest

from logformat_corpus import (
    CORPUS, FIELDS, SHARE, Reading, expected, goaccess_reads, read_like_auto, writers, wrong_fields,
)

WRITERS = writers()

# Writers `auto` reads too few requests of today, and why.
READS_SHORT: dict[str, str] = {
    "heroku_router": "line 1 (2013) is another layout than the other router lines (2020): its path unquoted and no "
                     "protocol= at its end: 4 of 5 requests",
}
# Writers whose annotated fields `auto` gets wrong (or does not read) today, and why.
FIELDS_WRONG: dict[str, str] = {
    "cloudfront_realtime": "a real-time record names no field: the inferred layout takes a count for the status "
                           "and leaves the User-Agent's %-escapes",
}


@functools.cache
def reading(writer: str) -> Reading:
    return read_like_auto(writer)


def cases(expected_failures: dict[str, str]) -> list:
    return [
        pytest.param(writer, marks=pytest.mark.xfail(strict=True, reason=expected_failures[writer]))
        if writer in expected_failures else writer
        for writer in WRITERS
    ]


def test_the_corpus_holds_forty_writers_each_with_its_sources_and_goaccess_count():
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    assert len(WRITERS) >= 40
    for writer in WRITERS:
        facts = expected(writer)
        lines = (CORPUS / writer / "access.log").read_text(encoding="utf-8").splitlines()
        assert f"## `{writer}`" in sources, f"{writer} has no section in SOURCES.md"
        assert facts["lines"] == len(lines), writer
        assert 0 < facts["request_lines"] <= len(lines), writer
        assert isinstance(facts["goaccess"]["requests"], int), \
            f"{writer}: run bench/logformat_corpus_bench.py --write-goaccess"
        assert facts["annotated"], f"{writer} has no annotated line"
        for number, fields in facts["annotated"].items():
            assert lines[int(number) - 1].strip(), (writer, number)
            assert set(fields) <= set(FIELDS), (writer, number)
    assert set(FIELDS_WRONG) | set(READS_SHORT) <= set(WRITERS)


@pytest.mark.parametrize("writer", cases(READS_SHORT))
def test_auto_reads_as_many_requests_as_goaccess_and_most_request_lines(writer):
    facts = expected(writer)
    got = reading(writer)
    requests, goaccess, request_lines = len(got.records), facts["goaccess"]["requests"], facts["request_lines"]
    assert got.chosen is not None, \
        f"{writer}: auto refuses the file ({request_lines} request lines, GoAccess reads {goaccess})"
    report = (f"{writer}: auto chose {got.chosen}, read {requests} requests of {request_lines} request lines "
              f"({got.lines_read} lines read), GoAccess {goaccess}")
    assert got.lines_read >= goaccess, report
    assert requests >= SHARE * request_lines, report


@pytest.mark.parametrize("writer", cases(FIELDS_WRONG))
def test_annotated_lines_give_host_path_status_user_agent_client_and_time(writer):
    got = reading(writer)
    wrong = wrong_fields(writer, got)
    assert not wrong, f"{writer} ({got.chosen}): " + "; ".join(wrong)


@pytest.mark.slow
def test_goaccess_reads_what_expected_json_records_of_each_writer():
    if shutil.which("goaccess") is None:
        pytest.skip("goaccess is not installed (Debian package goaccess)")
    stale = {writer: (expected(writer)["goaccess"]["requests"], count)
             for writer in WRITERS if (count := goaccess_reads(writer)) != expected(writer)["goaccess"]["requests"]}
    assert not stale, f"GoAccess's counts changed (recorded, now): {stale}; rerun bench/logformat_corpus_bench.py --write-goaccess"
