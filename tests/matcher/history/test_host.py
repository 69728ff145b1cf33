"""One host's robots.txt history and the judgement of a request against it (`matcher.history.host`):
versions by time, status semantics, the 30-day rule, cache grace and changes between captures."""
from __future__ import annotations

import pickle
from bisect import bisect_left, bisect_right
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.registry import load_registry
from helpers import BINGBOT, log_line
from matcher import robots
from matcher.history import (
    DISALLOWED_BETWEEN_CAPTURES,
    HostHistory,
    RobotsHistory,
    RobotsTableError,
    RobotsVersion,
)
from matcher.ip_ranges import build_range_index
from matcher.line_auditor import VERDICT, LineAuditor, host_versions

HOST = "example.com"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
TICK = timedelta(microseconds=1)
TOKENS = ("examplebot",)

ALLOW_ALL = "User-agent: *\nDisallow:\n"
BLOCK_PRIVATE = "User-agent: *\nDisallow: /private\n"


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def ok(when: datetime, body: str, host: str = HOST) -> RobotsVersion:
    return RobotsVersion(host, when, 200, body.encode())


def failed(when: datetime, status: int | None) -> RobotsVersion:
    return RobotsVersion(HOST, when, status)


def history(*versions: RobotsVersion, **settings: timedelta) -> RobotsHistory:
    return RobotsHistory(versions, **settings)


def judge(table: RobotsHistory, ts: datetime, path: str = "/private/a"):
    return table[HOST].judge(ts, TOKENS, path)


# Lookup


def test_version_takes_effect_at_its_exact_second() -> None:
    first, second = ok(T0, ALLOW_ALL), ok(day(1), BLOCK_PRIVATE)
    host = HostHistory([first, second])
    assert host.version_at(day(1)) is second
    assert host.version_at(day(1) - TICK) is first


def test_no_version_before_the_first_one() -> None:
    host = HostHistory([ok(T0, ALLOW_ALL)])
    assert host.version_at(T0 - TICK) is None
    assert host.version_at(T0) is not None


def test_versions_are_ordered_by_time_whatever_the_input_order() -> None:
    versions = [ok(day(2), ALLOW_ALL), failed(T0, 503), ok(day(1), BLOCK_PRIVATE)]
    times = [version.effective_from for version in HostHistory(versions).versions]
    assert times == [T0, day(1), day(2)]


def test_equal_rows_at_one_timestamp_are_one_version() -> None:
    host = HostHistory([ok(T0, BLOCK_PRIVATE), ok(T0, BLOCK_PRIVATE)])
    assert len(host.versions) == 1


@pytest.mark.parametrize(
    "duplicate",
    [ok(T0, ALLOW_ALL), RobotsVersion(HOST, T0, 203, BLOCK_PRIVATE.encode()), failed(T0, 503)],
)
def test_different_rows_at_one_timestamp_are_rejected(duplicate: RobotsVersion) -> None:
    with pytest.raises(RobotsTableError, match="two different versions"):
        history(ok(T0, BLOCK_PRIVATE), duplicate)


def test_a_host_history_holds_one_host() -> None:
    with pytest.raises(RobotsTableError, match="several hosts"):
        HostHistory([ok(T0, ALLOW_ALL), ok(T0, ALLOW_ALL, host="other.example")])


# Judging against the version in effect


def test_change_applies_from_its_exact_second_never_before() -> None:
    first = ok(T0, ALLOW_ALL)
    second = ok(day(1), BLOCK_PRIVATE)
    table = history(first, second, grace=timedelta(0))
    at_change = judge(table, day(1))
    just_before = judge(table, day(1) - TICK)
    assert (at_change.decision, at_change.version) == ("disallowed", second)
    assert (just_before.decision, just_before.version) == ("allowed", first)


def test_body_decision_names_the_rule_and_version() -> None:
    version = ok(T0, BLOCK_PRIVATE)
    judgement = judge(history(version), day(1))
    assert judgement.reason == "rule"
    assert judgement.match is not None and judgement.match.rule is not None
    assert (judgement.match.rule.pattern, judgement.match.rule.line) == ("/private", 2)
    assert judgement.version is judgement.rules_version is version


def test_request_before_first_version_is_unknown() -> None:
    judgement = judge(history(ok(T0, ALLOW_ALL)), T0 - TICK, "/page")
    assert (judgement.decision, judgement.reason) == ("unknown", "no-robots-version")
    assert judgement.version is None and judgement.match is None


@pytest.mark.parametrize("path", ["/robots.txt", "/%72obots.txt", "/robots.txt?v=2"])
def test_robots_txt_is_allowed_before_the_first_version(path: str) -> None:
    judgement = judge(history(ok(T0, ALLOW_ALL)), T0 - TICK, path)
    assert (judgement.decision, judgement.reason) == ("allowed", "robots-exempt")


@pytest.mark.parametrize("path", ["/robots.txt", "/%72obots.txt"])
def test_robots_txt_is_allowed_during_a_server_error(path: str) -> None:
    outage = failed(day(1), 503)
    judgement = judge(history(ok(T0, ALLOW_ALL), outage), day(1), path)
    assert (judgement.decision, judgement.reason, judgement.version) == (
        "allowed",
        "robots-exempt",
        outage,
    )


def test_robots_txt_is_allowed_when_its_rules_disallow_everything() -> None:
    judgement = judge(history(ok(T0, "User-agent: *\nDisallow: /\n")), day(1), "/robots.txt")
    assert (judgement.decision, judgement.reason) == ("allowed", "robots-exempt")


def test_a_request_to_a_host_without_history_is_unknown() -> None:
    auditor = LineAuditor(
        log_format="host_combined", registry=load_registry(None), ranges=build_range_index([], {}),
        error_limit=timedelta(days=30), grace=timedelta(hours=24),
    )
    lines = [log_line(host, day(3), "/private/a", BINGBOT, ip="198.51.100.7") for host in ("elsewhere.example", "-", HOST)]
    outcomes = auditor.audit_lines("log", 1, lines, {HOST: host_versions([ok(T0, BLOCK_PRIVATE)])})
    assert [(kind, verdict["host"], verdict["decision"], verdict["reason"]) for kind, verdict in outcomes] == [
        (VERDICT, "elsewhere.example", "unknown", "unknown-host"),
        (VERDICT, None, "unknown", "no-host"),
        (VERDICT, HOST, "disallowed", "rule"),
    ]


@pytest.mark.parametrize("status", [301, 403, 404, 410])
def test_unavailable_robots_allows_everything(status: int) -> None:
    judgement = judge(history(failed(T0, status)), day(1))
    assert (judgement.decision, judgement.reason) == ("allowed", "robots-unavailable")
    assert judgement.match is None


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (500, "robots-server-error"),
        (503, "robots-server-error"),
        (429, "robots-server-error"),
        (None, "robots-unreachable"),
    ],
)
def test_server_errors_disallow_everything(status: int | None, reason: str) -> None:
    table = history(ok(T0, ALLOW_ALL), failed(day(1), status), grace=timedelta(0))
    judgement = judge(table, day(2), "/")
    assert (judgement.decision, judgement.reason) == ("disallowed", reason)
    assert judgement.match is None and judgement.rules_version is None


# The 30-day error rule


def test_long_error_state_falls_back_to_the_last_good_version() -> None:
    good = ok(T0, BLOCK_PRIVATE)
    outage, still_down = failed(day(1), 503), failed(day(10), None)
    table = history(good, outage, still_down)
    private = judge(table, day(31) + TICK)
    public = judge(table, day(31) + TICK, "/public")
    assert (private.decision, private.reason) == ("disallowed", "error-over-30-days-last-good")
    assert (private.version, private.rules_version) == (still_down, good)
    assert private.match is not None and private.match.rule is not None
    assert (public.decision, public.reason) == ("allowed", "error-over-30-days-last-good")


def test_error_state_of_exactly_the_limit_still_disallows() -> None:
    table = history(ok(T0, ALLOW_ALL), failed(day(1), 503), grace=timedelta(0))
    judgement = judge(table, day(31), "/public")
    assert (judgement.decision, judgement.reason) == ("disallowed", "robots-server-error")


def test_long_error_state_without_good_version_allows_everything() -> None:
    table = history(failed(T0, 503), failed(day(5), 500))
    judgement = judge(table, day(30) + TICK)
    assert (judgement.decision, judgement.reason) == ("allowed", "error-over-30-days-allow")
    assert judgement.version == failed(day(5), 500)
    assert judgement.rules_version is None


def test_long_error_state_after_a_4xx_allows_everything() -> None:
    # The last good fetch said "no robots.txt": that, not the older rules, is what a
    # crawler's cache holds.
    table = history(ok(T0, BLOCK_PRIVATE), failed(day(5), 404), failed(day(10), 503))
    judgement = judge(table, day(41))
    assert (judgement.decision, judgement.reason) == ("allowed", "error-over-30-days-allow")


def test_error_state_is_measured_from_the_start_of_its_own_run() -> None:
    table = history(
        failed(T0, 503), ok(day(20), ALLOW_ALL), failed(day(25), 503), grace=timedelta(0)
    )
    judgement = judge(table, day(40))
    assert (judgement.decision, judgement.reason) == ("disallowed", "robots-server-error")


def test_error_limit_is_configurable() -> None:
    versions = (ok(T0, BLOCK_PRIVATE), failed(day(1), 503))
    short = history(*versions, error_limit=timedelta(days=2))
    default = history(*versions)
    assert judge(short, day(4), "/public").decision == "allowed"
    assert judge(default, day(4), "/public").decision == "disallowed"


# Cache grace


def test_request_allowed_by_a_recent_version_is_within_grace() -> None:
    old, new = ok(T0, ALLOW_ALL), ok(day(1), BLOCK_PRIVATE)
    judgement = judge(history(old, new), day(1) + timedelta(hours=1))
    assert judgement.decision == "disallowed-within-grace"
    assert (judgement.version, judgement.grace_version) == (new, old)
    assert judgement.reason == "rule"
    assert judgement.match is not None and judgement.match.rule is not None


def test_zero_grace_turns_grace_off() -> None:
    table = history(ok(T0, ALLOW_ALL), ok(day(1), BLOCK_PRIVATE), grace=timedelta(0))
    judgement = judge(table, day(1) + timedelta(hours=1))
    assert judgement.decision == "disallowed"
    assert judgement.grace_version is None


def test_grace_ends_when_the_period_ends() -> None:
    table = history(ok(T0, ALLOW_ALL), ok(day(1), BLOCK_PRIVATE))
    assert judge(table, day(2) - TICK).decision == "disallowed-within-grace"
    assert judge(table, day(2)).decision == "disallowed"


def test_custom_grace_period() -> None:
    table = history(ok(T0, ALLOW_ALL), ok(day(1), BLOCK_PRIVATE), grace=timedelta(hours=2))
    assert judge(table, day(1) + timedelta(hours=2) - TICK).decision == "disallowed-within-grace"
    assert judge(table, day(1) + timedelta(hours=2)).decision == "disallowed"


def test_no_grace_when_earlier_versions_disallowed_too() -> None:
    table = history(ok(T0, "User-agent: *\nDisallow: /priv\n"), ok(day(1), BLOCK_PRIVATE))
    assert judge(table, day(1) + timedelta(hours=1)).decision == "disallowed"


def test_grace_looks_past_several_recent_versions() -> None:
    allowing = ok(T0, ALLOW_ALL)
    table = history(
        allowing,
        ok(T0 + timedelta(hours=20), BLOCK_PRIVATE),
        ok(T0 + timedelta(hours=22), "User-agent: *\nDisallow: /\n"),
    )
    judgement = judge(table, T0 + timedelta(hours=30))
    assert (judgement.decision, judgement.grace_version) == ("disallowed-within-grace", allowing)


def test_grace_names_the_most_recent_allowing_version() -> None:
    recent = ok(T0 + timedelta(hours=10), "User-agent: *\nDisallow: /other\n")
    table = history(ok(T0, ALLOW_ALL), recent, ok(T0 + timedelta(hours=20), BLOCK_PRIVATE))
    assert judge(table, T0 + timedelta(hours=21)).grace_version == recent


def test_server_error_disallow_is_within_grace_of_an_allowing_version() -> None:
    good = ok(T0, ALLOW_ALL)
    table = history(good, failed(day(1), 503))
    judgement = judge(table, day(1) + timedelta(hours=3), "/")
    assert (judgement.decision, judgement.reason) == (
        "disallowed-within-grace",
        "robots-server-error",
    )
    assert judgement.grace_version == good


def test_unavailable_version_counts_as_allowing_for_grace() -> None:
    missing = failed(T0, 404)
    judgement = judge(history(missing, ok(day(1), BLOCK_PRIVATE)), day(1) + timedelta(hours=1))
    assert (judgement.decision, judgement.grace_version) == ("disallowed-within-grace", missing)


def test_grace_judges_an_error_version_with_the_error_rule() -> None:
    blocked_after_long_outage = history(failed(T0, 503), ok(day(40), BLOCK_PRIVATE))
    blocked_after_short_outage = history(failed(T0, 503), ok(day(10), BLOCK_PRIVATE))
    assert judge(blocked_after_long_outage, day(40) + timedelta(hours=1)).decision == (
        "disallowed-within-grace"
    )
    assert judge(blocked_after_short_outage, day(10) + timedelta(hours=1)).decision == "disallowed"


def test_no_version_before_the_history_does_not_grant_grace() -> None:
    judgement = judge(history(ok(T0, BLOCK_PRIVATE)), T0 + timedelta(hours=1))
    assert judgement.decision == "disallowed"


def test_grace_leaves_allowed_requests_alone() -> None:
    table = history(ok(T0, BLOCK_PRIVATE), ok(day(1), ALLOW_ALL))
    judgement = judge(table, day(1) + timedelta(hours=1))
    assert (judgement.decision, judgement.grace_version) == ("allowed", None)


# Crawl-delay

DELAYS = "User-agent: examplebot\nCrawl-delay: 5\nDisallow: /x\n\nUser-agent: *\nCrawl-delay: 1\n"


def test_crawl_delay_comes_from_the_chosen_group() -> None:
    table = history(ok(T0, DELAYS))
    own = table[HOST].judge(day(1), ("examplebot",), "/page")
    other = table[HOST].judge(day(1), ("otherbot",), "/page")
    assert (own.crawl_delay, own.crawl_delay_line) == (5.0, 2)
    assert (other.crawl_delay, other.crawl_delay_line) == (1.0, 6)


def test_crawl_delay_is_kept_for_robots_txt_itself() -> None:
    judgement = judge(history(ok(T0, DELAYS)), day(1), "/robots.txt")
    assert (judgement.reason, judgement.crawl_delay) == ("robots-exempt", 5.0)


def test_no_crawl_delay_without_a_group_or_a_body() -> None:
    table = history(ok(T0, "User-agent: otherbot\nCrawl-delay: 3\n"), failed(day(1), 503))
    assert judge(table, day(0.5)).crawl_delay is None
    assert judge(table, day(2)).crawl_delay_line is None


def test_crawl_delay_under_the_error_rule_is_the_last_good_versions() -> None:
    table = history(ok(T0, DELAYS), failed(day(1), 503))
    assert judge(table, day(40), "/page").crawl_delay == 5.0


# Parse once, decide many times


def test_each_version_is_parsed_once_and_only_when_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[bytes] = []
    real_parse = robots.parse

    def counting_parse(body: bytes | str) -> robots.RobotsFile:
        parsed.append(body)  # type: ignore[arg-type]
        return real_parse(body)

    monkeypatch.setattr(robots, "parse", counting_parse)
    table = history(
        ok(T0, ALLOW_ALL), ok(day(1), BLOCK_PRIVATE), failed(day(2), 503), ok(day(10), DELAYS)
    )
    assert parsed == []
    for hour in range(0, 72, 3):
        for path in ("/private/a", "/public", "/robots.txt"):
            judge(table, day(1) + timedelta(hours=hour), path)
    assert sorted(parsed) == sorted([ALLOW_ALL.encode(), BLOCK_PRIVATE.encode()])


def test_history_pickles_after_use_and_parses_again_once(monkeypatch: pytest.MonkeyPatch) -> None:
    table = history(ok(T0, BLOCK_PRIVATE))
    before = judge(table, day(1))
    copy = pickle.loads(pickle.dumps(table))
    parsed: list[bytes | str] = []
    real_parse = robots.parse
    monkeypatch.setattr(robots, "parse", lambda body: parsed.append(body) or real_parse(body))
    after = [judge(copy, day(1)) for _ in range(3)]
    assert {(j.decision, j.reason, j.version) for j in after} == {
        (before.decision, before.reason, before.version)
    }
    assert parsed == [BLOCK_PRIVATE.encode()]


# Settings and request times


def test_naive_request_time_is_rejected() -> None:
    table = history(ok(T0, ALLOW_ALL))
    with pytest.raises(ValueError, match="timezone-aware"):
        table[HOST].judge(datetime(2026, 11, 3), TOKENS, "/")


@pytest.mark.parametrize("setting", ["grace", "error_limit"])
def test_negative_durations_are_rejected(setting: str) -> None:
    with pytest.raises(ValueError, match=setting):
        history(ok(T0, ALLOW_ALL), **{setting: timedelta(seconds=-1)})


# observed_before: a change known only between two observations (docs/semantics.md § History)


def observed(version: RobotsVersion, before: datetime) -> RobotsVersion:
    return replace(version, observed_before=before)


def test_between_captures_when_only_the_earlier_candidate_disallows() -> None:
    earlier = ok(day(0), BLOCK_PRIVATE)
    later = observed(ok(day(2), ALLOW_ALL), day(1))
    table = history(earlier, later, grace=timedelta(0))
    result = judge(table, day(1.5))
    assert (result.decision, result.reason) == (DISALLOWED_BETWEEN_CAPTURES, "change-time-unknown")
    assert result.version == earlier and result.later_version == later
    assert result.match.rule.pattern == "/private"  # the earlier version's rule still explains it


def test_the_window_is_open_at_observed_before_and_closed_at_effective_from() -> None:
    table = history(ok(day(0), BLOCK_PRIVATE), observed(ok(day(2), ALLOW_ALL), day(1)), grace=timedelta(0))
    assert judge(table, day(1)).decision == "disallowed"  # the old content was seen then
    assert judge(table, day(1) + TICK).decision == DISALLOWED_BETWEEN_CAPTURES
    assert judge(table, day(2) - TICK).decision == DISALLOWED_BETWEEN_CAPTURES
    assert judge(table, day(2)).decision == "allowed"  # the new content was seen then


def test_in_the_window_an_allowing_earlier_version_decides_whatever_the_later_says() -> None:
    table = history(ok(day(0), ALLOW_ALL), observed(ok(day(2), BLOCK_PRIVATE), day(1)), grace=timedelta(0))
    result = judge(table, day(1.5))
    assert (result.decision, result.later_version) == ("allowed", None)
    assert result.version.effective_from == day(0)


def test_in_the_window_both_candidates_disallowing_is_a_plain_disallow() -> None:
    blocks_more = "User-agent: *\nDisallow: /private\nDisallow: /tmp\n"
    table = history(ok(day(0), BLOCK_PRIVATE), observed(ok(day(2), blocks_more), day(1)), grace=timedelta(0))
    result = judge(table, day(1.5))
    assert (result.decision, result.later_version) == ("disallowed", None)


@pytest.mark.parametrize(("status", "decision"), [(404, DISALLOWED_BETWEEN_CAPTURES), (503, "disallowed")])
def test_a_later_status_only_candidate_counts_by_its_meaning(status, decision) -> None:
    table = history(ok(day(0), BLOCK_PRIVATE), observed(failed(day(2), status), day(1)), grace=timedelta(0))
    assert judge(table, day(1.5)).decision == decision


def test_without_observed_before_the_change_time_is_exact() -> None:
    table = history(ok(day(0), BLOCK_PRIVATE), ok(day(2), ALLOW_ALL), grace=timedelta(0))
    assert judge(table, day(2) - TICK).decision == "disallowed"


def test_the_later_candidate_is_tried_before_the_grace() -> None:
    table = history(
        ok(day(0), ALLOW_ALL), ok(day(1), BLOCK_PRIVATE), observed(ok(day(3), ALLOW_ALL), day(1) + TICK),
        grace=timedelta(days=1),
    )
    result = judge(table, day(1.5))
    assert result.decision == DISALLOWED_BETWEEN_CAPTURES and result.grace_version is None
    assert judge(table, day(1)).decision == "disallowed-within-grace"  # before the window


def test_observed_before_must_precede_effective_from_and_follow_the_previous_version() -> None:
    with pytest.raises(RobotsTableError, match="must be earlier than effective_from"):
        RobotsVersion(HOST, day(1), 200, b"", observed_before=day(1))
    with pytest.raises(RobotsTableError, match="earlier than the previous version"):
        history(ok(day(1), ALLOW_ALL), observed(ok(day(2), ALLOW_ALL), day(0.5)))


# Between captures, against a reference that lists the candidate versions directly

_CONTENTS = {"allow": (200, ALLOW_ALL), "block": (200, BLOCK_PRIVATE), "gone": (404, None), "down": (503, None)}


def _reference_decision(plan: list[tuple[int, str, int | None]], at: int) -> str:
    """Plain reading of docs/semantics.md § History with grace off: the candidates are the version
    in effect by effective_from and, inside its window, the next one; allowed when the first allows."""
    def allows(content: str) -> bool:
        return content in ("allow", "gone")

    in_effect = max((step for step in plan if step[0] <= at), key=lambda step: step[0], default=None)
    if in_effect is None:
        return "unknown"
    if allows(in_effect[1]):
        return "allowed"
    later = min((step for step in plan if step[0] > at), key=lambda step: step[0], default=None)
    if later is not None and later[2] is not None and at > later[2] and allows(later[1]):
        return DISALLOWED_BETWEEN_CAPTURES
    return "disallowed"


@given(
    steps=st.lists(
        st.tuples(st.integers(1, 40), st.sampled_from(sorted(_CONTENTS)), st.one_of(st.none(), st.integers(0, 59))),
        min_size=1, max_size=6, unique_by=lambda step: step[0],
    ),
    data=st.data(),
)
def test_between_captures_matches_the_reference(steps, data):
    # Times in minutes: a version every few hours, observed_before some minutes after the
    # previous version took effect, requests on any minute (the window's edges included).
    plan = []
    versions = []
    for index, (hour, content, offset) in enumerate(sorted(steps)):
        status, body = _CONTENTS[content]
        observed = plan[-1][0] + offset if index > 0 and offset is not None else None
        plan.append((hour * 60, content, observed))
        versions.append(RobotsVersion(
            HOST, T0 + timedelta(hours=hour), status, None if body is None else body.encode(),
            observed_before=None if observed is None else T0 + timedelta(minutes=observed),
        ))
    table = history(*versions, grace=timedelta(0))
    # The window's edges are where a slip would hide; random minutes cover the rest.
    starts = {start + shift for start, _, _ in plan for shift in (-1, 0)}
    observations = {seen + shift for _, _, seen in plan if seen is not None for shift in (0, 1)}
    edges = sorted(starts | observations)
    minute = data.draw(st.one_of(st.integers(0, 45 * 60), st.sampled_from(edges)))
    assert judge(table, T0 + timedelta(minutes=minute)).decision == _reference_decision(plan, minute)


# Turning points: the columnar audit decides once per span of time between two of them


_VERSION_ROWS = st.tuples(
    st.integers(0, 60 * 24),  # hours after T0
    st.sampled_from([200, 200, 200, 404, 429, 500, 503, None]),
    st.sampled_from([ALLOW_ALL, BLOCK_PRIVATE, "User-agent: examplebot\nDisallow: /\n"]),
    st.none() | st.integers(1, 72),  # hours its change may have happened before it
)


@given(
    rows=st.lists(_VERSION_ROWS, min_size=1, max_size=6, unique_by=lambda row: row[0]),
    grace_hours=st.integers(0, 72),
    limit_days=st.integers(0, 20),
    minutes=st.lists(st.integers(-24 * 60, 70 * 24 * 60), max_size=30),
)
def test_times_no_turning_point_separates_are_judged_alike(rows, grace_hours, limit_days, minutes) -> None:
    versions, previous = [], None
    for hours, status, body, unseen_for in sorted(rows):
        when = T0 + timedelta(hours=hours)
        seen = None if unseen_for is None or previous is None else max(previous, when - timedelta(hours=unseen_for))
        seen = None if seen == when else seen
        versions.append(RobotsVersion(HOST, when, status, body.encode() if status == 200 else None, seen))
        previous = when
    host = HostHistory(versions, grace=timedelta(hours=grace_hours), error_limit=timedelta(days=limit_days))
    points = host.turning_points()
    assert list(points) == sorted(set(points))
    times = [T0 + timedelta(minutes=m) for m in minutes] + [p + d for p in points for d in (-TICK, timedelta(0), TICK)]
    spans: dict[tuple[int, int], datetime] = {}
    for ts in times:
        span = (bisect_left(points, ts), bisect_right(points, ts))
        first = spans.setdefault(span, ts)
        for path in ("/private/a", "/public", "/robots.txt"):
            for tokens in (TOKENS, ("otherbot",)):
                assert host.judge(ts, tokens, path) == host.judge(first, tokens, path), (ts, first, path)
