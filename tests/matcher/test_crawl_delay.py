"""Crawl-delay compliance (docs/semantics.md § Crawl-delay): the rule, the release and the windows,
against a brute-force sort-and-compare of every key's requests."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from matcher import crawl_delay, timerange
from crawl_delay_reference import KEYS, T0, VERSION, brute_force, request, verdict, violation_tuple, window_tuple

SECOND = 1_000_000  # microseconds


def _at(seconds: float) -> int:
    return crawl_delay.micros(T0 + timedelta(seconds=seconds))


# ---- The rule


def test_a_gap_shorter_than_the_delay_is_a_violation_and_an_equal_one_is_not():
    assert crawl_delay.violates(9_999_999, 10.0)
    assert not crawl_delay.violates(10 * SECOND, 10.0)
    assert crawl_delay.violates(0, 0.5)
    assert not crawl_delay.violates(0, None)  # no Crawl-delay in effect
    assert not crawl_delay.violates(None, 10.0)  # a key's first request has no gap


def test_a_delay_is_rounded_to_microseconds_as_timedelta_rounds_it():
    assert crawl_delay.shortest_gap_micros(2.5e-6) == 2  # half to even
    assert not crawl_delay.violates(2, 2.5e-6)
    assert crawl_delay.shortest_gap_micros(1e300) == math.inf  # longer than any two times are apart


def test_the_delay_of_the_later_request_decides():
    # The delay changed from 30 s to 5 s between the two requests: the later one's 5 s applies.
    violations, _ = crawl_delay.rows(KEYS[0], None, [request(0, delay=30.0), request(20, delay=5.0)], timedelta(hours=1))
    assert violations == []
    violations, _ = crawl_delay.rows(KEYS[0], None, [request(0, delay=5.0), request(20, delay=30.0)], timedelta(hours=1))
    assert [(row["gap_s"], row["crawl_delay_s"]) for row in violations] == [(20.0, 30.0)]


def test_the_key_keeps_spoofed_traffic_apart_from_the_real_crawler():
    real, fake = verdict(KEYS[0], 0, 10.0), verdict(KEYS[1], 1, 10.0)
    assert crawl_delay.key_of(real) != crawl_delay.key_of(fake)
    assert crawl_delay.key_of(fake) == ("www.example.com", "bingbot", "Microsoft", "spoofed")


def test_a_request_keeps_what_the_rows_need_of_its_verdict():
    ts, source, (delay, line, version, honours, answer) = request(12.5, 0.5, "ünïcode.log:3")
    assert (ts, source, delay, line, honours, answer) == (_at(12.5), "ünïcode.log:3", 0.5, 7, True, ())
    assert version == (crawl_delay.micros(VERSION["effective_from"]), VERSION["status"], VERSION["sha256"])
    unversioned = crawl_delay.request_of({**verdict(KEYS[0], 0, None), "robots_version": None})
    assert unversioned[2] == (None, None, None, True, ())
    asked = crawl_delay.request_of({**verdict(KEYS[0], 0, None), "status": 503, "retry_after": "60"})
    assert asked[2][4] == (503, "60")


# ---- The release


def test_release_orders_by_time_and_chains_to_the_previous_release():
    first = crawl_delay.release(None, [request(30), request(5), request(62)], cut=_at(60))
    assert [ts for ts, *_ in first.released] == [_at(5), _at(30)]
    assert first.previous is None and first.last == first.released[-1]
    assert [ts for ts, *_ in first.held] == [_at(62)]
    second = crawl_delay.release(first.last, first.held, cut=None)
    _, (row,) = crawl_delay.rows(KEYS[0], second.previous, second.released, timedelta(hours=1))
    assert (row["requests"], row["min_gap_s"]) == (1, 32.0)  # the pair across the cut


def test_requests_in_the_same_second_pair_the_same_way_every_time():
    ordered = crawl_delay.release(None, [request(1, source="b:2"), request(1, source="a:9")], None).released
    assert [source for _, source, _ in ordered] == ["a:9", "b:2"]
    (violation,), _ = crawl_delay.rows(KEYS[0], None, ordered, timedelta(hours=1))
    assert (violation["prev_source"], violation["source"], violation["gap_s"]) == ("a:9", "b:2", 0.0)


def test_an_empty_release_keeps_the_request_to_chain_to():
    before = request(0)
    freed = crawl_delay.release(before, [request(4000)], cut=_at(3600))
    assert (freed.released, freed.last) == ((), before)
    assert crawl_delay.rows(KEYS[0], freed.previous, freed.released, timedelta(hours=1)) == ([], [])


# ---- The windows


def test_windows_are_aligned_to_the_epoch_like_fixed_windows():
    moment = datetime(2026, 11, 2, 10, 59, 59, tzinfo=timezone.utc)
    assert crawl_delay.window_start(moment, timedelta(hours=1)) == datetime(2026, 11, 2, 10, tzinfo=timezone.utc)
    seven = timedelta(minutes=7)
    start = crawl_delay.window_start(moment, seven)
    assert start <= moment < start + seven and (start - crawl_delay.EPOCH) % seven == timedelta(0)


def test_a_window_row_counts_the_gap_from_the_previous_window_and_reports_the_last_delay():
    ordered = [request(3602, 10.0), request(3605, 5.0), request(3700, 5.0)]
    _, (row,) = crawl_delay.rows(KEYS[0], request(3590, 10.0), ordered, timedelta(hours=1))
    assert row["window_start"] == T0 + timedelta(hours=1)
    assert (row["requests"], row["violations"], row["min_gap_s"]) == (3, 1, 3.0)  # 12 s ok, 3 s < 5 s, 95 s ok
    assert (row["crawl_delay_s"], row["honours_crawl_delay"]) == (5.0, True)


def test_micros_round_trip_exactly():
    moment = datetime(2026, 11, 2, 10, 0, 0, 123456, tzinfo=timezone.utc)
    assert crawl_delay.from_micros(crawl_delay.micros(moment)) == moment


# ---- Released window by window (streaming) or all at once (batch): the same rows


def _released_in_pieces(key, requests, cuts, size: timedelta) -> tuple[list, list]:
    """The rows of releases at each cut in turn, as the streaming release makes them."""
    previous, held, violations, windows = None, requests, [], []
    for cut in sorted(cuts) + [None]:
        freed = crawl_delay.release(previous, held, cut)
        more_violations, more_windows = crawl_delay.rows(key, freed.previous, freed.released, size)
        violations += more_violations
        windows += more_windows
        previous, held = freed.last, freed.held
    return violations, windows


# Times from a few seconds (ties, windows of microseconds) to the whole span of datetimes.
_MOMENTS = st.one_of(
    st.integers(0, 40).map(lambda second: crawl_delay.micros(T0) + second * SECOND),
    st.integers(0, 3_000_000).map(lambda offset: crawl_delay.micros(T0) + offset),
    st.integers(timerange.EARLIEST_MICROS, timerange.LATEST_MICROS),
)
_SHARED = st.tuples(
    st.one_of(
        st.none(),
        st.sampled_from([0.0, 0.5, 1.0, 2.5e-6, 1e-7, 10.0, timerange.LONGEST_SPAN_S, 1e300]),
        st.floats(0, 1e12),
    ),
    st.one_of(st.none(), st.integers(1, 99)),
    st.one_of(st.none(), st.just((crawl_delay.micros(VERSION["effective_from"]), "200", "ab" * 32))),
    st.one_of(st.none(), st.booleans()),
    st.sampled_from([None, (), (429, None), (503, "120")]),
)
_SOURCES = st.sampled_from(["a:9", "a:10", "b:2", "a.log:1", "a.log.1:1", "pubsub:x"])
_SIZES = st.one_of(
    st.integers(1, 10**8).map(lambda size: timedelta(microseconds=size)),
    st.sampled_from([timedelta(hours=1), timedelta(days=10**6), timedelta.max]),
)


@settings(max_examples=300)
@given(
    st.lists(st.tuples(_MOMENTS, _SOURCES, st.integers(0, 3)), max_size=40),
    st.lists(_SHARED, min_size=4, max_size=4),
    st.lists(_MOMENTS, max_size=5),
    _SIZES,
)
def test_releasing_window_by_window_gives_the_rows_of_releasing_at_once(drawn, shared, moments, size):
    """A stream cuts where the watermark passes a window's end; whatever windows it cuts at, the
    rows are those of a batch release of everything."""
    requests = [(ts, source, shared[index]) for ts, source, index in drawn]
    size_micros = size // timedelta(microseconds=1)
    cuts = {moment // size_micros * size_micros for moment in moments}  # window starts
    at_once = crawl_delay.rows(KEYS[0], None, crawl_delay.in_order(requests), size)
    assert _released_in_pieces(KEYS[0], requests, cuts, size) == at_once


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(st.sampled_from(KEYS[:2]), st.integers(0, 3 * 3600), st.sampled_from([None, 0.5, 5.0, 10.0, 30.0])),
        max_size=40,
    ),
    st.integers(10, 60).map(lambda minutes: timedelta(minutes=minutes)),
    st.lists(st.integers(0, 3 * 3600), max_size=4),
)
def test_both_releases_equal_the_brute_force(drawn, size, cut_seconds):
    verdicts = [verdict(key, seconds, delay, f"log:{n}") for n, (key, seconds, delay) in enumerate(drawn)]
    cuts = [crawl_delay.micros(crawl_delay.window_start(T0 + timedelta(seconds=s), size)) for s in cut_seconds]
    expected_violations, expected_windows = brute_force(verdicts, size)
    for release in ("at once", "window by window"):
        violations, windows = [], []
        for key in KEYS[:2]:
            requests = [crawl_delay.request_of(v) for v in verdicts if crawl_delay.key_of(v) == key]
            if release == "at once":
                key_rows = crawl_delay.rows(key, None, crawl_delay.in_order(requests), size)
            else:
                key_rows = _released_in_pieces(key, requests, cuts, size)
            violations += map(violation_tuple, key_rows[0])
            windows += map(window_tuple, key_rows[1])
        assert sorted(violations) == sorted(expected_violations), release
        assert sorted(windows, key=repr) == sorted(expected_windows, key=repr), release
