"""Range evidence over time (`matcher.range_evidence`, through `matcher.identity.verify`): drawn
histories of one to three range sources checked against a slow reference that walks every day of
every span, and the properties a site owner relies on: more history never makes a verified claim
less so, snapshots that do not list the address and stand outside the window change nothing, and
`spoofed` never comes from a source without a snapshot within the window.

Prefixes are documentation networks (RFC 5737), never an operator's real ranges.
"""
from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from matcher.identity import verify
from matcher.ip_ranges import build_range_index

from range_fixtures import OPERATORS, at, crawler, range_document

BASE = date(2026, 1, 1)
NETWORKS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
ADDRESSES = ("192.0.2.7", "198.51.100.7", "203.0.113.7", "100.64.0.7")  # the last in no list
# FeedFetcher-Google is published in three files, GPTBot in one
CLAIMS = {
    "FeedFetcher-Google": ("google-user-triggered-fetchers", "google-user-triggered-fetchers-google", "google-user-triggered-agents"),
    "GPTBot": ("openai-gptbot",),
}

# one source's history: snapshot day (days after BASE) -> the networks it lists
histories = st.dictionaries(st.integers(0, 180), st.frozensets(st.sampled_from(NETWORKS)), max_size=6)


def _index(history: dict[str, dict[int, frozenset]], window: int):
    documents = [
        (source, BASE + timedelta(days=offset), range_document(*sorted(networks) or ["10.0.0.0/8"]))
        for source, snapshots in history.items()
        for offset, networks in snapshots.items()
    ]
    return build_range_index(documents, OPERATORS, window=window)


def _lists(networks: frozenset, address: str) -> bool:
    return any(address.rsplit(".", 1)[0] == network.rsplit(".", 1)[0] for network in networks)


def _span_days(snapshots: dict[int, frozenset], offset: int) -> list[int]:
    """Every day a snapshot stands for: its own, then each up to the next snapshot's."""
    later = [other for other in snapshots if other > offset]
    return list(range(offset, min(later))) if later else [offset]


def reference(history: dict[str, dict[int, frozenset]], sources: tuple[str, ...], address: str, day: int, window: int) -> str:
    """The rule told the slow way, day by day."""
    near = {source: [] for source in sources}
    long_before = False
    for source in sources:
        snapshots = history.get(source, {})
        for offset, networks in snapshots.items():
            days = _span_days(snapshots, offset)
            if any(abs(d - day) <= window for d in days):
                near[source].append(networks)
            elif max(days) < day and _lists(networks, address):
                long_before = True
    if any(_lists(networks, address) for found in near.values() for networks in found):
        return "verified"
    if long_before:
        return "verified"
    if all(near.values()):
        return "spoofed"
    return "unverified"


claims = st.sampled_from(sorted(CLAIMS))


@st.composite
def cases(draw):
    name = draw(claims)
    history = {source: draw(histories) for source in CLAIMS[name]}
    return name, history, draw(st.sampled_from(ADDRESSES)), draw(st.integers(-40, 220)), draw(st.integers(0, 40))


def _status(name, history, address, day, window) -> str:
    return verify(crawler(name), address, at((BASE + timedelta(days=day)).isoformat()), _index(history, window)).status


@settings(max_examples=150, deadline=None)
@given(cases())
def test_the_verdict_is_the_reference_rule(case):
    name, history, address, day, window = case
    assert _status(name, history, address, day, window) == reference(history, CLAIMS[name], address, day, window)


@settings(max_examples=100, deadline=None)
@given(cases(), st.data())
def test_more_history_never_unverifies_a_verified_claim(case, data):
    name, fuller, address, day, window = case
    source = data.draw(st.sampled_from(CLAIMS[name]))
    kept = data.draw(st.sets(st.sampled_from(sorted(fuller[source])))) if fuller[source] else set()
    history = {**fuller, source: {offset: fuller[source][offset] for offset in kept}}
    if _status(name, history, address, day, window) == "verified":
        assert _status(name, fuller, address, day, window) == "verified"


@settings(max_examples=100, deadline=None)
@given(cases(), st.data())
def test_a_snapshot_standing_outside_the_window_without_the_address_changes_nothing(case, data):
    name, history, address, day, window = case
    source = data.draw(st.sampled_from(CLAIMS[name]))
    snapshots = history[source]
    offset = data.draw(st.integers(0, 180).filter(lambda o: o not in snapshots))
    networks = data.draw(st.frozensets(st.sampled_from(NETWORKS)).filter(lambda n: not _lists(n, address)))
    added = {**history, source: {**snapshots, offset: networks}}
    days = _span_days(added[source], offset)
    if all(abs(d - day) > window for d in days):
        assert _status(name, added, address, day, window) == _status(name, history, address, day, window)


@settings(max_examples=150, deadline=None)
@given(cases())
def test_spoofed_only_when_every_source_has_a_snapshot_within_the_window(case):
    name, history, address, day, window = case
    result = verify(crawler(name), address, at((BASE + timedelta(days=day)).isoformat()), _index(history, window))
    if result.status == "spoofed":
        for source in CLAIMS[name]:
            snapshots = history[source]
            assert any(abs(d - day) <= window for offset in snapshots for d in _span_days(snapshots, offset))
            assert source in result.evidence


def test_the_evidence_names_the_snapshots_read_and_their_days():
    history = {"openai-gptbot": {0: frozenset({NETWORKS[0]}), 7: frozenset({NETWORKS[0]}), 19: frozenset({NETWORKS[0]})}}
    result = verify(crawler("GPTBot"), "203.0.113.7", at("2026-01-12"), _index(history, 30))
    assert (result.status, result.evidence) == (
        "spoofed", "not in the 3 snapshots of openai-gptbot from 2026-01-01 to 2026-01-20"
    )
