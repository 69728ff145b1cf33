"""Identity from published IP ranges: snapshots by date, lookups, verdicts and their evidence.

Prefixes are documentation networks (RFC 5737, RFC 3849), never an operator's real ranges.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from config.snapshots import load_ranges
from matcher.agents import default_registry
from matcher.identity import (
    IdentityResult,
    RangeIndex,
    build_range_index,
    parse_ip,
    undeclared,
    verify,
)

DATA_RANGES = Path(__file__).parent / "data" / "ranges"
JAN, JUN = date(2026, 1, 1), date(2026, 6, 1)
OPERATORS = {name: s.operator for name, s in default_registry().range_sources.items()}


def _doc(*prefixes: str) -> dict:
    """An operator-shaped file holding `prefixes`."""
    entries = [{"ipv6Prefix" if ":" in p else "ipv4Prefix": p} for p in prefixes]
    return {"creationTime": "2026-01-01T00:00:00Z", "prefixes": entries}


def _index(*documents) -> RangeIndex:
    return build_range_index(documents, OPERATORS)


@pytest.fixture(scope="module")
def index() -> RangeIndex:
    return _index(
        ("google-common-crawlers", JAN, _doc("192.0.2.0/24", "2001:db8:1::/48")),
        ("google-common-crawlers", JUN, _doc("198.51.100.0/24", "2001:db8:2::/48")),
        ("bingbot", JAN, _doc("203.0.113.0/26")),
        ("openai-gptbot", JAN, _doc("203.0.113.128/25", "203.0.113.192/27")),
        ("anthropic", JAN, _doc("203.0.113.64/27")),
    )


def crawler(name: str):
    return default_registry().get(name)


def at(day: str) -> datetime:
    return datetime.fromisoformat(day + "T12:00:00+00:00")


# ----------------------------------------------------------------------------- verified


@pytest.mark.parametrize(
    "ip, when, prefix, snapshot",
    [
        ("192.0.2.7", "2026-03-01", "192.0.2.0/24", "2026-01-01"),
        ("198.51.100.9", "2026-07-01", "198.51.100.0/24", "2026-06-01"),
        ("2001:db8:1::5", "2026-03-01", "2001:db8:1::/48", "2026-01-01"),
        ("::ffff:192.0.2.7", "2026-03-01", "192.0.2.0/24", "2026-01-01"),
        ("[2001:DB8:1::5]", "2026-03-01", "2001:db8:1::/48", "2026-01-01"),
    ],
)
def test_ip_in_the_crawlers_ranges_is_verified(index, ip, when, prefix, snapshot):
    result = verify(crawler("Googlebot"), ip, at(when), index)
    assert result == IdentityResult(
        "verified", "ip-range", f"{prefix} in google-common-crawlers snapshot {snapshot}", "Google"
    )


def test_a_class_member_shares_its_class_ranges(index):
    assert verify(crawler("Googlebot-Image"), "192.0.2.1", at("2026-02-01"), index).status == "verified"


def test_ip_outside_the_ranges_is_spoofed_with_the_snapshot_checked(index):
    result = verify(crawler("Googlebot"), "203.0.113.5", at("2026-03-01"), index)
    assert result.status == "spoofed" and result.method == "ip-range"
    assert result.evidence == "not in google-common-crawlers snapshot 2026-01-01"


def test_another_operators_range_does_not_verify(index):
    # 203.0.113.130 is a GPTBot address: a "bingbot" from there is a fake
    assert verify(crawler("GPTBot"), "203.0.113.130", at("2026-02-01"), index).status == "verified"
    assert verify(crawler("bingbot"), "203.0.113.130", at("2026-02-01"), index).status == "spoofed"


# --------------------------------------------------------------------- snapshot choice


@pytest.mark.parametrize(
    "when, old_net, new_net",
    [
        ("2025-06-01", "verified", "spoofed"),  # before every snapshot: the earliest applies
        ("2026-01-01", "verified", "spoofed"),  # on the snapshot's own day
        ("2026-05-31", "verified", "spoofed"),
        ("2026-06-01", "spoofed", "verified"),  # a new snapshot takes over on its day
        ("2027-01-01", "spoofed", "verified"),
    ],
)
def test_the_snapshot_in_force_on_the_request_day_is_used(index, when, old_net, new_net):
    googlebot = crawler("Googlebot")
    assert verify(googlebot, "192.0.2.7", at(when), index).status == old_net
    assert verify(googlebot, "198.51.100.7", at(when), index).status == new_net


def test_the_request_day_is_taken_in_utc(index):
    # 2026-06-01 01:00 at UTC+05:00 is still 2026-05-31 in UTC
    local = datetime(2026, 6, 1, 1, 0, tzinfo=timezone(timedelta(hours=5)))
    assert verify(crawler("Googlebot"), "192.0.2.7", local, index).status == "verified"
    assert verify(crawler("Googlebot"), "192.0.2.7", date(2026, 6, 1), index).status == "spoofed"
    naive = datetime(2026, 5, 31, 23, 59)
    assert verify(crawler("Googlebot"), "192.0.2.7", naive, index).status == "verified"


# ------------------------------------------------------------------- other verdicts


def test_robots_only_token_is_always_spoofed(index):
    result = verify(crawler("Google-Extended"), "192.0.2.7", at("2026-03-01"), index)
    assert result == IdentityResult(
        "spoofed", "robots-only", "token is robots-only; never sent as a User-Agent", "Google"
    )


def test_reverse_dns_only_crawler_is_unverified_with_dns_off(index):
    result = verify(crawler("YandexBot"), "192.0.2.7", at("2026-03-01"), index)
    assert result == IdentityResult("unverified", "reverse-dns", "dns-off: needs reverse DNS", "Yandex")


def test_crawler_without_any_method_is_unverifiable(index):
    result = verify(crawler("Bytespider"), "192.0.2.7", at("2026-03-01"), index)
    assert result.status == "unverifiable" and result.operator == "ByteDance"


@pytest.mark.parametrize("ip", ["not-an-ip", "", "999.1.1.1", "192.0.2.7:443"])
def test_invalid_client_ip_is_unverified_not_spoofed(index, ip):
    result = verify(crawler("Googlebot"), ip, at("2026-03-01"), index)
    assert (result.status, result.evidence) == ("unverified", "invalid client ip")


def test_no_snapshot_loaded_is_never_spoofed():
    empty = _index()
    perplexity = verify(crawler("PerplexityBot"), "192.0.2.7", at("2026-03-01"), empty)
    assert perplexity == IdentityResult(
        "unverified", "ip-range", "no range snapshot for perplexitybot", "Perplexity"
    )
    googlebot = verify(crawler("Googlebot"), "192.0.2.7", at("2026-03-01"), empty)
    assert googlebot.status == "unverified"
    assert googlebot.evidence.startswith("dns-off: needs reverse DNS")


def test_partly_loaded_sources_do_not_prove_a_fake():
    # FeedFetcher-Google is published in three files; only one is loaded here
    partial = _index(("google-user-triggered-fetchers", JAN, _doc("192.0.2.0/24")))
    fetcher = crawler("FeedFetcher-Google")
    assert verify(fetcher, "192.0.2.9", at("2026-03-01"), partial).status == "verified"
    missed = verify(fetcher, "198.51.100.9", at("2026-03-01"), partial)
    assert missed.status == "unverified"
    assert "not in google-user-triggered-fetchers snapshot 2026-01-01" in missed.evidence


def test_spoofed_evidence_names_every_source_checked():
    full = _index(
        ("google-user-triggered-fetchers", JAN, _doc("192.0.2.0/24")),
        ("google-user-triggered-fetchers-google", JUN, _doc("192.0.2.0/24")),
        ("google-user-triggered-agents", JAN, _doc("192.0.2.0/24")),
    )
    result = verify(crawler("Google-Read-Aloud"), "198.51.100.9", at("2026-07-01"), full)
    assert result.status == "spoofed"
    assert result.evidence == (
        "not in google-user-triggered-fetchers snapshot 2026-01-01, "
        "google-user-triggered-fetchers-google snapshot 2026-06-01, "
        "google-user-triggered-agents snapshot 2026-01-01"
    )


# ------------------------------------------------------------------------- undeclared


def test_unclaimed_request_from_a_crawler_range_is_undeclared(index):
    result = undeclared("203.0.113.10", at("2026-03-01"), index)
    assert result == IdentityResult(
        "undeclared", "ip-range", "203.0.113.0/26 in bingbot snapshot 2026-01-01", "Microsoft"
    )


def test_undeclared_picks_the_longest_prefix(index):
    result = undeclared("203.0.113.200", at("2026-03-01"), index)
    assert result.evidence.startswith("203.0.113.192/27 in openai-gptbot")


def test_undeclared_follows_the_snapshot_in_force(index):
    assert undeclared("192.0.2.7", at("2026-03-01"), index).operator == "Google"
    assert undeclared("192.0.2.7", at("2026-07-01"), index) is None
    assert undeclared("2001:db8:2::1", at("2026-07-01"), index).operator == "Google"


@pytest.mark.parametrize("ip", ["198.18.0.1", "2001:db8:ffff::1", "garbage"])
def test_no_crawler_range_no_undeclared(index, ip):
    assert undeclared(ip, at("2026-03-01"), index) is None


# ------------------------------------------------------------------- parsing snapshots


def test_invisible_characters_in_prefixes_are_dropped():
    index = _index(("bingbot", JAN, _doc("\u200b203.0.113.0/26\u200b", " 2001:db8:5::/48\ufeff")))
    assert not index.problems
    assert verify(crawler("bingbot"), "203.0.113.1", JAN, index).status == "verified"
    assert verify(crawler("bingbot"), "2001:db8:5::1", JAN, index).status == "verified"


def test_bad_prefixes_are_reported_and_the_rest_kept():
    document = {"prefixes": [{"ipv4Prefix": "203.0.113.0/26"}, {"ipv4Prefix": "300.1.1.0/24"},
                             {"ipv6Prefix": 42}, "203.0.113.64/26", {}]}
    index = _index(("bingbot", JAN, document))
    assert len(index.problems) == 4
    assert all(p.startswith("bingbot/2026-01-01.json: prefixes[") for p in index.problems)
    assert verify(crawler("bingbot"), "203.0.113.1", JAN, index).status == "verified"


@pytest.mark.parametrize("document", [{"prefixes": []}, {"creationTime": "x"}, [], "garbage"])
def test_unusable_file_is_skipped_so_the_previous_snapshot_stays(document):
    index = _index(("bingbot", JAN, _doc("203.0.113.0/26")), ("bingbot", JUN, document))
    assert [s.taken for s in index.snapshots("bingbot")] == [JAN]
    assert index.problems and index.problems[-1].startswith("bingbot/2026-06-01.json")
    assert verify(crawler("bingbot"), "203.0.113.1", at("2026-07-01"), index).status == "verified"


def test_unknown_source_and_duplicate_day_are_reported():
    index = _index(
        ("no-such-source", JAN, _doc("192.0.2.0/24")),
        ("bingbot", JAN, _doc("203.0.113.0/26")),
        ("bingbot", JAN, _doc("198.51.100.0/24")),
    )
    assert index.sources == ("bingbot",)
    assert len(index.problems) == 2


def test_lookup_probes_each_prefix_length_once_not_each_prefix():
    many = [f"10.{a}.{b}.0/24" for a in range(40) for b in range(50)]
    index = _index(("bingbot", JAN, _doc(*many, "10.200.0.0/16")))
    snapshot = index.snapshot_at("bingbot", JAN)
    assert snapshot.size == 2001
    assert len(snapshot.table.levels[4]) == 2  # two prefix lengths, two dict probes
    assert snapshot.find(parse_ip("10.39.49.200")).prefix == "10.39.49.0/24"
    assert snapshot.find(parse_ip("10.200.7.7")).prefix == "10.200.0.0/16"
    assert snapshot.find(parse_ip("10.40.0.1")) is None


def test_parse_ip_unwraps_ipv4_mapped_addresses():
    assert str(parse_ip("::ffff:192.0.2.7")) == "192.0.2.7"
    assert str(parse_ip(" 2001:db8::1 ")) == "2001:db8::1"
    assert parse_ip("example.com") is None
    assert parse_ip("1" * 10_000) is None


# --------------------------------------------------------------------- the ranges folder


def test_load_ranges_reads_the_folder_and_reports_what_it_skips():
    index = load_ranges(DATA_RANGES)
    assert index.sources == ("bingbot", "google-common-crawlers")
    assert [s.taken for s in index.snapshots("google-common-crawlers")] == [JAN, JUN]
    problems = "\n".join(index.problems)
    assert "latest.json: expected a file named YYYY-MM-DD.json" in problems
    assert "'not-a-source' is not a range source" in problems
    assert "'not-a-prefix'} is not an IP prefix" in problems  # its zero-width neighbour parsed
    assert len(index.problems) == 3
    assert verify(crawler("bingbot"), "203.0.113.9", JAN, index).status == "verified"
    assert verify(crawler("Googlebot"), "198.51.100.1", JUN, index).status == "verified"


def test_the_shipped_ranges_folder_is_empty_but_valid():
    index = load_ranges()
    assert index.sources == () and index.problems == ()


def test_a_missing_ranges_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="ranges folder not found"):
        load_ranges(tmp_path / "absent")


def test_an_invalid_json_file_is_reported(tmp_path):
    (tmp_path / "bingbot").mkdir()
    (tmp_path / "bingbot" / "2026-01-01.json").write_text("{not json", "utf-8")
    (tmp_path / "bingbot" / "2026-13-01.json").write_text("{}", "utf-8")
    index = load_ranges(tmp_path)
    assert index.sources == ()
    assert [p.split(": ", 1)[1][:14] for p in index.problems] == [
        "unreadable JSO", "expected a fil"
    ]
