"""The change audit as the report words it (`pipeline.report.change_audit`): one sentence per
crawler and identity, the changes among robots.txt versions, the rows in the order an owner reads."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.report import change_audit

CHANGE = datetime(2026, 11, 3, 10, tzinfo=timezone.utc)


def row(crawler="GPTBot", identity="verified", direction="restricts", before=1, after=2, grace=0, refetch=0,
        violations=0, fetched=None, last=None, host="www.example.com", at=CHANGE) -> dict:
    return {
        "host": host, "change_at": at, "direction": direction, "crawler": crawler, "identity": identity,
        "requests_before": before, "requests_after": after, "within_grace": grace, "before_refetch": refetch,
        "violations": violations, "between_captures": 0,
        "first_robots_fetch_after": None if fetched is None else at + fetched,
        "last_newly_disallowed_request": None if last is None else at + last,
    }


def plain(text: str) -> str:
    return text.replace("\u00a0", " ")


def test_a_crawler_that_re_read_says_when_and_what_it_asked_for_before_and_after():
    said = change_audit.sentence(row(after=3, refetch=1, violations=2, fetched=timedelta(hours=3), last=timedelta(days=2)))
    assert plain(said) == (
        "GPTBot re-read robots.txt 3 h after the change; 1 request to newly disallowed paths before that, 2 after"
        " (the last 2 days after the change); 1 request to them in the period before the change."
    )


def test_a_crawler_that_stopped_at_once_made_no_request_after():
    said = change_audit.sentence(row(after=0, fetched=timedelta(minutes=30)))
    assert plain(said) == (
        "GPTBot re-read robots.txt 30 min after the change and made no request to a newly disallowed path after"
        " the change; 1 request to them in the period before the change."
    )


def test_a_crawler_that_never_re_read_says_so():
    said = change_audit.sentence(row(crawler="ClaudeBot", before=0, after=2, refetch=1, violations=1, last=timedelta(hours=38)))
    assert plain(said) == (
        "ClaudeBot re-read no robots.txt after the change (none seen in these logs); 2 requests to newly"
        " disallowed paths after it (the last 1 day 14 h after the change); none to them in the period before the change."
    )


def test_a_claim_not_proven_never_reads_as_the_crawler():
    said = change_audit.sentence(row(crawler="Googlebot", identity="spoofed", before=0, grace=2, last=timedelta(hours=11)))
    assert said.startswith("Claimed Googlebot (spoofed, not proven) re-read no robots.txt")
    assert change_audit.who(row(identity="unverifiable")) == "GPTBot (no way to verify)"


def test_newly_allowed_paths_are_told_as_such():
    said = change_audit.sentence(row(crawler="Googlebot", direction="opens", before=1, after=1))
    assert said == "Googlebot: paths the change newly allowed; 1 request to them in the period before the change, 1 after."


@pytest.mark.parametrize("span, words", [
    (timedelta(seconds=45), "45 s"), (timedelta(minutes=5, seconds=9), "5 min"), (timedelta(hours=3), "3 h"),
    (timedelta(hours=3, minutes=20), "3 h 20 min"), (timedelta(days=1, hours=14, minutes=3), "1 day 14 h"),
    (timedelta(days=2), "2 days"),
])
def test_a_span_reads_in_its_two_largest_units_each_number_kept_with_its_unit(span, words):
    said = change_audit.duration(span)
    assert plain(said) == words
    assert re.fullmatch(r"\d+\u00a0[a-z]+( \d+\u00a0[a-z]+)?", said)


def test_changes_are_new_parsed_bodies_replacing_parsed_bodies():
    def version(hours, kind="ok", sha="a", host="a.example"):
        return {"host": host, "effective_from": CHANGE + timedelta(hours=hours), "kind": kind, "sha256": sha}

    versions = [
        version(0), version(1, sha="b"), version(2, sha="b"),  # a change, then the same body again
        version(3, kind="error", sha=None), version(4, sha="c"),  # to and from an error: no change
        version(5, sha="d"), version(6, host="b.example", sha="e"),  # a change; another host's first version
    ]
    assert change_audit.moments(versions) == [("a.example", CHANGE + timedelta(hours=1)), ("a.example", CHANGE + timedelta(hours=5))]


def test_the_crawlers_own_rows_come_before_claims_and_restrictions_before_openings():
    rows = [
        row(crawler="Googlebot", identity="spoofed", after=50),
        row(crawler="Googlebot", direction="opens", after=90),
        row(crawler="bingbot", after=1),
        row(crawler="GPTBot", after=5),
        row(crawler="GPTBot", at=CHANGE - timedelta(days=1)),
    ]
    first, second = change_audit.by_change(rows)
    assert first.at < second.at and len(first.rows) == 1
    assert [(r["crawler"], r["identity"], r["direction"]) for r in second.rows] == [
        ("GPTBot", "verified", "restricts"), ("bingbot", "verified", "restricts"),
        ("Googlebot", "spoofed", "restricts"), ("Googlebot", "verified", "opens"),
    ]
