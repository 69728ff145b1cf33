from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, strategies as st

from matcher.backoff import Carried, Request, answer_of, findings, judge_release, retry_after_seconds

T0 = datetime(2026, 11, 2, 10, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def requests(*rows) -> list[Request]:
    return [Request(at(s), status, retry, f"log:{i}") for i, (s, status, retry) in enumerate(rows)]


@pytest.mark.parametrize("value, seconds", [
    ("120", 120.0),
    (" 0 ", 0.0),
    ("Mon, 02 Nov 2026 10:02:00 GMT", 120.0),
    ("Mon, 02 Nov 2026 09:00:00 GMT", 0.0),  # a date already past asks for no wait
    ("-", None),
    ("", None),
    (None, None),
    ("soon", None),
    ("-5", None),
    ("1.5", None),
])
def test_retry_after_is_seconds_or_an_http_date(value, seconds):
    assert retry_after_seconds(value, T0) == seconds


def test_a_crawler_that_hammers_after_a_503_did_not_back_off():
    (found,) = findings(requests((0, 200, None), (5, 200, None), (10, 503, None), (11, 200, None)))
    assert (found.status, found.retry_after_s, found.next_request_after_s, found.backed_off) == (503, None, 1.0, False)


def test_a_crawler_that_waits_after_a_429_backed_off():
    (found,) = findings(requests((0, 200, None), (5, 200, None), (10, 429, None), (20, 200, None)))
    assert found.backed_off is True  # 10 s: max(2 x 5 s, 10 s)


def test_with_retry_after_the_next_request_must_come_no_sooner():
    found = findings(requests((0, 429, "30"), (30, 429, "60"), (80, 200, None)))
    assert [(f.retry_after_s, f.next_request_after_s, f.backed_off) for f in found] == [
        (30.0, 30.0, True), (60.0, 50.0, False),
    ]


def test_unknown_without_a_next_request_or_an_earlier_gap():
    assert [f.backed_off for f in findings(requests((0, 503, None), (100, 503, None)))] == [None, None]
    # the only gaps before lie over an hour back
    found = findings(requests((0, 200, None), (1, 200, None), (3700, 503, None), (3800, 200, None)))
    assert [f.backed_off for f in found] == [None]


def brute_force(rows: list[Request]) -> list[tuple]:
    """The rule as the docs state it, checked one answered request at a time over every pair."""
    out = []
    for i, r in enumerate(rows):
        if r.status not in (429, 503):
            continue
        later = [q.ts for q in rows[i + 1:]]
        next_after = (later[0] - r.ts).total_seconds() if later else None
        wait = retry_after_seconds(r.retry_after, r.ts)
        gaps = sorted(
            (rows[j + 1].ts - rows[j].ts).total_seconds()
            for j in range(i)
            if rows[j].ts >= r.ts - timedelta(hours=1)
        )
        if next_after is None:
            backed = None
        elif wait is not None:
            backed = next_after >= wait
        elif not gaps:
            backed = None
        else:
            n = len(gaps)
            middle = gaps[n // 2] if n % 2 else (gaps[n // 2 - 1] + gaps[n // 2]) / 2
            backed = next_after >= max(2 * middle, 10)
        out.append((r.ts, r.status, wait, next_after, backed))
    return out


@given(st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=3 * 3600),
        st.sampled_from([200, 200, 304, 429, 503]),
        st.one_of(st.none(), st.integers(min_value=0, max_value=600).map(str), st.just("garbage")),
    ),
    max_size=30,
))
def test_the_rule_equals_the_brute_force_reference(rows):
    ordered = requests(*sorted(rows, key=lambda row: row[:2]))
    assert [(f.at, f.status, f.retry_after_s, f.next_request_after_s, f.backed_off) for f in findings(ordered)] == brute_force(ordered)


def test_only_crawlers_count_and_only_429_and_503_ask_to_slow_down():
    assert answer_of("crawler", 429, "30") == (429, "30")
    assert answer_of("crawler", 503, None) == (503, None)
    assert answer_of("crawler", 200, "30") == ()
    assert answer_of("crawler", None, None) == ()
    assert answer_of("automated", 429, "30") is None
    assert answer_of("agent", 503, None) is None


def in_releases(ordered: list[Request], cuts: list[int]) -> list:
    """The findings of releasing `ordered` piece by piece at `cuts` (indexes), then ending."""
    carried, found = Carried(), []
    for start, end in zip([0, *cuts], [*cuts, len(ordered)]):
        settled, carried = judge_release(carried, ordered[start:end], final=False)
        found += settled
    settled, _ = judge_release(carried, [], final=True)
    return found + settled


def test_a_429_last_in_its_release_is_judged_with_the_next_release():
    ordered = requests((0, 200, None), (5, 200, None), (10, 429, None), (20, 200, None))
    settled, carried = judge_release(Carried(), ordered[:3], final=False)
    assert settled == [] and carried.last == ordered[2] and carried.before == (at(0), at(5))
    (found,) = judge_release(carried, ordered[3:], final=False)[0]
    assert (found.next_request_after_s, found.backed_off) == (10.0, True)


def test_the_end_of_a_stream_judges_the_last_503_with_no_next_request():
    ordered = requests((0, 200, None), (5, 503, None))
    settled, carried = judge_release(Carried(), ordered, final=False)
    assert settled == []
    (found,) = judge_release(carried, [], final=True)[0]
    assert (found.at, found.next_request_after_s, found.backed_off) == (at(5), None, None)


def test_a_stream_carries_only_the_hour_before_its_last_request():
    ordered = requests((0, 200, None), (1800, 200, None), (3700, 200, None), (3710, 200, None))
    _, carried = judge_release(Carried(), ordered, final=False)
    assert carried.last == ordered[-1] and carried.before == (at(1800), at(3700))


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3 * 3600),
            st.sampled_from([200, 200, 304, 429, 503]),
            st.one_of(st.none(), st.integers(min_value=0, max_value=600).map(str)),
        ),
        max_size=30,
    ),
    st.lists(st.integers(min_value=0, max_value=30), max_size=6),
)
def test_releasing_piece_by_piece_gives_the_findings_of_the_whole(rows, cuts):
    """A stream releases a crawler's requests window by window; wherever the cuts fall, its
    findings are those of a batch run judging the whole sequence."""
    ordered = requests(*sorted(rows, key=lambda row: row[:2]))
    cuts = sorted({min(cut, len(ordered)) for cut in cuts})
    assert in_releases(ordered, cuts) == findings(ordered)
