"""What a robots.txt change is, which paths it turns for a crawler, and the periods a change's
row counts."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from matcher import robots
from matcher.changes import OPENS, RESTRICTS, change_row, host_changes, requests_of
from matcher.history import RobotsVersion
from matcher.timerange import micros

HOST = "www.example.com"
T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def version(hours: float, body: str | None, status: int | None = 200) -> RobotsVersion:
    return RobotsVersion(HOST, at(hours), status, None if body is None else body.encode())


OPEN = "User-agent: *\nDisallow: /private\n"
CLOSED = "User-agent: *\nDisallow: /private\nDisallow: /new\n"
AI_CLOSED = "User-agent: *\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow: /\n"


def test_a_change_is_an_ok_version_replacing_an_ok_version_with_another_body():
    versions = [
        version(0, OPEN), version(5, OPEN),  # the same body again: no change
        version(10, None, 503), version(12, CLOSED),  # through an error: no change
        version(20, OPEN), version(30, None, 404), version(40, CLOSED),
    ]
    changes = host_changes(reversed(versions))
    assert [(c.previous.effective_from, c.at, c.next_at) for c in changes] == [(at(12), at(20), None)]


def test_a_path_is_turned_for_a_crawler_by_its_own_tokens():
    (change,) = host_changes([version(0, OPEN), version(10, AI_CLOSED)])
    assert change.direction(("gptbot",), True, "/page") == RESTRICTS
    assert change.direction(("googlebot",), True, "/page") is None
    assert change.direction(("gptbot",), True, "/private") is None  # disallowed before already
    (opened,) = host_changes([version(0, AI_CLOSED), version(10, OPEN)])
    assert opened.direction(("gptbot",), True, "/page") == OPENS
    # A crawler that obeys only groups naming it is not turned by the catch-all group.
    (closed,) = host_changes([version(0, OPEN), version(10, CLOSED)])
    assert closed.direction(("adsbot-google",), False, "/new") is None
    assert closed.direction(("adsbot-google",), True, "/new") == RESTRICTS


_AGENTS = ("*", "GPTBot", "Googlebot", "bingbot")
_PATTERNS = ("/", "/private", "/private/", "/new", "/a*", "/*.pdf$", "/page$", "")
_group = st.tuples(
    st.sampled_from(_AGENTS),
    st.lists(st.tuples(st.sampled_from(("Allow", "Disallow")), st.sampled_from(_PATTERNS)), max_size=4),
)
_groups = st.lists(_group, max_size=4)


def _text(groups) -> str:
    return "\n".join(
        f"User-agent: {agent}\n" + "".join(f"{kind}: {pattern}\n" for kind, pattern in rules) for agent, rules in groups
    )


@st.composite
def _bodies(draw) -> tuple[str, str]:
    """Two bodies, the second often the first with one rule's kind flipped: the change that
    leaves a group's patterns as they were and turns its paths."""
    before = draw(_groups)
    if before and draw(st.booleans()):
        at = draw(st.integers(0, len(before) - 1))
        agent, rules = before[at]
        if rules:
            which = draw(st.integers(0, len(rules) - 1))
            kind, pattern = rules[which]
            flipped = [*rules[:which], ("Allow" if kind == "Disallow" else "Disallow", pattern), *rules[which + 1:]]
            return _text(before), _text([*before[:at], (agent, flipped), *before[at + 1:]])
    return _text(before), _text(draw(_groups))


@settings(max_examples=150, deadline=None)
@given(
    bodies=_bodies(),
    tokens=st.sampled_from([("gptbot",), ("googlebot",), ("bingbot",), ("adsbot-google",), ("googlebot-image", "googlebot")]),
    catch_all=st.booleans(),
    paths=st.lists(st.sampled_from(["/", "/private", "/private/x", "/new", "/a/b", "/x.pdf", "/page", "/page2", "/robots.txt"]), min_size=1),
)
def test_a_path_turns_exactly_when_the_two_bodies_decide_it_differently(bodies, tokens, catch_all, paths):
    before, after = bodies
    (change,) = host_changes([version(0, before), version(10, after)]) or [None]
    if change is None:
        return  # the same body twice is no change
    old, new = robots.parse(before), robots.parse(after)
    for path in paths:
        was, now = (parsed.decide_path(tokens, path, catch_all).allowed for parsed in (old, new))
        assert change.direction(tokens, catch_all, path) == (None if was == now else OPENS if now else RESTRICTS)


def test_a_request_counts_for_the_change_it_follows_and_the_later_ones_whose_before_period_reaches_it():
    changes = host_changes([version(0, OPEN), version(10, CLOSED), version(14, OPEN), version(40, CLOSED)])
    assert [c.at for c in changes] == [at(10), at(14), at(40)]

    def counted(hours: float) -> list:
        return [(c.at, d) for c, d in requests_of(changes, at(hours), ("bingbot",), True, "/new")]

    # 12h: after the change at 10 h; the change at 14 h (after-period 26 h) reaches back to it too.
    assert counted(12) == [(at(10), RESTRICTS), (at(14), OPENS), (at(40), RESTRICTS)]
    # 3h: before the change at 10 h, whose before-period (4 h, as its after-period) starts at 6 h; the
    # change at 14 h reaches back 26 h, and the last one's end is known only when the run ends.
    assert counted(3) == [(at(14), OPENS), (at(40), RESTRICTS)]
    assert counted(50) == [(at(40), RESTRICTS)]


def test_the_before_period_is_as_long_as_the_after_period_and_starts_at_the_host_s_first_request():
    key = (HOST, micros(at(10)), RESTRICTS, "ClaudeBot", "verified")
    requests = [
        (micros(at(0.5)), "allowed"),  # before the host's first request: cannot be
        (micros(at(2)), "allowed"),
        (micros(at(12)), "disallowed-before-refetch"),
        (micros(at(20)), "disallowed-within-grace"),
        (micros(at(48)), "disallowed"),
        (micros(at(49)), "disallowed-between-captures"),
    ]
    row = change_row(key, requests, (micros(at(1)), micros(at(50))), None, [at(5), at(30), at(60)])
    assert (row["before_from"], row["after_until"]) == (at(1), at(50))
    assert (row["requests_before"], row["requests_after"]) == (1, 4)
    assert (row["within_grace"], row["before_refetch"], row["violations"], row["between_captures"]) == (1, 1, 1, 1)
    assert row["first_robots_fetch_after"] == at(30)
    assert row["last_newly_disallowed_request"] == at(49)
    # The next change ends the after-period; the before-period is as long (4 h).
    cut = change_row(key, requests, (micros(at(1)), micros(at(50))), at(14), [])
    assert (cut["before_from"], cut["after_until"]) == (at(6), at(14))
    assert (cut["requests_before"], cut["requests_after"], cut["first_robots_fetch_after"]) == (0, 1, None)
    # Nothing in either period: no row.
    assert change_row(key, requests[:1], (micros(at(0)), micros(at(50))), at(12), []) is None


def test_an_opening_change_has_no_last_newly_disallowed_request():
    key = (HOST, micros(at(10)), OPENS, "Googlebot", "verified")
    row = change_row(key, [(micros(at(2)), "disallowed"), (micros(at(30)), "allowed")], (micros(at(1)), micros(at(40))), None, [])
    assert (row["requests_before"], row["requests_after"], row["violations"]) == (1, 1, 0)
    assert row["last_newly_disallowed_request"] is None
