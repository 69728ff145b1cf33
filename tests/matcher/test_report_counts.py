"""What the HTML report counts of the verdicts: counted per batch and added up in the run
(`matcher.report_counts`, `pipeline.graph.summaries.CountForReport`), written to report_counts.json,
and the same report from a run folder written before that file existed."""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections import Counter
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from matcher import report_counts
from matcher.report_counts import TOP_PATHS, CrawlerDisallowed, ReportCounts, TopDisallowed, hour, label
from pipeline.cli import main as cli
from pipeline.report import html as html_report
from pipeline.report.data import Disallowed, disallowed_by_crawler
from pipeline.tables.run_folder import MANIFEST
from pipeline.graph.summaries import CountForReport
from pipeline.local.spill import grouping_on_disk
from helpers import verdict_block

UTC = timezone.utc


def verdict(**changes) -> dict:
    base = {
        "ts": datetime(2026, 11, 2, 10, 15, 30, 250, tzinfo=UTC), "host": "www.example.com",
        "client_ip": "66.249.66.1", "user_agent": "Googlebot/2.1", "path": "/private/a",
        "crawler": "Googlebot", "operator": "Google", "identity": "verified",
        "identity_method": "ip-range", "identity_evidence": "66.249.66.0/27 in google-common-crawlers snapshot 2026-10-28",
        "robots_version": {"effective_from": datetime(2026, 11, 1, tzinfo=UTC), "status": "200", "sha256": "0" * 64},
        "rule_kind": "disallow", "rule_pattern": "/private/", "rule_line": 4,
        "decision": "disallowed", "reason": "rule", "status": 200,
    }
    return {**base, **changes}


def test_a_request_is_counted_under_its_claim_else_its_operator_else_none():
    assert label(verdict()) == "Googlebot"
    assert label(verdict(crawler=None)) == "Google"
    assert label(verdict(crawler=None, operator=None)) == "(none)"
    assert label(verdict(crawler="", operator="Google")) == ""  # an empty claim is still a claim


def test_the_hour_is_the_utc_hour():
    east = timezone(timedelta(hours=5, minutes=30))
    assert hour(datetime(2026, 11, 2, 0, 10, 59, 999_999, tzinfo=east)) == datetime(2026, 11, 1, 18, 0, tzinfo=UTC)
    west = timezone(timedelta(hours=-1))
    assert hour(datetime(2026, 11, 2, 23, 59, 59, tzinfo=west)) == datetime(2026, 11, 3, tzinfo=UTC)


@pytest.mark.parametrize(
    ("decision", "disallowed"),
    [
        ("disallowed", True),
        ("disallowed-within-grace", True),
        ("disallowed-between-captures", True),
        ("allowed", False),
        ("unknown", False),
    ],
)
def test_every_kind_of_disallow_counts_as_disallowed(decision, disallowed):
    assert report_counts.is_disallowed(verdict(decision=decision)) is disallowed


def test_the_disallowed_fields_of_a_verdict_name_its_rule_and_version():
    since = datetime(2026, 11, 1, tzinfo=UTC)
    assert report_counts.disallowed_fields(verdict()) == (
        "www.example.com", "/private/a", "disallowed", "rule", "disallow", "/private/", 4, since, "200",
    )
    unknown_host = verdict(host=None, robots_version=None, reason="robots-server-error", rule_kind=None,
                           rule_pattern=None, rule_line=None)
    assert report_counts.disallowed_fields(unknown_host) == (
        None, "/private/a", "disallowed", "robots-server-error", None, None, None, None, None,
    )
    assert len(report_counts.disallowed_fields(verdict())) == len(report_counts.DISALLOWED_FIELDS)


def test_each_count_takes_the_verdicts_it_is_about():
    spoofed = verdict(identity="spoofed", client_ip="192.0.2.1", decision="allowed", rule_kind="allow")
    counts = ReportCounts.of([
        verdict(),
        verdict(decision="disallowed-within-grace", ts=datetime(2026, 11, 2, 11, tzinfo=UTC)),
        verdict(decision="disallowed-between-captures", robots_version=None, host=None),
        verdict(decision="allowed", crawler=None, operator=None),
        spoofed,
        spoofed,
    ])
    assert counts.hosts == {"www.example.com": 5, None: 1}
    ten, eleven = datetime(2026, 11, 2, 10, tzinfo=UTC), datetime(2026, 11, 2, 11, tzinfo=UTC)
    assert counts.timeline == {("Googlebot", ten): 4, ("Googlebot", eleven): 1, ("(none)", ten): 1}
    # the disallowed requests of every kind over time: what a robots.txt change did
    assert counts.disallowed_timeline == {("Googlebot", ten): 2, ("Googlebot", eleven): 1}
    since = "2026-11-01T00:00:00Z"
    rule = ("rule", "disallow", "/private/", 4)
    assert counts.disallowed == {("Googlebot", "verified"): CrawlerDisallowed(3, 3, (
        ((None, "/private/a", "disallowed-between-captures", *rule, None, None), 1),
        (("www.example.com", "/private/a", "disallowed", *rule, since, "200"), 1),
        (("www.example.com", "/private/a", "disallowed-within-grace", *rule, since, "200"), 1),
    ))}
    assert counts.spoofed_addresses == {("Googlebot", "192.0.2.1"): 2}
    assert counts.spoofed_user_agents == {("Googlebot", "Googlebot/2.1"): 2}
    assert counts.unjudged == {} and counts.identity_notes == {}


def test_disallowed_requests_are_counted_by_what_the_server_answered():
    counts = ReportCounts.of([
        verdict(), verdict(status=403), verdict(status=403, identity="spoofed"), verdict(status=451),
        verdict(status=429), verdict(status=404), verdict(status=503), verdict(status=None),
        verdict(status=403, decision="allowed"),
        verdict(status=403, client_kind="automated", crawler="curl"),
    ])
    assert counts.disallowed_answers == {
        ("Googlebot", "verified", "served"): 1, ("Googlebot", "verified", "403"): 1,
        ("Googlebot", "spoofed", "403"): 1, ("Googlebot", "verified", "451"): 1,
        ("Googlebot", "verified", "429"): 1, ("Googlebot", "verified", "other-4xx"): 1,
        ("Googlebot", "verified", "5xx"): 1, ("Googlebot", "verified", "none"): 1,
    }
    assert ReportCounts.from_json(json.loads(json.dumps(counts.to_json()))) == counts


def test_disallowed_requests_are_counted_apart_by_identity():
    since = "2026-11-01T00:00:00Z"
    row = ("www.example.com", "/private/a", "disallowed", "rule", "disallow", "/private/", 4, since, "200")
    counts = ReportCounts.of([verdict(), verdict(identity="spoofed"), verdict(identity="spoofed"), verdict(identity="unverified")])
    assert counts.disallowed == {
        ("Googlebot", "verified"): CrawlerDisallowed(1, 1, ((row, 1),)),
        ("Googlebot", "spoofed"): CrawlerDisallowed(2, 1, ((row, 2),)),
        ("Googlebot", "unverified"): CrawlerDisallowed(1, 1, ((row, 1),)),
    }
    assert ReportCounts.from_json(json.loads(json.dumps(counts.to_json()))) == counts


def test_the_page_shows_the_top_rows_of_a_crawlers_own_identities_together():
    """Kept per identity, the top rows of verified and unverified requests together are those of
    all of them: each row is of one identity."""
    verdicts = []
    for number in range(15):
        verdicts += [verdict(path=f"/private/v{number:02}")] * (number + 1)
        verdicts += [verdict(path=f"/private/u{number:02}", identity="unverified")] * (2 * number + 1)
        verdicts += [verdict(path=f"/private/s{number:02}", identity="spoofed")] * 100
    counts = ReportCounts.from_json(json.loads(json.dumps(ReportCounts.of(verdicts).to_json())))
    shown = disallowed_by_crawler(counts)["Googlebot"]
    every = Counter(v["path"] for v in verdicts if v["identity"] != "spoofed")
    table = html_report._disallowed_table([shown["verified"], shown["unverified"]])
    paths = re.findall(r"/private/[uvs]\d\d", table)
    assert paths == sorted(every, key=lambda path: (-every[path], path))[:TOP_PATHS]
    assert (shown["verified"].requests, shown["unverified"].requests, shown["spoofed"].requests) == (120, 225, 1500)
    assert shown["verified"].distinct == shown["unverified"].distinct == 15


def test_run_health_counts_what_went_unjudged_and_what_kept_identities_open():
    day = date(2026, 11, 2)
    counts = ReportCounts.of([
        verdict(decision="unknown", reason="no-host", host=None),
        verdict(decision="unknown", reason="unknown-host", host="www.example.org"),
        verdict(decision="unknown", reason="unknown-host", host="www.example.org"),
        verdict(identity="unverified", identity_method="reverse-dns",
                identity_evidence="dns-off: needs reverse DNS; no range snapshot for google-common-crawlers"),
        verdict(identity="unverified", identity_method="reverse-dns", identity_evidence="dns-off: needs reverse DNS; not in x"),
        verdict(identity="spoofed", identity_method="reverse-dns", identity_evidence="PTR of 66.249.66.1: nxdomain"),
        verdict(identity="unverified", identity_method="reverse-dns", identity_evidence="PTR of 66.249.66.1: timeout"),
    ])
    assert counts.unjudged == {("no-host", None, day): 1, ("unknown-host", "www.example.org", day): 2}
    assert counts.identity_notes == {
        ("Googlebot", "no-range-snapshot", day): 1, ("Googlebot", "dns-off", day): 1,
        ("Googlebot", "dns-nxdomain", day): 1, ("Googlebot", "dns-failed", day): 1,
    }


def test_the_report_names_the_disallowed_fields_in_their_order():
    assert tuple(f.name for f in dataclasses.fields(Disallowed)) == ("identity", *report_counts.DISALLOWED_FIELDS)


OFFSETS = st.sampled_from([UTC, timezone(timedelta(hours=-11)), timezone(timedelta(hours=5, minutes=45))])
# Mostly a few hours of one day, as a log's lines come, with a moment of any year now and then.
MOMENTS = st.one_of(
    st.builds(
        lambda seconds, offset: (datetime(2026, 11, 2, tzinfo=UTC) + timedelta(seconds=seconds)).astimezone(offset),
        st.integers(0, 4 * 3600), OFFSETS,
    ),
    st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 12, 30), timezones=OFFSETS),
)
VERDICTS = st.builds(
    verdict,
    ts=MOMENTS,
    host=st.sampled_from([None, "a.example", "b.example"]),
    client_ip=st.sampled_from([None, "192.0.2.1", "2001:db8::1"]),
    user_agent=st.text(max_size=8),
    path=st.text(max_size=8),  # lone surrogates and all: the file escapes them
    crawler=st.sampled_from([None, "Googlebot", "(none)"]),
    operator=st.sampled_from([None, "Google"]),
    identity=st.sampled_from(["verified", "spoofed", "undeclared"]),
    robots_version=st.one_of(st.none(), st.builds(
        lambda moment, status: {"effective_from": moment, "status": status, "sha256": None},
        st.datetimes(timezones=st.just(UTC)), st.sampled_from(["200", "unreachable", None]),
    )),
    rule_line=st.one_of(st.none(), st.integers(1, 500)),
    decision=st.sampled_from(["allowed", "disallowed", "disallowed-within-grace", "unknown"]),
    reason=st.sampled_from(["rule", "no-host", "unknown-host"]),
    identity_evidence=st.sampled_from([None, "dns-off: needs reverse DNS", "no range snapshot for bingbot"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(VERDICTS, max_size=6), max_size=5))
def test_batch_counts_add_up_to_the_whole_and_survive_the_file(batches):
    verdicts = [v for batch in batches for v in batch]
    whole = ReportCounts.of(verdicts)
    assert whole.timeline == Counter((label(v), hour(v["ts"])) for v in verdicts)  # in any time order
    added = ReportCounts()
    for batch in batches:
        added.merge(ReportCounts().add(batch))
    added.disallowed = report_counts.top_disallowed(sum(map(report_counts.disallowed_keys, batches), Counter()))
    assert added == whole
    document = json.loads(json.dumps(whole.to_json(), sort_keys=True))
    assert ReportCounts.from_json(document) == whole


def reference_top(counts: Counter) -> dict:
    """Per crawler and identity: all requests, all distinct rows, and the TOP_PATHS most requested,
    by sorting every row of the crawler and identity (most requested, then path, then the other
    fields nulls first)."""
    result = {}
    for name in {key[:2] for key in counts}:
        rows = [(key[2:], n) for key, n in counts.items() if key[:2] == name]
        ordered = sorted(rows, key=lambda row: (-row[1], row[0][1], [(v is not None, v) for v in row[0]]))
        result[name] = CrawlerDisallowed(sum(n for _, n in rows), len(rows), tuple(ordered[:TOP_PATHS]))
    return result


ROW = st.tuples(
    st.sampled_from(["Googlebot", "bingbot"]), st.sampled_from(["verified", "spoofed"]),
    st.sampled_from([None, "a.example"]), st.text("/ab", max_size=3),
    st.just("disallowed"), st.just("rule"), st.just("disallow"), st.just("/"), st.sampled_from([None, 1, 2]),
    st.just(None), st.just("200"),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(ROW, st.integers(1, 4), max_size=40), st.integers(1, 4))
def test_the_top_rows_and_totals_are_those_of_the_whole_in_any_parts(counts, parts):
    """Rows summed per key arrive at the per-crawler combine in any order and any split."""
    expected = reference_top(Counter(counts))
    assert report_counts.top_disallowed(counts) == expected
    items = list(counts.items())
    merged = {}
    for number, ((name, identity, *fields), n) in enumerate(items):
        tops = merged.setdefault((name, identity), [TopDisallowed() for _ in range(parts)])
        tops[number % parts].add(tuple(fields), n)
    for name, tops in merged.items():
        total = TopDisallowed()
        for top in reversed(tops):
            total.merge(top)
        assert total.result() == expected[name]
    assert TopDisallowed().result() == CrawlerDisallowed(0, 0, ())


@pytest.mark.slow
def test_count_for_report_combines_the_batches_of_a_pipeline():
    batches = [
        [verdict(), verdict(identity="spoofed")],
        [verdict(crawler=None, ts=datetime(2026, 11, 3, 4, 5, tzinfo=UTC))],
        [verdict(decision="allowed", host="b.example")] * 3,
    ]
    options = PipelineOptions(["--runner=FnApiRunner"])
    with TestPipeline(options=options) as p:
        counted = p | beam.Create(list(map(verdict_block, batches))) | CountForReport()
        assert_that(counted, equal_to([ReportCounts.of(v for batch in batches for v in batch)]))
    with grouping_on_disk() as on_disk, TestPipeline(options=options) as p:  # a local run's grouping
        counted = p | beam.Create(list(map(verdict_block, batches))) | CountForReport(on_disk)
        assert_that(counted, equal_to([ReportCounts.of(v for batch in batches for v in batch)]))
    with TestPipeline(options=options) as p:  # no verdicts: one empty count, so the file is always written
        counted = p | beam.Create([], reshuffle=False).with_output_types(pa.Table) | CountForReport()
        assert_that(counted, equal_to([ReportCounts()]))


def without_report_counts(out: Path, older: Path) -> Path:
    """A copy of the run as a version that wrote no report_counts.json left it."""
    shutil.copytree(out, older)
    (older / "report_counts.json").unlink()
    manifest = json.loads((older / MANIFEST).read_text())
    del manifest["tables"]["report_counts"]
    (older / MANIFEST).write_text(json.dumps(manifest))
    return older


@pytest.mark.slow
@pytest.mark.parametrize("run", ["sample_run", "sample_run_parquet"])
def test_a_run_folder_without_report_counts_gets_the_same_report_from_its_verdicts(tmp_path, capsys, request, run):
    out = request.getfixturevalue(run)
    older = without_report_counts(out, tmp_path / "older")
    (older / "report.html").unlink()
    assert cli.main(["report", str(older)]) == 0
    assert (older / "report.html").read_bytes() == (out / "report.html").read_bytes()
    assert f"report: {older / html_report.FILE_NAME}" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["{}", "{\"hosts\": [[1]]", "\ud800", '{"hosts": 7}'])
def test_damaged_report_counts_are_an_error_that_says_what_to_do(sample_run, tmp_path, capsys, damage):
    out = Path(shutil.copytree(sample_run, tmp_path / "out"))
    (out / "report_counts.json").write_text(damage, encoding="utf-8", errors="surrogatepass")
    capsys.readouterr()
    assert cli.main(["report", str(out)]) == 2
    error = capsys.readouterr().err
    assert "unreadable report counts" in error and "run the audit again" in error
