"""Published IP ranges (`matcher.ip_ranges`): operator files parsed into dated snapshots, the
snapshot in force on a day, and the longest-prefix lookups, against brute-force references.

Prefixes are documentation and private networks (RFC 5737, RFC 3849, RFC 1918), never an
operator's real ranges.
"""
from __future__ import annotations

import ipaddress
from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matcher.addresses import parse_ip
from matcher.identity import undeclared, verify
from matcher.ip_ranges import BROADEST_PREFIX, RangeHit, RangeIndex, build_range_index, parse_snapshot

from range_fixtures import JAN, JUN, OPERATORS, at, crawler, range_document, range_index, sample_index


@pytest.fixture(scope="module")
def index() -> RangeIndex:
    return sample_index()


@pytest.mark.parametrize(
    "ip", ["192.0.2.7", "198.51.100.9", "2001:db8:2::1", "203.0.113.200", "198.18.0.1", "2001:db8:ffff::1", "0.0.0.0"]
)
def test_an_address_is_ever_held_exactly_when_some_day_finds_it_in_a_range(index, ip):
    # The snapshot days and the days between them: on each, a different set of snapshots is in force.
    days = [date(2025, 12, 31), JAN, date(2026, 3, 1), JUN, date(2026, 7, 1)]
    assert index.ever_holds(parse_ip(ip)) == any(undeclared(ip, day, index) for day in days)


# ------------------------------------------------------------------- parsing snapshots


def test_invisible_characters_in_prefixes_are_dropped():
    index = range_index(("bingbot", JAN, range_document("\u200b203.0.113.0/26\u200b", " 2001:db8:5::/48\ufeff")))
    assert not index.problems
    assert verify(crawler("bingbot"), "203.0.113.1", JAN, index).status == "verified"
    assert verify(crawler("bingbot"), "2001:db8:5::1", JAN, index).status == "verified"


def test_bad_prefixes_are_reported_and_the_rest_kept():
    document = {"prefixes": [{"ipv4Prefix": "203.0.113.0/26"}, {"ipv4Prefix": "300.1.1.0/24"},
                             {"ipv6Prefix": 42}, "203.0.113.64/26", {}]}
    index = range_index(("bingbot", JAN, document))
    assert len(index.problems) == 4
    assert all(p.startswith("bingbot/2026-01-01.json: prefixes[") for p in index.problems)
    assert verify(crawler("bingbot"), "203.0.113.1", JAN, index).status == "verified"


@pytest.mark.parametrize("document", [{"prefixes": []}, {"creationTime": "x"}, [], "garbage"])
def test_unusable_file_is_skipped_so_the_previous_snapshot_stays(document):
    index = range_index(("bingbot", JAN, range_document("203.0.113.0/26")), ("bingbot", JUN, document))
    assert [s.taken for s in index.snapshots("bingbot")] == [JAN]
    assert index.problems and index.problems[-1].startswith("bingbot/2026-06-01.json")
    assert verify(crawler("bingbot"), "203.0.113.1", at("2026-07-01"), index).status == "verified"


def test_unknown_source_and_duplicate_day_are_reported():
    index = range_index(
        ("no-such-source", JAN, range_document("192.0.2.0/24")),
        ("bingbot", JAN, range_document("203.0.113.0/26")),
        ("bingbot", JAN, range_document("198.51.100.0/24")),
    )
    assert index.sources == ("bingbot",)
    assert len(index.problems) == 2


def test_lookup_probes_each_prefix_length_once_not_each_prefix():
    many = [f"10.{a}.{b}.0/24" for a in range(40) for b in range(50)]
    index = range_index(("bingbot", JAN, range_document(*many, "10.200.0.0/16")))
    snapshot = index.snapshot_at("bingbot", JAN)
    assert snapshot.size == 2001
    assert len(snapshot.table.levels[4]) == 2  # two prefix lengths, two dict probes
    assert snapshot.find(parse_ip("10.39.49.200")).prefix == "10.39.49.0/24"
    assert snapshot.find(parse_ip("10.200.7.7")).prefix == "10.200.0.0/16"
    assert snapshot.find(parse_ip("10.40.0.1")) is None


def test_a_snapshot_reports_its_hits_with_the_evidence_a_verdict_shows():
    snapshot, problems = parse_snapshot("bingbot", "Microsoft", JAN, range_document("203.0.113.0/26", "2001:db8:5::/48"))
    assert problems == ()
    assert (snapshot.source, snapshot.operator, snapshot.taken, snapshot.size) == ("bingbot", "Microsoft", JAN, 2)
    assert snapshot.label == "bingbot snapshot 2026-01-01"
    hit = snapshot.find(parse_ip("203.0.113.63"))
    assert hit == RangeHit("bingbot", "Microsoft", JAN, "203.0.113.0/26")
    assert hit.evidence == "203.0.113.0/26 in bingbot snapshot 2026-01-01"
    assert snapshot.find(parse_ip("203.0.113.64")) is None
    assert snapshot.find(parse_ip("2001:db8:5:ffff::1")).prefix == "2001:db8:5::/48"


def test_a_prefix_with_host_bits_set_stands_for_its_network():
    snapshot, problems = parse_snapshot("bingbot", "Microsoft", JAN, range_document("203.0.113.77/26"))
    assert problems == ()
    assert snapshot.find(parse_ip("203.0.113.70")).prefix == "203.0.113.64/26"
    assert snapshot.find(parse_ip("203.0.113.1")) is None


@pytest.mark.parametrize(
    ("broadest", "too_broad", "version"),
    [(f"10.0.0.0/{BROADEST_PREFIX[4]}", f"10.0.0.0/{BROADEST_PREFIX[4] - 1}", 4),
     (f"2000::/{BROADEST_PREFIX[6]}", f"2000::/{BROADEST_PREFIX[6] - 1}", 6)],
)
def test_a_prefix_broader_than_any_one_organisation_holds_is_refused(broadest, too_broad, version):
    snapshot, problems = parse_snapshot("bingbot", "Microsoft", JAN, range_document(broadest, too_broad, "0.0.0.0/0", "::/0"))
    assert snapshot.size == 1
    assert problems[0] == (
        f"bingbot/2026-01-01.json: prefixes[1] {too_broad} is broader than /{BROADEST_PREFIX[version]},"
        f" the broadest prefix accepted for IPv{version}; ignored"
    )
    assert len(problems) == 3


def test_a_file_without_a_usable_prefix_is_dropped_and_said_so():
    long_junk = {"ipv4Prefix": "x" * 200}
    snapshot, problems = parse_snapshot("bingbot", "Microsoft", JAN, {"prefixes": [long_junk]})
    assert snapshot is None
    assert problems[-1] == "bingbot/2026-01-01.json: no usable prefix; snapshot ignored"
    shown = problems[0].split("prefixes[0] ", 1)[1]
    assert shown.endswith("... is not an IP prefix; ignored") and len(shown) < 120  # a long entry is cut short
    assert parse_snapshot("bingbot", "Microsoft", JAN, {"prefix": []}) == (
        None, ("bingbot/2026-01-01.json: no 'prefixes' list; snapshot ignored",)
    )


def test_the_index_orders_snapshots_by_day_whatever_the_input_order_and_keeps_given_problems():
    index = build_range_index(
        [("bingbot", JUN, range_document("198.51.100.0/24")), ("anthropic", JAN, range_document("192.0.2.0/24")),
         ("bingbot", JAN, range_document("203.0.113.0/26"))],
        OPERATORS,
        problems=["ranges/README: not a source folder; ignored"],
    )
    assert index.sources == ("anthropic", "bingbot")
    assert [s.taken for s in index.snapshots("bingbot")] == [JAN, JUN]
    assert index.snapshots("perplexitybot") == ()
    assert index.snapshot_at("perplexitybot", JUN) is None
    assert index.problems == ("ranges/README: not a source folder; ignored",)


# Against brute force: a few sources, days and nested prefixes, so that snapshots overlap,
# replace each other and hold prefixes inside one another.

SOURCES = ("anthropic", "bingbot", "openai-gptbot")
FIRST_DAY = date(2026, 1, 1)
networks = st.one_of(
    st.builds(lambda a, b, length: ipaddress.ip_network(f"10.{a}.{b}.0/{length}", strict=False),
              st.integers(0, 3), st.integers(0, 3), st.integers(8, 32)),
    st.builds(lambda a, length: ipaddress.ip_network(f"2001:db8:{a}::/{length}", strict=False),
              st.integers(0, 3), st.integers(BROADEST_PREFIX[6], 64)),
)
addresses = st.one_of(
    st.builds(lambda a, b, c: ipaddress.ip_address(f"10.{a}.{b}.{c}"), st.integers(0, 4), st.integers(0, 4), st.integers(0, 2)),
    st.builds(lambda a: ipaddress.ip_address(f"2001:db8:{a}::1"), st.integers(0, 4)),
)
plans = st.lists(
    st.tuples(st.sampled_from(SOURCES), st.integers(0, 20), st.lists(networks, min_size=1, max_size=5)),
    max_size=6,
    unique_by=lambda item: item[:2],
)


def _reference_in_force(plan, source: str, day: date):
    """The (taken, networks) of `source` in force on `day`: the latest taken on or before it."""
    taken = [(FIRST_DAY + timedelta(offset), nets) for name, offset, nets in plan if name == source]
    earlier = [item for item in taken if item[0] <= day]
    return max(earlier, key=lambda item: item[0]) if earlier else None


@settings(max_examples=150, deadline=None)
@given(plans, addresses, st.integers(-2, 24))
def test_lookups_agree_with_brute_force(plan, address, day_offset):
    index = range_index(*((name, FIRST_DAY + timedelta(offset), range_document(*map(str, nets))) for name, offset, nets in plan))
    day = FIRST_DAY + timedelta(day_offset)
    containing = {}
    for source in SOURCES:
        in_force = _reference_in_force(plan, source, day)
        snapshot = index.snapshot_at(source, day)
        assert (snapshot.taken if snapshot else None) == (in_force[0] if in_force else None)
        for network in in_force[1] if in_force else ():
            if address in network:
                containing.setdefault(network.prefixlen, set()).add((source, str(network)))
    hit = index.find_any(address, day)
    if not containing:
        assert hit is None
    else:
        assert (hit.source, hit.prefix) in containing[max(containing)]
        assert hit.operator == OPERATORS[hit.source]
    ever = any(address in network for _, _, nets in plan for network in nets)
    assert index.ever_holds(address) is ever


@pytest.mark.parametrize(("prefixes", "refused"), [
    ([f"{first}.0.0.0/8" for first in range(256)], "its IPv4 prefixes cover a /0 worth of addresses"),
    (["10.0.0.0/8", "11.0.0.0/24"], "its IPv4 prefixes cover 16,777,472 addresses"),
    ([f"{block:x}::/19" for block in range(0x2000, 0x6000, 0x2000)], "its IPv6 prefixes cover a /18 worth"),
])
def test_a_file_whose_prefixes_cover_more_than_one_broadest_prefix_in_all_is_refused_whole(prefixes, refused):
    snapshot, problems = parse_snapshot("bingbot", "Microsoft", JAN, range_document(*prefixes))
    assert snapshot is None
    assert problems[-1].startswith(f"bingbot/2026-01-01.json: {refused}") and problems[-1].endswith("; snapshot ignored")
    index = build_range_index([("bingbot", JAN, range_document(*prefixes))], OPERATORS)
    assert verify(crawler("bingbot"), "203.0.113.9", JAN, index).status != "verified"


def test_overlapping_prefixes_count_once_toward_the_bound():
    halves_twice = ["10.0.0.0/9", "10.128.0.0/9", "10.0.0.0/8", "10.1.0.0/16", "2001:db8::/19", "2001:db8::/32"]
    snapshot, problems = parse_snapshot("bingbot", "Microsoft", JAN, range_document(*halves_twice))
    assert snapshot is not None and snapshot.size == len(halves_twice) and problems == ()
