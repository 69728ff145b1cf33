"""Identity (`matcher.identity`): a claim checked against the crawler's published IP ranges
(snapshots by date) and against forward-confirmed reverse DNS on resolver answers built here, the
verdicts and their evidence. Range snapshots themselves are tested in test_ip_ranges.py, the DNS
confirmation alone in test_reverse_dns.py, the client behind proxies in test_clientip.py.

Prefixes are documentation networks (RFC 5737, RFC 3849), never an operator's real ranges.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from matcher.identity import DNS_OFF_EVIDENCE, IdentityResult, reverse_dns_address, undeclared, verify
from matcher.ip_ranges import RangeIndex, build_range_index
from matcher.reverse_dns import DnsAnswer, Lookup

from range_fixtures import JAN, JUN, OPERATORS, at, crawler, range_document, range_index, sample_index


MAY = date(2026, 5, 25)


@pytest.fixture(scope="module")
def index() -> RangeIndex:
    return sample_index()


# ----------------------------------------------------------------------------- verified


@pytest.mark.parametrize(
    "ip, when, prefix, snapshot",
    [
        ("192.0.2.7", "2026-03-01", "192.0.2.0/24", "2026-01-01"),
        ("198.51.100.9", "2026-06-01", "198.51.100.0/24", "2026-06-01"),
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
    assert verify(crawler("GPTBot"), "203.0.113.130", at("2026-01-20"), index).status == "verified"
    assert verify(crawler("bingbot"), "203.0.113.130", at("2026-01-20"), index).status == "spoofed"


# --------------------------------------------------------------------- snapshot choice


@pytest.mark.parametrize(
    "when, old_net, new_net",
    [
        ("2025-06-01", "unverified", "unverified"),  # no snapshot within 30 days: no range evidence
        ("2025-12-20", "verified", "spoofed"),  # the January list speaks 12 days before its day
        ("2026-03-01", "verified", "spoofed"),  # the January list stands until the June one
        ("2026-05-31", "verified", "verified"),  # the June list, a day later, holds the new network
        ("2026-06-01", "verified", "verified"),  # the January list stood until yesterday
        ("2026-07-01", "verified", "verified"),  # January's is stale, June's 30 days before
        ("2027-01-01", "verified", "verified"),  # both stale: an operator's address stays its own
    ],
)
def test_a_snapshot_stands_until_the_next_and_speaks_within_the_window(index, when, old_net, new_net):
    googlebot = crawler("Googlebot")
    assert verify(googlebot, "192.0.2.7", at(when), index).status == old_net
    assert verify(googlebot, "198.51.100.7", at(when), index).status == new_net


def test_a_request_far_from_every_snapshot_has_no_range_evidence(index):
    # a 2015 log checked against lists published in 2026: neither list says who held the address
    days = (JAN - date(2015, 3, 1)).days
    for ip in ("192.0.2.7", "203.0.113.5"):
        result = verify(crawler("Googlebot"), ip, at("2015-03-01"), index)
        assert (result.status, result.method) == ("unverified", "reverse-dns")
        assert result.evidence == (
            f"{DNS_OFF_EVIDENCE}; no snapshot of google-common-crawlers within 30 days of 2015-03-01 "
            f"(nearest 2026-01-01, {days} days after the request)"
        )
    gptbot = verify(crawler("GPTBot"), "203.0.113.130", at("2015-03-01"), index)
    assert gptbot.status == "unverified" and "within 30 days of 2015-03-01" in gptbot.evidence
    assert undeclared("192.0.2.7", at("2015-03-01"), index) is None


# ----------------------------------------------------------------- the window around a request


def test_a_snapshot_within_30_days_after_the_request_proves_the_address(index):
    # the first Google snapshot is 2026-01-01; 2025-12-02 is 30 days before it
    result = verify(crawler("Googlebot"), "192.0.2.7", at("2025-12-02"), index)
    assert result == IdentityResult(
        "verified", "ip-range",
        "192.0.2.0/24 in google-common-crawlers snapshot 2026-01-01 (later: 30 days after the request)", "Google",
    )
    one_day = verify(crawler("GPTBot"), "203.0.113.130", at("2025-12-31"), index)
    assert one_day.evidence.endswith("snapshot 2026-01-01 (later: 1 day after the request)")


def test_absence_from_a_snapshot_within_the_window_proves_a_fake_before_the_first(index):
    # today's list proves a fake from ten days ago: a spoofer cannot send from the operator's addresses
    missed = verify(crawler("GPTBot"), "192.0.2.7", at("2025-12-20"), index)
    assert (missed.status, missed.method, missed.evidence) == (
        "spoofed", "ip-range", "not in openai-gptbot snapshot 2026-01-01"
    )
    # in the later snapshot, but taken 31 days after the request: too far to speak for it
    far = verify(crawler("Googlebot"), "192.0.2.7", at("2025-12-01"), index)
    assert far.status == "unverified"
    assert far.evidence.endswith("no snapshot of google-common-crawlers within 30 days of 2025-12-01 (nearest 2026-01-01, 31 days after the request)")


def test_a_snapshot_proves_only_what_it_holds_of_the_right_crawler(index):
    # Bing's January list does not prove a GPTBot claim from its address
    assert verify(crawler("GPTBot"), "203.0.113.9", at("2025-12-20"), index).status == "spoofed"
    # the June Google list is not within 30 days of a December request: the January one decides
    december = verify(crawler("Googlebot"), "198.51.100.7", at("2025-12-20"), index)
    assert (december.status, december.evidence) == ("spoofed", "not in google-common-crawlers snapshot 2026-01-01")


def test_more_than_30_days_after_the_history_absence_proves_nothing(index):
    # the last Google snapshot is 2026-06-01: on 2026-07-01 it is within the window, on 2026-07-02 not
    assert verify(crawler("Googlebot"), "203.0.113.5", at("2026-07-01"), index).status == "spoofed"
    missed = verify(crawler("Googlebot"), "203.0.113.5", at("2026-07-02"), index)
    assert (missed.status, missed.method) == ("unverified", "reverse-dns")
    assert missed.evidence == (
        f"{DNS_OFF_EVIDENCE}; no snapshot of google-common-crawlers within 30 days of 2026-07-02"
        " (nearest 2026-06-01, 31 days before the request)"
    )
    held = verify(crawler("Googlebot"), "198.51.100.7", at("2026-07-02"), index)
    assert (held.status, held.evidence) == (
        "verified",
        "198.51.100.0/24 in google-common-crawlers snapshot 2026-06-01 (stale: 31 days before the request; run update-ranges)",
    )


def test_a_listing_that_ended_within_the_window_says_how_far(index):
    removed = verify(crawler("Googlebot"), "192.0.2.7", at("2026-06-10"), index)
    assert (removed.status, removed.evidence) == (
        "verified",
        "192.0.2.0/24 in google-common-crawlers snapshot 2026-01-01 (earlier: stood to 2026-05-31, 10 days before the request)",
    )


def test_the_window_is_a_setting():
    documents = [("google-common-crawlers", JAN, range_document("192.0.2.0/24"))]
    for window, status in ((9, "unverified"), (10, "spoofed")):
        ranges = build_range_index(documents, OPERATORS, window=window)
        assert verify(crawler("Googlebot"), "203.0.113.5", at("2025-12-22"), ranges).status == status


def test_the_request_day_is_taken_in_utc(index):
    # 2026-06-01 01:00 at UTC+05:00 is still 2026-05-31 in UTC, the January snapshot's last day
    in_span = "192.0.2.0/24 in google-common-crawlers snapshot 2026-01-01"
    local = datetime(2026, 6, 1, 1, 0, tzinfo=timezone(timedelta(hours=5)))
    assert verify(crawler("Googlebot"), "192.0.2.7", local, index).evidence == in_span
    next_day = verify(crawler("Googlebot"), "192.0.2.7", date(2026, 6, 1), index).evidence
    assert next_day == f"{in_span} (earlier: stood to 2026-05-31, 1 day before the request)"
    naive = datetime(2026, 5, 31, 23, 59)
    assert verify(crawler("Googlebot"), "192.0.2.7", naive, index).evidence == in_span


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


@pytest.mark.parametrize("ip", ["not-an-ip", "", "999.1.1.1", "192.0.2.7:443443", "192.0.2.7:", "192.0.2.7:http", "[192.0.2.7]x"])
def test_invalid_client_ip_is_unverified_not_spoofed(index, ip):
    result = verify(crawler("Googlebot"), ip, at("2026-03-01"), index)
    assert (result.status, result.evidence) == ("unverified", "invalid client ip")


def test_an_address_with_a_zone_id_is_unverified_with_its_reason_and_asks_no_dns(index):
    googlebot = crawler("Googlebot")
    result = verify(googlebot, "fe80::1%eth0", at("2026-03-01"), index, dns={})
    assert result.status == "unverified" and result.method == "reverse-dns"
    assert result.evidence.startswith("fe80::1%eth0 carries a zone id")
    assert reverse_dns_address(googlebot, "[fe80::1%eth0]:443", at("2026-03-01"), index) is None


def test_a_port_and_brackets_name_the_same_address(index):
    googlebot = crawler("Googlebot")
    assert reverse_dns_address(googlebot, "[2001:db8::7]:443", at("2026-03-01"), index) == "2001:db8::7"
    assert reverse_dns_address(googlebot, "198.51.100.9:8080", at("2026-03-01"), index) == "198.51.100.9"


def test_no_snapshot_loaded_is_never_spoofed():
    empty = range_index()
    perplexity = verify(crawler("PerplexityBot"), "192.0.2.7", at("2026-03-01"), empty)
    assert perplexity == IdentityResult(
        "unverified", "ip-range", "no range snapshot for perplexitybot", "Perplexity"
    )
    googlebot = verify(crawler("Googlebot"), "192.0.2.7", at("2026-03-01"), empty)
    assert googlebot.status == "unverified"
    assert googlebot.evidence.startswith("dns-off: needs reverse DNS")


def test_partly_loaded_sources_do_not_prove_a_fake():
    # FeedFetcher-Google is published in three files; only one is loaded here
    partial = range_index(("google-user-triggered-fetchers", JAN, range_document("192.0.2.0/24")))
    fetcher = crawler("FeedFetcher-Google")
    assert verify(fetcher, "192.0.2.9", at("2026-01-20"), partial).status == "verified"
    missed = verify(fetcher, "198.51.100.9", at("2026-01-20"), partial)
    assert missed.status == "unverified"
    assert "not in google-user-triggered-fetchers snapshot 2026-01-01" in missed.evidence


def test_spoofed_evidence_names_every_source_checked():
    full = range_index(
        ("google-user-triggered-fetchers", MAY, range_document("192.0.2.0/24")),
        ("google-user-triggered-fetchers-google", JUN, range_document("192.0.2.0/24")),
        ("google-user-triggered-agents", MAY, range_document("192.0.2.0/24")),
    )
    result = verify(crawler("Google-Read-Aloud"), "198.51.100.9", at("2026-06-20"), full)
    assert result.status == "spoofed"
    assert result.evidence == (
        "not in google-user-triggered-fetchers snapshot 2026-05-25, "
        "google-user-triggered-fetchers-google snapshot 2026-06-01, "
        "google-user-triggered-agents snapshot 2026-05-25"
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


# ------------------------------------------------------- forward-confirmed reverse DNS

WHEN = "2026-11-02T10:00:00Z"


def _answer(ip: str, *ptr: str, forward: dict | None = None, error: str | None = None) -> DnsAnswer:
    """An answer as a resolver gives it: `forward` maps a name to its addresses or an error code."""
    lookups = tuple(
        (name, Lookup(error=value) if isinstance(value, str) else Lookup(tuple(value)))
        for name, value in (forward or {}).items()
    )
    return DnsAnswer(ip, Lookup(tuple(ptr), error), lookups, WHEN)


def _dns_verify(
    name: str, ip: str, answer: DnsAnswer | None, ranges: RangeIndex | None = None, when: datetime | None = None
) -> IdentityResult:
    answers = {} if answer is None else {answer.ip: answer}
    return verify(crawler(name), ip, when or at("2026-03-01"), ranges or range_index(), answers)


GOOD = _answer("192.0.2.10", "crawl-192-0-2-10.googlebot.com", forward={"crawl-192-0-2-10.googlebot.com": ["192.0.2.10"]})


def test_a_ptr_name_that_resolves_back_verifies_with_its_evidence():
    assert _dns_verify("Googlebot", "192.0.2.10", GOOD) == IdentityResult(
        "verified", "reverse-dns", f"PTR crawl-192-0-2-10.googlebot.com -> A 192.0.2.10 (DNS {WHEN})", "Google"
    )


@pytest.mark.parametrize(
    "name, verdict",
    [
        ("crawl-192-0-2-10.googlebot.com", "verified"),
        ("googlebot.com", "verified"),  # the suffix itself is a name under it
        ("geo-crawl-192-0-2-10.geo.googlebot.com", "verified"),
        ("rate-limited-proxy-192-0-2-10.google.com", "verified"),  # google.com belongs to the class
        ("crawl-192-0-2-10.evilgooglebot.com", "spoofed"),  # not at a label boundary
        ("crawl-192-0-2-10.googlebot.com.example.net", "spoofed"),
        ("192-0-2-10.gae.googleusercontent.com", "spoofed"),  # any cloud customer has one of these
    ],
)
def test_suffixes_match_at_a_label_boundary_only(name, verdict):
    answer = _answer("192.0.2.10", name, forward={name: ["192.0.2.10"]})
    assert _dns_verify("Googlebot", "192.0.2.10", answer).status == verdict


def test_googleusercontent_proves_only_the_user_triggered_class():
    name = "192-0-2-10.gae.googleusercontent.com"
    answer = _answer("192.0.2.10", name, forward={name: ["192.0.2.10"]})
    assert _dns_verify("FeedFetcher-Google", "192.0.2.10", answer).status == "verified"
    for claimed in ("Googlebot", "AdsBot-Google", "bingbot"):
        assert _dns_verify(claimed, "192.0.2.10", answer).status == "spoofed"


@pytest.mark.parametrize(
    "answer, evidence",
    [
        (_answer("192.0.2.10", error="nxdomain"), "PTR of 192.0.2.10: nxdomain"),
        (_answer("192.0.2.10", error="no-answer"), "PTR of 192.0.2.10: no-answer"),
        (_answer("192.0.2.10"), "PTR of 192.0.2.10: no-answer"),  # an empty answer is no PTR
        (_answer("192.0.2.10", "host.example.net", "x.googlebot.com.evil"),
         "PTR host.example.net, x.googlebot.com.evil not under googlebot.com, google.com"),
        (_answer("192.0.2.10", "a.googlebot.com", forward={"a.googlebot.com": ["198.51.100.1", "192.0.2.11"]}),
         "PTR a.googlebot.com -> A 198.51.100.1, 192.0.2.11, not 192.0.2.10"),
        (_answer("192.0.2.10", "a.googlebot.com", forward={"a.googlebot.com": "nxdomain"}),
         "PTR a.googlebot.com -> A nxdomain"),
        (_answer("192.0.2.10", "a.googlebot.com", forward={"a.googlebot.com": "no-answer"}),
         "PTR a.googlebot.com -> A no-answer"),
    ],
)
def test_dns_that_says_no_is_spoofed(answer, evidence):
    result = _dns_verify("Googlebot", "192.0.2.10", answer)
    assert (result.status, result.method) == ("spoofed", "reverse-dns")
    assert result.evidence == f"{evidence} (DNS {WHEN}); no range snapshot for google-common-crawlers"


@pytest.mark.parametrize(
    "answer, evidence",
    [
        (_answer("192.0.2.10", error="timeout"), "PTR of 192.0.2.10: timeout"),
        (_answer("192.0.2.10", error="servfail"), "PTR of 192.0.2.10: servfail"),
        (_answer("192.0.2.10", error="refused"), "PTR of 192.0.2.10: refused"),
        (_answer("192.0.2.10", "a.googlebot.com", forward={"a.googlebot.com": "timeout"}),
         "PTR a.googlebot.com -> A timeout"),
        # a name never looked up (a snapshot from a registry without the suffix) proves nothing
        (_answer("192.0.2.10", "a.googlebot.com"), "PTR a.googlebot.com -> A not-resolved"),
        # one name refuted, another undecided: undecided wins, both are shown
        (_answer("192.0.2.10", "a.googlebot.com", "b.googlebot.com",
                 forward={"a.googlebot.com": ["198.51.100.1"], "b.googlebot.com": "servfail"}),
         "PTR b.googlebot.com -> A servfail; PTR a.googlebot.com -> A 198.51.100.1, not 192.0.2.10"),
    ],
)
def test_dns_that_cannot_say_is_unverified_never_spoofed(answer, evidence):
    result = _dns_verify("Googlebot", "192.0.2.10", answer)
    assert (result.status, result.evidence) == ("unverified", f"{evidence} (DNS {WHEN}); no range snapshot for google-common-crawlers")


def test_an_address_without_an_answer_is_unverified():
    result = _dns_verify("Googlebot", "192.0.2.10", None)
    assert (result.status, result.evidence) == (
        "unverified", "PTR of 192.0.2.10: not-resolved; no range snapshot for google-common-crawlers"
    )


def test_any_confirming_ptr_name_verifies():
    answer = _answer(
        "192.0.2.10", "host.example.net", "a.googlebot.com", "b.googlebot.com",
        forward={"a.googlebot.com": "timeout", "b.googlebot.com": ["192.0.2.10"]},
    )
    result = _dns_verify("Googlebot", "192.0.2.10", answer)
    assert (result.status, result.evidence) == ("verified", f"PTR b.googlebot.com -> A 192.0.2.10 (DNS {WHEN})")


def test_ipv6_and_ipv4_mapped_clients():
    v6 = _answer("2001:db8::10", "a.googlebot.com", forward={"a.googlebot.com": ["2001:db8:0:0::10"]})
    result = _dns_verify("Googlebot", "2001:DB8::10", v6)
    assert (result.status, result.evidence) == ("verified", f"PTR a.googlebot.com -> AAAA 2001:db8:0:0::10 (DNS {WHEN})")
    assert _dns_verify("Googlebot", "::ffff:192.0.2.10", GOOD).status == "verified"
    assert _dns_verify("Googlebot", "192.0.2.99", GOOD).status == "unverified"  # GOOD is another address's


def test_ranges_are_checked_before_dns_and_dns_after_a_miss(index):
    # in the 2026-01-01 Googlebot range: verified by the range, whatever DNS says
    nxdomain = _answer("192.0.2.7", error="nxdomain")
    in_range = _dns_verify("Googlebot", "192.0.2.7", nxdomain, index)
    assert (in_range.status, in_range.method) == ("verified", "ip-range")
    # outside every range: with DNS off the complete lists prove a fake; with DNS on, DNS decides
    outside = "198.51.100.10"  # in the June snapshot only
    name = "crawl-198-51-100-10.googlebot.com"
    assert verify(crawler("Googlebot"), outside, at("2026-03-01"), index).status == "spoofed"
    assert _dns_verify("Googlebot", outside, None, index).status == "unverified"
    found = _dns_verify("Googlebot", outside, _answer(outside, name, forward={name: [outside]}), index)
    assert (found.status, found.method) == ("verified", "reverse-dns")
    refuted = _dns_verify("Googlebot", outside, _answer(outside, error="nxdomain"), index)
    assert refuted.evidence == (
        f"PTR of {outside}: nxdomain (DNS {WHEN}); not in google-common-crawlers snapshot 2026-01-01"
    )


def test_dns_changes_nothing_for_crawlers_without_suffixes(index):
    assert _dns_verify("GPTBot", "192.0.2.10", GOOD, index, when=at("2026-01-20")).status == "spoofed"
    assert _dns_verify("GPTBot", "192.0.2.10", GOOD, index, when=at("2026-01-20")).method == "ip-range"
    assert _dns_verify("Bytespider", "192.0.2.10", GOOD).status == "unverifiable"
    assert _dns_verify("Google-Extended", "192.0.2.10", GOOD).status == "spoofed"
    assert _dns_verify("Google-Extended", "192.0.2.10", GOOD).method == "robots-only"


def test_reverse_dns_address_names_only_what_dns_will_decide(index):
    day = at("2026-03-01")
    assert reverse_dns_address(crawler("Googlebot"), "::ffff:192.0.2.10", day, index) is None  # range hit
    assert reverse_dns_address(crawler("Googlebot"), "::ffff:198.51.100.1", day, index) == "198.51.100.1"
    assert reverse_dns_address(crawler("Googlebot"), "2001:DB8:9::1", day, index) == "2001:db8:9::1"
    assert reverse_dns_address(crawler("GPTBot"), "198.51.100.1", day, index) is None  # no suffixes
    assert reverse_dns_address(crawler("Google-Extended"), "198.51.100.1", day, index) is None
    assert reverse_dns_address(crawler("Googlebot"), "not-an-ip", day, index) is None
