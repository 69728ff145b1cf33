"""The run-health checks on the counts of a run, and the notes they read from identity verdicts."""
from __future__ import annotations

from datetime import date, datetime, timezone

from matcher import health
from matcher.health import RunFacts, closest_hosts, findings, identity_note
from matcher.identity import verify

from range_fixtures import crawler, range_document, range_index

DAY = date(2026, 11, 2)


def facts(**changes) -> RunFacts:
    base = dict(lines=1000, dead_letters=0, log_format="combined", dns="off", verdicts=100,
                table_first_day={"mysite.test": datetime(2026, 11, 1, tzinfo=timezone.utc)})
    return RunFacts(**{**base, **changes})


def test_a_run_whose_inputs_fitted_has_no_finding():
    assert findings(facts()) == []


def test_a_few_dead_letters_are_a_real_log_but_a_tenth_is_a_wrong_format():
    assert findings(facts(dead_letters=99)) == []
    (found,) = findings(facts(dead_letters=100, formats_reading_dead_letters=("combined", "vhost_combined")))
    assert found.check == "dead-letters"
    assert found.fix == "--log-format vhost_combined"  # the format already used is no fix


def test_no_known_format_reading_the_dead_letters_says_so():
    (found,) = findings(facts(dead_letters=1000))
    assert found.fix.startswith("no known format reads them: give your server's own format:")
    assert "--log-format 'nginx:<your log_format>'" in found.fix
    assert "docs/logformats.md#your-servers-own-format" in found.fix


def test_no_host_names_the_table_s_host_as_the_default():
    (found,) = findings(facts(unjudged={("no-host", None, DAY): 7}))
    assert (found.check, found.fix) == ("no-host", "--default-host mysite.test")
    assert found.problem.startswith("7 crawler requests carry no host")


def test_unknown_hosts_list_the_table_s_closest_spelling():
    (found,) = findings(facts(unjudged={("unknown-host", "www.mysite.test", DAY): 5}))
    assert "www.mysite.test: 5 requests; the table's closest: mysite.test" in found.details


def test_closest_hosts_put_the_same_site_first_and_leave_out_strangers():
    table = ["mysite.test", "mysite.example", "shop.other.test", "completely-different.org"]
    assert closest_hosts("www.mysite.test", table)[0] == "mysite.test"
    assert "completely-different.org" not in closest_hosts("www.mysite.test", table)


def test_before_history_gives_the_days_and_the_first_version():
    (found,) = findings(facts(unjudged={("no-robots-version", "mysite.test", date(2026, 10, 30)): 3}))
    assert found.details == ("mysite.test: 3 requests on 2026-10-30; its first version took effect 2026-11-01 00:00 UTC",)


def test_dns_off_leaves_open_claims_to_ranges_and_names_both_fixes():
    notes = {("Googlebot", health.NO_SNAPSHOT, DAY): 40, ("Googlebot", health.DNS_OFF, DAY): 2}
    (found,) = findings(facts(identity_notes=notes))
    assert found.check == "ranges" and "Googlebot 42" in found.problem
    assert "crawl-audit update-ranges" in found.fix and "--dns live" in found.fix
    # with DNS live, a claim DNS looked at is no range problem
    assert findings(facts(dns="live", identity_notes={("Googlebot", health.DNS_ANSWERED, DAY): 40})) == []


def test_a_resolver_that_fails_most_lookups_is_named():
    notes = {("Googlebot", health.DNS_FAILED, DAY): 6, ("Googlebot", health.DNS_ANSWERED, DAY): 4}
    (found,) = findings(facts(dns="live", identity_notes=notes))
    assert found.check == "resolver" and "6 of 10 reverse-DNS lookups failed" in found.problem


def test_identity_notes_tell_what_stood_in_the_way():
    assert identity_note("verified", "ip-range", "x in y") is None
    assert identity_note("unverified", "ip-range", "no range snapshot for bingbot") == health.NO_SNAPSHOT
    outside = "dns-off: needs reverse DNS; no snapshot of g within 30 days of 2026-11-02 (nearest 2026-12-07, 35 days after the request)"
    assert identity_note("unverified", "reverse-dns", outside) == f"{health.OUTSIDE_WINDOW}:g"
    assert identity_note("unverified", "reverse-dns", "dns-off: needs reverse DNS; not in g snapshot") == health.DNS_OFF
    assert identity_note("spoofed", "reverse-dns", "PTR of 192.0.2.1: nxdomain") == health.DNS_NXDOMAIN
    assert identity_note("spoofed", "reverse-dns", "PTR a.example not under googlebot.com") == health.DNS_ANSWERED
    assert identity_note("unverified", "reverse-dns", "PTR of 192.0.2.1: timeout") == health.DNS_FAILED
    assert identity_note("unverified", "reverse-dns", "PTR of 192.0.2.1: nxdomain; not trusted: why") == health.DNS_UNTRUSTED


def test_the_ranges_check_names_the_sources_without_a_snapshot_within_the_window():
    # FeedFetcher-Google is published in three files: one has a snapshot near the request, two
    # only snapshots months away
    when = datetime(2026, 11, 10, 12, tzinfo=timezone.utc)
    near = range_index(
        ("google-user-triggered-fetchers", date(2026, 11, 1), range_document("192.0.2.0/24")),
        ("google-user-triggered-fetchers-google", date(2026, 5, 1), range_document("192.0.2.0/24")),
        ("google-user-triggered-agents", date(2026, 4, 1), range_document("192.0.2.0/24")),
    )
    who = verify(crawler("FeedFetcher-Google"), "198.51.100.9", when, near)
    note = identity_note(who.status, who.method, who.evidence)
    assert note == f"{health.OUTSIDE_WINDOW}:google-user-triggered-fetchers-google,google-user-triggered-agents"
    (found,) = findings(facts(identity_notes={("FeedFetcher-Google", note, when.date()): 7}))
    assert found.check == "ranges" and "FeedFetcher-Google 7" in found.problem
    assert "of google-user-triggered-agents, google-user-triggered-fetchers-google, so their absence proves nothing" in found.problem


def test_dead_letter_reasons_of_a_sample_are_not_shown_as_the_run_s_counts():
    (found,) = findings(facts(dead_letters=900, dead_letter_reasons={"bad-json": 150, "no-match": 50}))
    assert "(of 200 read back: bad-json 150, no-match 50)" in found.problem
    (whole,) = findings(facts(dead_letters=200, dead_letter_reasons={"bad-json": 150, "no-match": 50}))
    assert "(bad-json 150, no-match 50)" in whole.problem


def test_range_files_skipped_are_a_ranges_finding_with_each_reason():
    skipped = ("ranges/bingbot/2026-02-01.json: unreadable JSON (an integer of 5,000 digits (at most 20)); ignored",)
    (found,) = findings(facts(range_problems=skipped))
    assert (found.check, found.details) == ("ranges", skipped)
    notes = {("Googlebot", health.NO_SNAPSHOT, DAY): 3}
    (both,) = findings(facts(range_problems=skipped, identity_notes=notes))
    assert "3 crawler requests" in both.problem and both.details == skipped
