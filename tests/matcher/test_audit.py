"""One request in, one explained verdict out (`matcher.audit`): the claim, the identity, the robots
decision and the indexing facet of requests built as `LogRecord`s, judged with the shipped registry,
the range snapshots of `samples/ranges` and the robots.txt history of `samples/robots`.

Sample facts the tests rely on: Google's common-crawler list (2026-10-28) holds 66.249.66.0/27,
Bing's (2026-10-30) 157.55.39.0/24, OpenAI's GPTBot list adds 74.7.175.128/25 on 2026-11-03;
www.example.com's robots.txt changes on 2026-11-03 10:00 UTC (adding `Disallow: /private/`);
shop.example.net answers 404, then 200, then 503 for four hours, then 200 again.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config.registry import default_registry
from config.snapshots import load_ranges
from helpers import BINGBOT, GOOGLEBOT, REPO
from matcher.audit import Claim, audit, claim_of, dns_question, fetch_key_of, fetch_of, identity_of, judged_by_what_was_held
from matcher.clientip import NO_PROXIES, trusted_proxies
from matcher.directives import PageDirectives, PageDirectivesTable
from matcher.history import HostHistory, RobotsVersion, version_from_row
from matcher.identity import IdentityResult
from matcher.logformats import LogRecord, parser_for
from matcher.records import VERDICTS
from matcher.reverse_dns import DnsAnswer, Lookup
from matcher.robots_fetches import FetchHistory, RobotsFetch

UTC = timezone.utc
REGISTRY = default_registry()
RANGES = load_ranges(REPO / "samples" / "ranges")
ROBOTS = REPO / "samples" / "robots"
SOURCE = "access.log:7"

BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"
YANDEXBOT = "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"
ADSBOT = "AdsBot-Google (+http://www.google.com/adsbot.html)"
FOOBOT = "FooBot/1.0 (+http://foo.example/bot)"

GOOGLE_IP = "66.249.66.1"  # in the sample's google-common-crawlers snapshot
BING_IP = "157.55.39.10"
ELSEWHERE = "192.0.2.10"  # in no crawler range
NOV_2 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
CHANGE = datetime(2026, 11, 3, 10, 0, tzinfo=UTC)  # www.example.com's second version takes effect


def _sample_versions(host: str) -> list[RobotsVersion]:
    """The host's rows of samples/robots/history.jsonl, with the bodies they name."""
    rows = [json.loads(line) for line in (ROBOTS / "history.jsonl").read_text().splitlines() if line.strip()]
    return [
        version_from_row(row, (ROBOTS / row["body_file"]).read_bytes() if "body_file" in row else None)
        for row in rows
        if row["host"] == host
    ]


WWW = HostHistory(_sample_versions("www.example.com"))
SHOP = HostHistory(_sample_versions("shop.example.net"))
FIRST_BODY = (ROBOTS / "bodies" / "www.example.com-2026-10-20.txt").read_bytes()
SECOND_BODY = (ROBOTS / "bodies" / "www.example.com-2026-11-03.txt").read_bytes()
SHOP_BODY = (ROBOTS / "bodies" / "shop.example.net-2026-11-02.txt").read_bytes()


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def request(
    path: str = "/",
    *,
    user_agent: str = GOOGLEBOT,
    ip: str = GOOGLE_IP,
    host: str | None = "www.example.com",
    at: datetime = NOV_2,
    forwarded_for: str | None = None,
    x_robots_tag: tuple[str, ...] = (),
) -> LogRecord:
    return LogRecord(at, host, ip, "GET", path, path, 200, 512, None, user_agent, forwarded_for, x_robots_tag)


def verdict_of(record: LogRecord, history: HostHistory | None = WWW, **options) -> dict | None:
    return audit(record, SOURCE, REGISTRY, RANGES, history, **options)


def robots_columns(verdict: dict) -> tuple:
    return verdict["decision"], verdict["reason"], verdict["rule_kind"], verdict["rule_pattern"], verdict["rule_line"]


# ------------------------------------------------------------------ verified crawlers


def test_a_verified_crawler_allowed_gets_every_column_of_the_record():
    verdict = verdict_of(request("/docs/"))
    # in the table's order, which its JSON writer encodes without reshaping each row
    assert tuple(verdict) == tuple(column.name for column in VERDICTS)
    assert verdict == {
        "ts": NOV_2,
        "host": "www.example.com",
        "client_ip": GOOGLE_IP,
        "method": "GET",
        "path": "/docs/",
        "target_host": None,
        "status": 200,
        "bytes": 512,
        "retry_after": None,
        "user_agent": GOOGLEBOT,
        "source": SOURCE,
        "crawler": "Googlebot",
        "client_kind": "crawler",
        "purpose": ("search-engine",),
        "operator": "Google",
        "tokens": ("googlebot",),
        "identity": "verified",
        "identity_method": "ip-range",
        "identity_evidence": "66.249.66.0/27 in google-common-crawlers snapshot 2026-10-28 (earlier: 5 days before the request)",
        "signature": None,
        "signature_input": None,
        "honours_robots": True,
        "honours_crawl_delay": False,
        "robots_version": {
            "effective_from": datetime(2026, 10, 20, 8, tzinfo=UTC), "status": "200", "sha256": sha(FIRST_BODY),
        },
        "robots_group": ("Googlebot",),
        "rule_kind": None,
        "rule_pattern": None,
        "rule_line": None,
        "rule_normalized": None,
        "decision": "allowed",
        "reason": "no-match",
        "grace_from": None,
        "later_version": None,
        "crawl_delay": None,
        "crawl_delay_line": None,
        "indexing": None,
        "indexing_unseen": False,
        "preferences": None,
        "preference_conflicts": (),
        "content_usage": None,
        "robots_fetch": None,
        "grace_assumed": False,
        "unread_change": None,
        "unread_for_s": None,
        "signature": None,
    }


@pytest.mark.parametrize(
    ("path", "decision", "kind", "pattern", "line", "normalized"),
    [
        ("/search?q=robots", "disallowed", "disallow", "/search", 6, "/search"),
        ("/search/about", "allowed", "allow", "/search/about", 5, "/search/about"),  # the longer rule wins
        ("/docs?sessionid=42", "disallowed", "disallow", "/*?sessionid=", 7, "/*?sessionid="),
        # the rule as written and as compared: %7E and ~ are one octet
        ("/~admin/users", "disallowed", "disallow", "/%7Eadmin/", 8, "/~admin/"),
        ("/%7eadmin/users", "disallowed", "disallow", "/%7Eadmin/", 8, "/~admin/"),
    ],
)
def test_a_verified_crawler_is_judged_by_its_group_and_the_deciding_rule_is_named(
    path, decision, kind, pattern, line, normalized
):
    verdict = verdict_of(request(path))
    assert (verdict["identity"], verdict["robots_group"]) == ("verified", ("Googlebot",))
    assert robots_columns(verdict) == (decision, "rule", kind, pattern, line)
    assert verdict["rule_normalized"] == normalized
    assert verdict["path"] == path  # as requested, not normalized


def test_the_crawl_delay_of_the_chosen_group_is_reported():
    verdict = verdict_of(request("/docs/", user_agent=BINGBOT, ip=BING_IP))
    assert (verdict["crawler"], verdict["operator"], verdict["identity"]) == ("bingbot", "Microsoft", "verified")
    assert (verdict["crawl_delay"], verdict["crawl_delay_line"], verdict["robots_group"]) == (10.0, 11, ("bingbot",))
    assert (verdict["honours_robots"], verdict["honours_crawl_delay"]) == (True, True)


def test_the_range_snapshots_around_the_request_day_decide():
    # 74.7.175.129 joins GPTBot's published list on 2026-11-03, a day after the request
    before = verdict_of(request("/docs/", user_agent=GPTBOT, ip="74.7.175.129"))
    after = verdict_of(request("/docs/", user_agent=GPTBOT, ip="74.7.175.129", at=CHANGE))
    fake = verdict_of(request("/docs/", user_agent=GPTBOT, ip="198.18.0.9"))
    assert (before["identity"], before["identity_evidence"]) == (
        "verified", "74.7.175.128/25 in openai-gptbot snapshot 2026-11-03 (later: 1 day after the request)"
    )
    assert (fake["identity"], fake["identity_evidence"]) == (
        "spoofed", "not in the 2 snapshots of openai-gptbot from 2026-10-25 to 2026-11-03"
    )
    assert (after["identity"], after["identity_evidence"]) == (
        "verified", "74.7.175.128/25 in openai-gptbot snapshot 2026-11-03"
    )


def test_a_ranges_folder_with_damaged_files_still_proves_what_it_can():
    # tests/data/ranges: bingbot's prefix carries a zero-width space, Google's list is replaced in June
    ranges = load_ranges(REPO / "tests" / "data" / "ranges")
    assert ranges.problems
    june = datetime(2026, 6, 20, tzinfo=timezone.utc)
    bing = audit(request("/docs/", user_agent=BINGBOT, ip="203.0.113.9", at=june), SOURCE, REGISTRY, ranges, WWW)
    assert (bing["identity"], bing["identity_evidence"]) == (
        "verified", "203.0.113.0/26 in bingbot snapshot 2026-01-01 (stale: 170 days before the request; run update-ranges)"
    )
    google = audit(request("/docs/", ip="192.0.2.7", at=june), SOURCE, REGISTRY, ranges, WWW)
    assert (google["identity"], google["identity_evidence"]) == (
        "verified", "192.0.2.0/24 in google-common-crawlers snapshot 2026-01-01 (earlier: stood to 2026-05-31, 20 days before the request)"
    )


def test_a_crawler_that_ignores_the_catch_all_is_not_judged_by_it():
    verdict = verdict_of(request("/tmp/x", user_agent=ADSBOT))
    assert (verdict["crawler"], verdict["tokens"]) == ("AdsBot-Google", ("adsbot-google",))
    assert (verdict["decision"], verdict["reason"], verdict["robots_group"]) == ("allowed", "no-group", None)
    # the same path is disallowed for a crawler that follows `*`
    assert verdict_of(request("/tmp/x", user_agent=FOOBOT))["decision"] == "disallowed"


# ------------------------------------------------------------------ claims that do not hold


def test_a_spoofed_crawler_is_still_judged_by_the_group_it_claims():
    verdict = verdict_of(request("/search", ip=ELSEWHERE))
    assert (verdict["crawler"], verdict["operator"], verdict["client_ip"]) == ("Googlebot", "Google", ELSEWHERE)
    assert (verdict["identity"], verdict["identity_method"], verdict["identity_evidence"]) == (
        "spoofed", "ip-range", "not in google-common-crawlers snapshot 2026-10-28",
    )
    assert robots_columns(verdict) == ("disallowed", "rule", "disallow", "/search", 6)
    assert verdict["robots_group"] == ("Googlebot",)


def test_a_robots_only_token_sent_as_a_user_agent_is_spoofed():
    verdict = verdict_of(request("/docs/", user_agent="Google-Extended/1.0"))
    assert (verdict["crawler"], verdict["identity"], verdict["identity_method"]) == (
        "Google-Extended", "spoofed", "robots-only"
    )


def test_a_claim_from_an_unreadable_address_is_unverified_not_dropped():
    verdict = verdict_of(request("/docs/", ip="unknown"))
    assert (verdict["identity"], verdict["identity_evidence"], verdict["client_ip"]) == (
        "unverified", "invalid client ip", "unknown"
    )


def test_an_unlisted_bot_is_unverifiable_and_follows_the_catch_all():
    verdict = verdict_of(request("/tmp/report", user_agent=FOOBOT, ip=ELSEWHERE))
    assert (verdict["crawler"], verdict["operator"], verdict["tokens"]) == ("foobot", None, ("foobot",))
    assert (verdict["identity"], verdict["identity_method"], verdict["identity_evidence"]) == (
        "unverifiable", "none", "crawler not in the registry",
    )
    assert (verdict["honours_robots"], verdict["honours_crawl_delay"]) == (None, None)
    assert robots_columns(verdict) == ("disallowed", "rule", "disallow", "/tmp/", 27)
    assert verdict["robots_group"] == ("*",)


def test_an_unclaimed_request_from_a_crawler_range_is_undeclared_and_judged_by_the_catch_all():
    # /search/about: Googlebot's own group allows it, `*` does not, and `*` is what applies
    verdict = verdict_of(request("/search/about", user_agent=BROWSER, ip="66.249.66.5"))
    assert (verdict["crawler"], verdict["operator"], verdict["tokens"]) == (None, "Google", ())
    assert (verdict["identity"], verdict["identity_method"], verdict["identity_evidence"]) == (
        "undeclared", "ip-range", "66.249.66.0/27 in google-common-crawlers snapshot 2026-10-28",
    )
    assert (verdict["honours_robots"], verdict["honours_crawl_delay"]) == (None, None)
    assert robots_columns(verdict) == ("disallowed", "rule", "disallow", "/search", 26)
    assert verdict["robots_group"] == ("*",)


@pytest.mark.parametrize(
    ("user_agent", "ip"),
    [
        (BROWSER, ELSEWHERE),
        ("", ELSEWHERE),  # no User-Agent at all
        (BROWSER, "unknown"),
        (BROWSER, "66.249.66.200"),  # Google's address space, but in no published prefix
    ],
)
def test_a_request_that_claims_no_crawler_from_outside_every_range_gets_no_verdict(user_agent, ip):
    assert verdict_of(request("/search", user_agent=user_agent, ip=ip)) is None


def test_an_unclaimed_request_is_undeclared_only_while_its_range_is_published():
    # GPTBot's 2026-11-03 prefix: undeclared from its day on, nothing the day before
    assert verdict_of(request("/", user_agent=BROWSER, ip="74.7.175.129")) is None
    assert verdict_of(request("/", user_agent=BROWSER, ip="74.7.175.129", at=CHANGE))["operator"] == "OpenAI"


# ------------------------------------------------------------------ hosts


@pytest.mark.parametrize("spelling", ["WWW.Example.COM", "www.example.com.", "www.example.com:443"])
def test_the_host_is_written_in_its_one_form(spelling):
    assert verdict_of(request("/docs/", host=spelling))["host"] == "www.example.com"


@pytest.mark.parametrize(("host", "reason"), [(None, "no-host"), ("", "no-host"), ("elsewhere.example", "unknown-host")])
def test_without_a_history_the_decision_is_unknown_and_says_why(host, reason):
    verdict = verdict_of(request("/docs/", host=host), history=None)
    assert (verdict["decision"], verdict["reason"]) == ("unknown", reason)
    assert verdict["host"] == (host or None)
    assert verdict["robots_version"] is verdict["robots_group"] is verdict["rule_kind"] is None
    assert verdict["identity"] == "verified"  # who sent it is known all the same


# ------------------------------------------------------------------ proxies


PROXIES = trusted_proxies(["10.0.0.0/8"])


def test_behind_trusted_proxies_the_client_is_taken_from_x_forwarded_for():
    behind = request("/docs/", ip="10.0.0.2", forwarded_for="192.0.2.99, 66.249.66.1")
    verdict = verdict_of(behind, proxies=PROXIES)
    assert (verdict["client_ip"], verdict["identity"]) == (GOOGLE_IP, "verified")
    # without the proxies trusted, the connecting address is the client: a Googlebot from 10.0.0.2
    plain = verdict_of(behind)
    assert (plain["client_ip"], plain["identity"]) == ("10.0.0.2", "spoofed")
    assert verdict_of(behind, proxies=NO_PROXIES) == plain


def test_x_forwarded_for_from_an_untrusted_address_is_ignored():
    verdict = verdict_of(request("/docs/", ip=ELSEWHERE, forwarded_for=GOOGLE_IP), proxies=PROXIES)
    assert (verdict["client_ip"], verdict["identity"]) == (ELSEWHERE, "spoofed")


def test_an_unclaimed_request_through_a_proxy_is_judged_by_its_client():
    from_crawler_range = request("/", user_agent=BROWSER, ip="10.0.0.2", forwarded_for="66.249.66.5")
    assert verdict_of(from_crawler_range, proxies=PROXIES)["identity"] == "undeclared"
    assert verdict_of(from_crawler_range) is None  # 10.0.0.2 itself is in no range
    from_elsewhere = request("/", user_agent=BROWSER, ip="10.0.0.2", forwarded_for=ELSEWHERE)
    assert verdict_of(from_elsewhere, proxies=PROXIES) is None


# ------------------------------------------------------------------ reverse DNS

YANDEX_IP = "192.0.2.20"
YANDEX_NAME = "spider-192-0-2-20.yandex.com"
RESOLVED = "2026-11-02T10:00:05Z"


def answer(ip: str, *names: str, forward: tuple[str, ...] = (), error: str | None = None) -> DnsAnswer:
    lookups = tuple((name, Lookup(forward)) for name in names)
    return DnsAnswer(ip, Lookup(names, error), lookups, RESOLVED)


def test_dns_decides_a_crawler_that_publishes_only_host_names():
    yandex = request("/docs/", user_agent=YANDEXBOT, ip=YANDEX_IP)
    assert dns_question(yandex, REGISTRY, RANGES, NO_PROXIES) == YANDEX_IP
    confirmed = {YANDEX_IP: answer(YANDEX_IP, YANDEX_NAME, forward=(YANDEX_IP,))}
    verdict = verdict_of(yandex, dns=confirmed)
    assert (verdict["identity"], verdict["identity_method"], verdict["identity_evidence"]) == (
        "verified", "reverse-dns", f"PTR {YANDEX_NAME} -> A {YANDEX_IP} (DNS {RESOLVED})",
    )
    assert (verdict["operator"], verdict["tokens"], verdict["robots_group"]) == ("Yandex", ("yandexbot", "yandex"), ("*",))


@pytest.mark.parametrize(
    ("dns", "identity", "evidence"),
    [
        (None, "unverified", "dns-off: needs reverse DNS"),
        ({}, "unverified", f"PTR of {YANDEX_IP}: not-resolved"),  # DNS on, this address never answered
        ({YANDEX_IP: answer(YANDEX_IP, error="nxdomain")}, "spoofed", f"PTR of {YANDEX_IP}: nxdomain (DNS {RESOLVED})"),
        ({YANDEX_IP: answer(YANDEX_IP, error="timeout")}, "unverified", f"PTR of {YANDEX_IP}: timeout (DNS {RESOLVED})"),
        ({YANDEX_IP: answer(YANDEX_IP, "crawl.evilyandex.com", forward=(YANDEX_IP,))}, "spoofed",
         f"PTR crawl.evilyandex.com not under yandex.ru, yandex.net, yandex.com (DNS {RESOLVED})"),
    ],
)
def test_dns_that_is_off_silent_or_refuting(dns, identity, evidence):
    verdict = verdict_of(request("/docs/", user_agent=YANDEXBOT, ip=YANDEX_IP), dns=dns)
    assert (verdict["identity"], verdict["identity_evidence"]) == (identity, evidence)


def test_dns_is_asked_only_where_no_range_proves_the_claim():
    in_range = request("/docs/")
    outside = request("/docs/", ip="198.51.100.7")
    assert dns_question(in_range, REGISTRY, RANGES, NO_PROXIES) is None
    assert dns_question(outside, REGISTRY, RANGES, NO_PROXIES) == "198.51.100.7"
    for unclaimed in (request("/", user_agent=BROWSER, ip="66.249.66.5"), request("/", user_agent=FOOBOT)):
        assert dns_question(unclaimed, REGISTRY, RANGES, NO_PROXIES) is None
    assert dns_question(request("/", user_agent=GPTBOT, ip=ELSEWHERE), REGISTRY, RANGES, NO_PROXIES) is None
    # a range still proves an address DNS would refute
    refuting = {GOOGLE_IP: answer(GOOGLE_IP, error="nxdomain")}
    assert verdict_of(in_range, dns=refuting)["identity"] == "verified"


def test_dns_can_verify_a_crawler_outside_its_published_ranges():
    name = "crawl-198-51-100-7.googlebot.com"
    outside = request("/docs/", ip="198.51.100.7")
    assert verdict_of(outside)["identity"] == "spoofed"  # DNS off: every published list was read
    assert verdict_of(outside, dns={})["identity"] == "unverified"  # DNS on but silent: not proven a fake
    found = verdict_of(outside, dns={"198.51.100.7": answer("198.51.100.7", name, forward=("198.51.100.7",))})
    assert (found["identity"], found["identity_method"]) == ("verified", "reverse-dns")


def test_the_dns_question_and_the_verdict_name_the_client_address_in_its_one_spelling():
    mapped = request("/docs/", user_agent=YANDEXBOT, ip=f"::ffff:{YANDEX_IP}")
    assert dns_question(mapped, REGISTRY, RANGES, NO_PROXIES) == YANDEX_IP
    verdict = verdict_of(mapped, dns={YANDEX_IP: answer(YANDEX_IP, YANDEX_NAME, forward=(YANDEX_IP,))})
    assert (verdict["identity"], verdict["client_ip"]) == ("verified", YANDEX_IP)
    for logged in (f"{YANDEX_IP}:9989", f"[::ffff:{YANDEX_IP}]:443"):
        assert verdict_of(request("/docs/", user_agent=YANDEXBOT, ip=logged))["client_ip"] == YANDEX_IP
    assert verdict_of(request("/docs/", ip="[2001:DB8::1]:443"))["client_ip"] == "2001:db8::1"
    proxied = request("/docs/", user_agent=YANDEXBOT, ip="10.0.0.2", forwarded_for=f"{YANDEX_IP}:4711")
    assert dns_question(proxied, REGISTRY, RANGES, PROXIES) == YANDEX_IP
    assert dns_question(proxied, REGISTRY, RANGES, NO_PROXIES) == "10.0.0.2"


# ------------------------------------------------------------------ robots.txt history


def test_a_request_before_the_first_robots_version_is_unknown():
    early = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)  # shop.example.net's history starts at 04:00
    verdict = verdict_of(request("/products", host="shop.example.net", at=early), SHOP)
    assert (verdict["decision"], verdict["reason"], verdict["robots_version"]) == ("unknown", "no-robots-version", None)
    robots_txt = verdict_of(request("/robots.txt", host="shop.example.net", at=early), SHOP)
    assert (robots_txt["decision"], robots_txt["reason"]) == ("allowed", "robots-exempt")


def test_the_status_of_the_version_in_effect_decides_without_a_body():
    missing = verdict_of(request("/cart/", host="shop.example.net", at=datetime(2026, 11, 2, 5, tzinfo=UTC)), SHOP)
    assert (missing["decision"], missing["reason"]) == ("allowed", "robots-unavailable")
    assert missing["robots_version"] == {
        "effective_from": datetime(2026, 11, 2, 4, tzinfo=UTC), "status": "404", "sha256": None,
    }
    assert missing["robots_group"] is missing["rule_kind"] is None
    history = HostHistory([RobotsVersion("shop.example.net", NOV_2, None)])
    unreachable = verdict_of(request("/cart/", host="shop.example.net", at=NOV_2 + timedelta(hours=1)), history)
    assert (unreachable["decision"], unreachable["reason"]) == ("disallowed", "robots-unreachable")
    assert unreachable["robots_version"]["status"] == "unreachable"


def test_a_change_disallows_from_its_time_and_a_cached_earlier_copy_gives_grace():
    path = "/private/report.pdf"
    assert verdict_of(request(path, at=CHANGE - timedelta(microseconds=1)))["decision"] == "allowed"
    verdict = verdict_of(request(path, at=CHANGE + timedelta(hours=2)))
    assert robots_columns(verdict) == ("disallowed-within-grace", "rule", "disallow", "/private/", 10)
    assert verdict["grace_from"] == datetime(2026, 10, 20, 8, tzinfo=UTC)
    assert verdict["robots_version"] == {"effective_from": CHANGE, "status": "200", "sha256": sha(SECOND_BODY)}
    # once the grace has passed, a plain disallow
    late = verdict_of(request(path, at=CHANGE + timedelta(hours=24)))
    assert (late["decision"], late["grace_from"]) == ("disallowed", None)
    no_grace = HostHistory(_sample_versions("www.example.com"), grace=timedelta(0))
    assert verdict_of(request(path, at=CHANGE + timedelta(hours=2)), no_grace)["decision"] == "disallowed"


def test_a_server_error_is_within_grace_of_the_good_version_before_it():
    during_outage = datetime(2026, 11, 3, 22, 0, tzinfo=UTC)  # 503 from 21:00 to 01:00
    verdict = verdict_of(request("/products", host="shop.example.net", at=during_outage), SHOP)
    assert (verdict["decision"], verdict["reason"], verdict["rule_kind"]) == (
        "disallowed-within-grace", "robots-server-error", None,
    )
    assert verdict["grace_from"] == datetime(2026, 11, 2, 9, tzinfo=UTC)
    assert verdict["robots_version"]["status"] == "503"


def test_a_change_known_only_between_two_captures_is_disallowed_between_captures():
    seen_down = datetime(2026, 11, 3, 21, 30, tzinfo=UTC)  # the last fetch that still found the 503
    versions = _sample_versions("shop.example.net")
    versions[-1] = dataclasses.replace(versions[-1], observed_before=seen_down)
    history = HostHistory(versions)
    verdict = verdict_of(request("/products", host="shop.example.net", at=seen_down + timedelta(minutes=30)), history)
    assert (verdict["decision"], verdict["reason"], verdict["grace_from"]) == (
        "disallowed-between-captures", "change-time-unknown", None,
    )
    assert verdict["robots_version"]["status"] == "503"
    assert verdict["later_version"] == {
        "effective_from": datetime(2026, 11, 4, 1, tzinfo=UTC), "status": "200", "sha256": sha(SHOP_BODY),
        "observed_before": seen_down,
    }
    # at the last fetch itself the 503 was seen: no doubt then
    assert verdict_of(request("/products", host="shop.example.net", at=seen_down), history)["later_version"] is None


# ------------------------------------------------------------------ indexing facet


def test_the_x_robots_tag_of_the_request_gives_the_indexing_facet_for_the_crawler():
    header = ("googlebot: noindex", "noarchive")
    allowed = verdict_of(request("/docs/", x_robots_tag=header))
    assert (allowed["indexing"], allowed["indexing_unseen"]) == ({"noarchive": True, "noindex": True}, False)
    disallowed = verdict_of(request("/search", x_robots_tag=header))
    assert (disallowed["indexing"], disallowed["indexing_unseen"]) == ({"noarchive": True, "noindex": True}, True)
    bing = verdict_of(request("/docs/", user_agent=BINGBOT, ip=BING_IP, x_robots_tag=header))
    assert bing["indexing"] == {"noarchive": True}


def test_the_page_directives_table_is_read_for_the_requests_host_path_and_time():
    since = datetime(2026, 11, 1, tzinfo=UTC)
    pages = PageDirectivesTable([
        PageDirectives("www.example.com", "/report.pdf", since, ("noindex",), (("googlebot", "nosnippet"),)),
    ])
    verdict = verdict_of(request("/report.pdf", host="WWW.Example.com:443", x_robots_tag=("noarchive",)), pages=pages)
    assert verdict["indexing"] == {"noarchive": True, "noindex": True, "nosnippet": True}
    undeclared = verdict_of(request("/report.pdf", user_agent=BROWSER, ip="66.249.66.5"), pages=pages)
    assert undeclared["indexing"] == {"noindex": True}  # generic directives only: no tokens
    before = verdict_of(request("/report.pdf", at=since - timedelta(seconds=1)), pages=pages)
    assert (before["indexing"], before["indexing_unseen"]) == (None, False)
    assert verdict_of(request("/report.pdf?page=2"), pages=pages)["indexing"] is None  # another page


def test_a_log_line_becomes_the_verdict_a_record_built_by_hand_gets():
    line = (f'WWW.Example.COM:443 {GOOGLE_IP} - - [02/Nov/2026:11:00:00 +0100] '
            f'"GET http://www.example.com/search?q=a HTTP/1.1" 200 512 "-" "{GOOGLEBOT}"')
    parsed = parser_for("vhost_combined")(line)
    verdict = verdict_of(parsed)
    assert (verdict["ts"], verdict["host"], verdict["path"]) == (NOV_2, "www.example.com", "/search?q=a")
    assert verdict == verdict_of(request("/search?q=a"))


# ------------------------------------------------------------------ the parts


def test_claim_of_a_registry_crawler_carries_its_token_chain_and_catch_all_choice():
    image = claim_of("Googlebot-Image/1.0", REGISTRY)
    assert image == Claim("Googlebot-Image", ("googlebot-image", "googlebot"), True, REGISTRY.get("Googlebot-Image"))
    ads = claim_of(ADSBOT, REGISTRY)
    assert (ads.crawler, ads.catch_all, ads.registered) == ("AdsBot-Google", False, REGISTRY.get("AdsBot-Google"))


@pytest.mark.parametrize(
    ("user_agent", "claim"),
    [
        (FOOBOT, Claim("foobot", ("foobot",), True)),
        ("Acme-Crawler/3.1", Claim("acme-crawler", ("acme-crawler",), True)),
        ("+http://example.com/bot", Claim(None, (), True)),  # a contact claims a crawler that has no name
        (BROWSER, None),
        ("", None),
        ("curl/8.5.0", Claim("curl", ("curl",), True, kind="automated")),
        ("python-requests/2.32.3", Claim("python-requests", ("python-requests",), True, kind="automated")),
        ("Java/1.8.0_151", Claim("java", ("java",), True, kind="automated")),
        ("lwp-trivial/6.03", Claim("lwp-trivial", ("lwp-trivial",), True, kind="automated")),
    ],
)
def test_claim_of_other_user_agents(user_agent, claim):
    assert claim_of(user_agent, REGISTRY) == claim


HEADLESS = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36"


def test_an_automated_client_is_audited_by_the_catch_all_group_and_is_unverifiable():
    verdict = verdict_of(request("/search", user_agent="python-requests/2.32.3", ip=ELSEWHERE))
    assert (verdict["client_kind"], verdict["crawler"], verdict["purpose"]) == ("automated", "python-requests", ("unknown",))
    assert (verdict["identity"], verdict["identity_method"], verdict["operator"]) == ("unverifiable", "none", None)
    assert verdict["robots_group"] == ("*",)
    assert robots_columns(verdict) == ("disallowed", "rule", "disallow", "/search", 26)


def test_an_automated_client_answers_to_a_group_naming_its_product_token():
    body = b"User-agent: *\nDisallow: /\n\nUser-agent: Wget\nAllow: /\n"
    history = HostHistory([RobotsVersion("www.example.com", NOV_2 - timedelta(days=1), 200, body)])
    wget = verdict_of(request("/x", user_agent="Wget/1.21.4", ip=ELSEWHERE), history)
    assert (wget["client_kind"], wget["robots_group"], wget["decision"]) == ("automated", ("Wget",), "allowed")
    headless = verdict_of(request("/x", user_agent=HEADLESS, ip=ELSEWHERE), history)
    assert (headless["client_kind"], headless["crawler"], headless["decision"]) == ("automated", "headlesschrome", "disallowed")


def test_identity_of_each_kind_of_claim():
    unlisted = identity_of(claim_of(FOOBOT, REGISTRY), GOOGLE_IP, NOV_2, RANGES)
    assert unlisted == IdentityResult("unverifiable", "none", "crawler not in the registry", None)
    googlebot = identity_of(claim_of(GOOGLEBOT, REGISTRY), GOOGLE_IP, NOV_2, RANGES)
    assert (googlebot.status, googlebot.operator) == ("verified", "Google")
    assert identity_of(None, "66.249.66.5", NOV_2, RANGES).status == "undeclared"
    assert identity_of(None, ELSEWHERE, NOV_2, RANGES) is None
    yandex = claim_of(YANDEXBOT, REGISTRY)
    dns = {YANDEX_IP: answer(YANDEX_IP, YANDEX_NAME, forward=(YANDEX_IP,))}
    assert identity_of(yandex, YANDEX_IP, NOV_2, RANGES, dns).status == "verified"
    assert identity_of(yandex, YANDEX_IP, NOV_2, RANGES).status == "unverified"


def test_a_verdict_carries_the_preferences_of_its_group_and_version_and_the_conflicts_of_its_purpose():
    first = b"User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n"
    second = b"User-agent: *\nContent-Signal: search=yes, ai-train=yes\nContent-Usage: /books/ train-ai=n\nAllow: /\n"
    history = HostHistory([
        RobotsVersion("www.example.com", NOV_2 - timedelta(days=1), 200, first),
        RobotsVersion("www.example.com", CHANGE, 200, second),
    ])
    before = verdict_of(request("/books/1", user_agent=GPTBOT, ip=ELSEWHERE), history)
    assert before["preferences"] == {"content_signal": {"search": "yes", "ai-train": "no"}, "content_signal_lines": [2]}
    assert (before["decision"], before["preference_conflicts"]) == ("allowed", ("ai-training: ai-train=no",))
    after = verdict_of(request("/books/1", user_agent=GPTBOT, ip=ELSEWHERE, at=CHANGE), history)
    assert after["preferences"]["content_usage"] == {"train-ai": "n"} and after["preferences"]["content_usage_line"] == 3
    assert after["preference_conflicts"] == ("ai-training: train-ai=n",)
    elsewhere = verdict_of(request("/news/1", user_agent=GPTBOT, ip=ELSEWHERE, at=CHANGE), history)
    assert elsewhere["preference_conflicts"] == ()
    googlebot = verdict_of(request("/books/1", at=CHANGE), history)
    assert googlebot["preferences"] == after["preferences"] and googlebot["preference_conflicts"] == ()
    curl = verdict_of(request("/books/1", user_agent="curl/8.5.0", ip=ELSEWHERE), history)
    assert curl["preferences"] == before["preferences"] and curl["preference_conflicts"] == ()


def test_truncated_addresses_hide_whoever_may_be_a_person_and_keep_the_crawlers_evidence():
    options = {"truncate_addresses": True}
    automated = verdict_of(request("/", user_agent="curl/8.5.0", ip="203.0.113.77"), **options)
    assert automated["client_ip"] == "203.0.113.0/24"
    unlisted = verdict_of(request("/", user_agent=FOOBOT, ip="2001:db8:1234:5678::9"), **options)
    assert unlisted["client_ip"] == "2001:db8:1234::/48"
    undeclared = verdict_of(request("/", user_agent=BROWSER, ip="66.249.66.5"), **options)
    assert (undeclared["identity"], undeclared["client_ip"]) == ("undeclared", "66.249.66.0/24")
    verified = verdict_of(request("/", ip=GOOGLE_IP), **options)
    assert (verified["identity"], verified["client_ip"]) == ("verified", GOOGLE_IP)
    spoofed = verdict_of(request("/", ip=ELSEWHERE), **options)
    assert (spoofed["identity"], spoofed["client_ip"]) == ("spoofed", ELSEWHERE)
    assert verdict_of(request("/", user_agent="curl/8.5.0", ip="203.0.113.77"))["client_ip"] == "203.0.113.77"


# ------------------------------------------------------------------ judged again by what was held


@settings(max_examples=200, deadline=None)
@given(
    fetched=st.lists(st.tuples(st.integers(-48, 72), st.sampled_from((200, 304, 404, 503, None))), max_size=5),
    hours=st.integers(-24, 96),
    path=st.sampled_from(("/private/x", "/search", "/docs/", "/robots.txt")),
    user_agent=st.sampled_from((GPTBOT, GOOGLEBOT, FOOBOT)),
    host=st.sampled_from(("www.example.com", "unknown.example.org", None)),
)
def test_a_verdict_judged_again_by_what_was_held_is_the_one_audit_gives_with_the_fetches(
    fetched, hours, path, user_agent, host
):
    """A stream judges each request as when no fetch was seen, then again once what its crawler
    held is known: the record must be the one a batch run writes, column for column and in order."""
    record = request(path, user_agent=user_agent, ip=ELSEWHERE, host=host, at=CHANGE + timedelta(hours=hours))
    history = WWW if host == "www.example.com" else None
    alone = verdict_of(record, history)
    fetches = FetchHistory(
        RobotsFetch(CHANGE + timedelta(hours=at), status, f"log:{n}") for n, (at, status) in enumerate(fetched)
    )
    key = fetch_key_of(alone, REGISTRY)
    assert key is not None
    with_fetches = verdict_of(record, history, fetches={key: fetches})
    again = judged_by_what_was_held(alone, history, fetches.held_at(record.ts), REGISTRY)
    assert list(again.items()) == list(with_fetches.items())


def test_only_a_request_for_robots_txt_is_a_fetch():
    fetch = fetch_of(verdict_of(request("/robots%2Etxt")))
    assert fetch == RobotsFetch(NOV_2, 200, SOURCE, "Googlebot")
    assert fetch_of(verdict_of(request("/robots.txt.bak"))) is None


# ------------------------------------------------------------------ Web Bot Auth: coverage and signed agents

import base64 as _base64  # noqa: E402
import copy  # noqa: E402

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # noqa: E402

from matcher.logformats.record import SignedHeaders  # noqa: E402
from matcher.web_bot_auth import KeyDirectories, LoggedRequest, parse_key_snapshot, parse_signatures, signature_base  # noqa: E402

OPENAI_KEY = Ed25519PrivateKey.generate()
GPTBOT_IP = "74.7.175.130"  # in the sample's GPTBot list from 2026-11-03
NOV_4 = datetime(2026, 11, 4, 10, 0, tzinfo=UTC)


def _with_openai_keys():
    raw = OPENAI_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    jwk = {"kty": "OKP", "crv": "Ed25519", "kid": "k1", "x": _base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}
    snapshot, _ = parse_key_snapshot("openai", "OpenAI", NOV_2.date(), {"keys": [jwk]})
    directory = REGISTRY.key_directories["openai"]
    ranges = copy.copy(RANGES)
    ranges.key_directories = KeyDirectories([snapshot], {"openai": directory.url}, {"openai": "OpenAI"})
    return ranges


SIGNED_RANGES = _with_openai_keys()


def signed_record(
    user_agent: str, *, ip: str = ELSEWHERE, at: datetime = NOV_4, agent: str | None = '"https://chatgpt.com"',
    components: str = '"@authority" "signature-agent"', host: str = "www.example.com", sign: bool = True,
) -> LogRecord:
    record = request("/private/a", user_agent=user_agent, ip=ip, at=at)
    if not sign:
        return dataclasses.replace(record, signed=SignedHeaders(host, agent, None, None))
    params = f'({components});created={int(at.timestamp())};expires={int(at.timestamp()) + 60};keyid="k1";tag="web-bot-auth"'
    (signature,), _ = parse_signatures(f"sig1={params}", "sig1=:AA==:")
    base, _ = signature_base(signature, LoggedRequest("GET", host, "/private/a", {"signature-agent": agent} if agent else {}))
    value = _base64.b64encode(OPENAI_KEY.sign(base)).decode()
    return dataclasses.replace(record, signed=SignedHeaders(host, agent, f"sig1={params}", f"sig1=:{value}:"))


def signed_verdict(record: LogRecord) -> dict | None:
    return audit(record, SOURCE, REGISTRY, SIGNED_RANGES, WWW)


def test_a_browser_with_a_known_signature_agent_is_a_signed_agent():
    verdict = signed_verdict(signed_record(BROWSER))
    assert {k: verdict[k] for k in ("crawler", "client_kind", "operator", "purpose", "tokens")} == {
        "crawler": "ChatGPT agent", "client_kind": "agent", "operator": "OpenAI",
        "purpose": ("ai-user-triggered",), "tokens": (),
    }
    assert (verdict["identity"], verdict["identity_method"], verdict["identity_evidence"]) == (
        "verified", "web-bot-auth", "keyid k1 in openai keys 2026-11-02"
    )
    # judged by the group every unnamed client answers to
    assert verdict["robots_group"] == ("*",) and verdict["decision"] == "disallowed"
    assert fetch_key_of(verdict, REGISTRY) is None
    # the Host as the client sent it, in another case and with its default port, is the same @authority
    assert signed_verdict(signed_record(BROWSER, host="WWW.example.com:443"))["identity"] == "verified"


def test_a_signed_agent_without_a_signature_is_unverified_and_a_bad_one_spoofed():
    unsigned = signed_verdict(signed_record(BROWSER, sign=False))
    assert (unsigned["client_kind"], unsigned["identity"], unsigned["identity_evidence"]) == (
        "agent", "unverified", "Signature-Agent without Signature and Signature-Input"
    )
    moved = signed_record(BROWSER)
    moved = dataclasses.replace(moved, signed=dataclasses.replace(moved.signed, authority="shop.example.net"))
    assert signed_verdict(moved)["identity"] == "spoofed"
    ignored = signed_verdict(signed_record(BROWSER, components='"@path" "signature-agent"'))
    assert (ignored["identity"], ignored["identity_evidence"]) == ("unverified", "signature ignored: does not cover @authority")
    # a Signature-Agent of no registry directory makes no claim
    assert signed_verdict(signed_record(BROWSER, agent='"https://agent.example"')) is None


def test_a_signature_that_covers_too_little_leaves_the_crawler_to_its_address():
    covering = signed_verdict(signed_record(GPTBOT))
    assert (covering["identity"], covering["identity_method"]) == ("verified", "web-bot-auth")
    # the same key, leaving out @authority: ranges decide, as if the request were unsigned
    in_range = signed_verdict(signed_record(GPTBOT, ip=GPTBOT_IP, components='"@method" "@path" "signature-agent"'))
    assert (in_range["identity"], in_range["identity_method"]) == ("verified", "ip-range")
    assert in_range["identity_evidence"].endswith("; signature ignored: does not cover @authority")
    outside = signed_verdict(signed_record(GPTBOT, components='"@authority" "@path"'))
    assert (outside["identity"], outside["identity_method"]) == ("spoofed", "ip-range")
    assert outside["identity_evidence"].endswith("; signature ignored: does not cover Signature-Agent")
