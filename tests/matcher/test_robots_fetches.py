"""The fetch-history rule: what a crawler held after its own robots.txt requests, and the
judgement that uses it, against examples and against the brute-force reference."""
from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from matcher.history import HostHistory, RobotsVersion
from matcher.robots_fetches import FetchHistory, RobotsFetch, follow, held_kind, revise, still_deciding
from tests.robots_fetches_reference import (
    FETCH_STATUSES,
    PATHS,
    T0,
    histories,
    moments,
    reference_decision,
    reference_held,
)

OPEN = b"User-agent: *\nDisallow: /private\n"
CLOSED = b"User-agent: *\nDisallow: /private\nDisallow: /new\n"
HOUR = timedelta(hours=1)
GRACE = timedelta(hours=24)


def _history(*versions, grace=GRACE):
    return HostHistory(versions, grace=grace)


def _changed_at_ten():
    """Open from 00:00, /new disallowed from 10:00."""
    return _history(
        RobotsVersion("example.com", T0, 200, OPEN), RobotsVersion("example.com", T0 + 10 * HOUR, 200, CLOSED)
    )


def _fetch(hours, status=200, source=None):
    return RobotsFetch(T0 + hours * HOUR, status, source or f"log:{hours}")


def _revised(history, fetches, at_hours, path="/new"):
    ts = T0 + at_hours * HOUR
    held = FetchHistory(fetches).held_at(ts)
    return revise(history, history.judge(ts, ("*",), path), held, ts, ("*",), path)


def test_a_refetch_after_the_change_makes_a_newly_disallowed_path_a_plain_violation():
    revised = _revised(_changed_at_ten(), [_fetch(1), _fetch(11)], 12)
    assert revised.judgement.decision == "disallowed"
    assert revised.held.fetch.ts == T0 + 11 * HOUR
    assert revised.held_version.effective_from == T0 + 10 * HOUR
    assert revised.unread_change is None and not revised.grace_assumed


def test_a_change_not_fetched_yet_is_before_refetch_within_the_grace_and_says_how_long():
    revised = _revised(_changed_at_ten(), [_fetch(1)], 13)
    assert revised.judgement.decision == "disallowed-before-refetch"
    assert revised.unread_change.effective_from == T0 + 10 * HOUR
    assert revised.unread_for == 3 * HOUR
    assert revised.judgement.grace_version is None


def test_past_the_grace_without_a_refetch_it_is_a_plain_violation():
    revised = _revised(_changed_at_ten(), [_fetch(1)], 10 + 25)
    assert revised.judgement.decision == "disallowed"
    assert revised.unread_for == 25 * HOUR


def test_with_no_fetch_seen_the_fixed_grace_is_assumed_and_said():
    revised = _revised(_changed_at_ten(), [], 13)
    assert revised.judgement.decision == "disallowed-within-grace"
    assert revised.grace_assumed and revised.held is None


def test_a_fetch_in_the_same_microsecond_as_the_request_counts():
    revised = _revised(_changed_at_ten(), [_fetch(1), _fetch(12)], 12)
    assert revised.held.fetch.ts == T0 + 12 * HOUR and revised.judgement.decision == "disallowed"


def test_a_304_keeps_the_copy_it_revalidated():
    revised = _revised(_changed_at_ten(), [_fetch(1), _fetch(11, 304)], 12)
    assert revised.held.served_at == T0 + HOUR
    assert revised.judgement.decision == "disallowed-before-refetch"


def test_a_404_fetch_allows_all_until_a_change_after_it():
    history = _changed_at_ten()
    # served a 404 after the change: nothing changed since, so what it was served allowed it
    revised = _revised(history, [_fetch(11, 404)], 12)
    assert revised.judgement.decision == "allowed"
    assert revised.judgement.reason == "fetched-robots-unavailable"
    assert _revised(history, [_fetch(9, 404)], 12).judgement.decision == "disallowed-before-refetch"


def test_a_5xx_fetch_disallows_all_until_the_error_limit_then_what_was_held_before():
    history = _changed_at_ten()
    assert _revised(history, [_fetch(11, 503)], 12, path="/private").judgement.decision == "disallowed"
    held = FetchHistory([_fetch(1), _fetch(11, 503), _fetch(12, None)]).held_at(T0 + 13 * HOUR)
    assert held.kind == "error" and held.error_since == T0 + 11 * HOUR and held.before_errors.served_at == T0 + HOUR


def test_a_request_the_version_in_effect_allows_is_never_changed():
    revised = _revised(_changed_at_ten(), [_fetch(1)], 13, path="/open")
    assert revised.judgement.decision == "allowed" and revised.held.fetch.ts == T0 + HOUR


def test_held_kind_follows_rfc_9309_status_classes():
    assert [held_kind(s) for s in (200, 204, 301, 404, 429, 500, 503, None, 100)] == [
        "ok", "ok", "unavailable", "unavailable", "error", "error", "error", "error", "error",
    ]
    assert follow(None, _fetch(1, 304)).served_at == T0 + HOUR


@settings(max_examples=300, deadline=None)
@given(
    versions=histories(),
    fetches=st.lists(st.tuples(moments(), st.sampled_from(FETCH_STATUSES)), max_size=8),
    requests=st.lists(st.tuples(moments(), st.sampled_from(PATHS)), min_size=1, max_size=6),
    grace_hours=st.sampled_from((0, 1, 24)),
    error_limit_hours=st.sampled_from((2, 720)),
)
def test_revise_agrees_with_a_scan_of_every_earlier_fetch(versions, fetches, requests, grace_hours, error_limit_hours):
    grace, error_limit = timedelta(hours=grace_hours), timedelta(hours=error_limit_hours)
    history = HostHistory(versions, grace=grace, error_limit=error_limit)
    logged = [RobotsFetch(ts, status, f"log:{index}") for index, (ts, status) in enumerate(fetches)]
    followed = FetchHistory(reversed(logged))
    for ts, path in requests:
        held = followed.held_at(ts)
        expected_held = reference_held(logged, ts)
        assert (held is None) == (expected_held is None)
        if held is not None:
            assert (held.kind, held.served_at, held.error_since) == expected_held[:3]
        revised = revise(history, history.judge(ts, ("*",), path), held, ts, ("*",), path)
        decision, unread_for = reference_decision(versions, grace, error_limit, logged, ts, ("*",), path)
        assert (revised.judgement.decision, revised.unread_for) == (decision, unread_for)


@settings(max_examples=300, deadline=None)
@given(
    fetches=st.lists(st.tuples(moments(), st.sampled_from(FETCH_STATUSES)), max_size=10),
    cut=moments(),
    later=st.lists(moments(), min_size=1, max_size=5),
)
def test_the_fetches_kept_after_a_cut_hold_what_all_of_them_hold_after_it(fetches, cut, later):
    """A stream keeps only these in state once it has judged every request up to `cut`."""
    every = FetchHistory(RobotsFetch(ts, status, f"log:{n}") for n, (ts, status) in enumerate(fetches))
    kept = FetchHistory(every.kept_after(cut))
    assert len(kept.held) <= len(every.held)
    for ts in later:
        if ts > cut:
            assert kept.held_at(ts) == every.held_at(ts)


@settings(max_examples=300, deadline=None)
@given(fetches=st.lists(st.tuples(moments(), st.sampled_from(FETCH_STATUSES)), min_size=1, max_size=14))
def test_folding_a_key_s_fetches_keeps_at_most_four_and_holds_what_all_of_them_hold(fetches):
    """What `--prior-run` carries over: the crawler holds after the kept fetches exactly what it
    held after every one of them, read in time order as a run writes them."""
    every = FetchHistory(RobotsFetch(ts, status, f"log:{n:02d}") for n, (ts, status) in enumerate(fetches))
    kept: tuple[RobotsFetch, ...] = ()
    for fetch in every.fetches:
        kept = still_deciding(kept, fetch)
        assert len(kept) <= 4
    assert FetchHistory(kept).held[-1] == every.held[-1]


def test_a_long_run_of_errors_keeps_its_first_fetch_and_what_was_held_before_it():
    fetches = [_fetch(0, 200), _fetch(1, 304)] + [_fetch(2 + n / 1000, 503, f"log:e{n:04d}") for n in range(1000)]
    kept: tuple[RobotsFetch, ...] = ()
    for fetch in fetches:
        kept = still_deciding(kept, fetch)
    assert kept == (fetches[0], fetches[1], fetches[2], fetches[-1])
