"""Re-deciding past requests under a proposed robots.txt (matcher.whatif)."""
from __future__ import annotations

from collections import Counter

from hypothesis import given, strategies as st

from matcher import robots
from matcher.whatif import (
    ALLOWED_TO_DISALLOWED,
    DISALLOWED_TO_ALLOWED,
    PastRequest,
    by_crawler,
    redecide,
)

PROPOSAL = robots.parse(
    "User-agent: Googlebot\nDisallow: /private/\nAllow: /private/open\n\n"
    "User-agent: *\nDisallow: /tmp/\n\n"
    "User-agent: AdsBot-Google\nDisallow: /ads/\n"
)
GOOGLE = ("googlebot",)
IMAGE = ("googlebot-image", "googlebot")


def past(path, decision, tokens=GOOGLE, crawler="Googlebot", identity="verified", catch_all=True):
    return PastRequest(crawler, identity, tokens, catch_all, path, decision)


def test_allowed_requests_the_proposal_disallows_flip_with_the_rule_that_did_it():
    outcome = redecide(Counter({past("/private/a", "allowed"): 7, past("/public", "allowed"): 3}), PROPOSAL)
    (flip,) = outcome.flips
    assert (flip.change, flip.path, flip.requests) == (ALLOWED_TO_DISALLOWED, "/private/a", 7)
    assert (flip.rule.kind, flip.rule.pattern, flip.rule.line) == ("disallow", "/private/", 2)
    assert outcome.requests == 10 and outcome.unchanged == 3


def test_disallowed_requests_the_proposal_allows_flip_naming_the_allow_rule_or_no_match():
    outcome = redecide(
        Counter({past("/private/open/x", "disallowed"): 2, past("/elsewhere", "disallowed-within-grace"): 5}),
        PROPOSAL,
    )
    flips = {flip.path: flip for flip in outcome.flips}
    assert flips["/private/open/x"].change == DISALLOWED_TO_ALLOWED
    assert flips["/private/open/x"].rule.pattern == "/private/open"
    # A within-grace verdict was a disallow; the proposal allows it with no rule at all.
    assert (flips["/elsewhere"].rule, flips["/elsewhere"].reason, flips["/elsewhere"].requests) == (None, "no-match", 5)


def test_the_same_token_chain_picks_the_group():
    # Googlebot-Image falls back to the googlebot group, never to `*`, whose /tmp/ rule it escapes.
    outcome = redecide(Counter({past("/tmp/x", "disallowed", IMAGE, "Googlebot-Image"): 1}), PROPOSAL)
    assert [f.change for f in outcome.flips] == [DISALLOWED_TO_ALLOWED]
    # An unlisted crawler answers to `*`.
    outcome = redecide(Counter({past("/tmp/x", "allowed", ("foobot",), "foobot", "unverifiable"): 1}), PROPOSAL)
    assert [f.change for f in outcome.flips] == [ALLOWED_TO_DISALLOWED]


def test_a_crawler_that_ignores_the_catch_all_keeps_ignoring_it():
    ads = dict(tokens=("adsbot-google-mobile",), crawler="AdsBot-Google-Mobile", catch_all=False)
    outcome = redecide(Counter({past("/tmp/x", "allowed", **ads): 4}), PROPOSAL)
    assert outcome.flips == () and outcome.unchanged == 4


def test_robots_txt_itself_never_flips_to_disallowed():
    strict = robots.parse("User-agent: *\nDisallow: /\n")
    outcome = redecide(Counter({past("/robots.txt", "allowed"): 1, past("/a", "allowed"): 1}), strict)
    assert [f.path for f in outcome.flips] == ["/a"]


def test_requests_without_a_version_then_are_counted_apart_not_as_flips():
    outcome = redecide(Counter({past("/private/a", "unknown"): 2, past("/b", "unknown"): 1}), PROPOSAL)
    assert outcome.flips == ()
    assert (outcome.unknown_now_disallowed, outcome.unknown_now_allowed, outcome.unchanged) == (2, 1, 0)


def test_by_crawler_totals_each_way_and_keeps_the_top_paths():
    counted = Counter({past(f"/private/{i}", "allowed"): i + 1 for i in range(15)})
    counted[past("/private/open", "disallowed", identity="spoofed")] = 100
    changes = by_crawler(redecide(counted, PROPOSAL).flips, top=3)
    assert [(c.identity, c.requests[ALLOWED_TO_DISALLOWED], c.requests[DISALLOWED_TO_ALLOWED]) for c in changes] == [
        ("verified", sum(range(1, 16)), 0),
        ("spoofed", 0, 100),
    ]
    assert [f.path for f in changes[0].top[ALLOWED_TO_DISALLOWED]] == ["/private/14", "/private/13", "/private/12"]


paths = st.lists(st.sampled_from(["a", "b", "private", "open", "tmp", "robots.txt", "%2A", "?q"]), max_size=4).map(
    lambda parts: "/" + "/".join(parts)
)
requests = st.builds(
    past,
    paths,
    st.sampled_from(["allowed", "disallowed", "disallowed-within-grace", "unknown"]),
    st.sampled_from([GOOGLE, IMAGE, ("foobot",), ()]),
)


@given(st.lists(requests, max_size=40))
def test_counting_first_equals_deciding_every_request_one_by_one(rows):
    """The reference decides each request separately with `RobotsFile.decide_path`."""
    outcome = redecide(Counter(rows), PROPOSAL)
    expected = Counter()
    for row in rows:
        now = PROPOSAL.decide_path(row.tokens, row.path, row.catch_all).allowed
        if row.decision == "unknown":
            expected["unknown-allowed" if now else "unknown-disallowed"] += 1
        elif now != (row.decision == "allowed"):
            expected[DISALLOWED_TO_ALLOWED if now else ALLOWED_TO_DISALLOWED] += 1
    got = Counter()
    for flip in outcome.flips:
        got[flip.change] += flip.requests
    got["unknown-allowed"] = outcome.unknown_now_allowed
    got["unknown-disallowed"] = outcome.unknown_now_disallowed
    assert +got == +expected
    assert outcome.unchanged == len(rows) - sum(expected.values())


def test_flips_of_one_crawler_path_and_rule_are_one_however_their_token_chains_differ():
    # Two token chains recorded for one crawler name (a registry update between runs) meet one rule.
    counted = Counter({past("/private/a", "allowed", GOOGLE): 2, past("/private/a", "allowed", IMAGE): 3})
    (flip,) = redecide(counted, PROPOSAL).flips
    assert (flip.crawler, flip.path, flip.rule.pattern, flip.requests) == ("Googlebot", "/private/a", "/private/", 5)


def test_flips_come_most_requests_first_then_by_crawler():
    counted = Counter({
        past("/private/b", "allowed"): 1,
        past("/tmp/a", "allowed", ("foobot",), None, "undeclared"): 4,
        past("/private/a", "allowed"): 4,
        past("/private/c", "allowed", identity="spoofed"): 9,
    })
    flips = redecide(counted, PROPOSAL).flips
    assert [(f.crawler, f.identity, f.path) for f in flips] == [
        ("Googlebot", "spoofed", "/private/c"), (None, "undeclared", "/tmp/a"), ("Googlebot", "verified", "/private/a"),
        ("Googlebot", "verified", "/private/b"),
    ]
    changes = by_crawler(flips)
    assert [(c.crawler, c.identity, sum(c.requests.values())) for c in changes] == [
        ("Googlebot", "spoofed", 9), ("Googlebot", "verified", 5), (None, "undeclared", 4),
    ]
    assert set(changes[0].requests) == set(changes[0].top) == {ALLOWED_TO_DISALLOWED, DISALLOWED_TO_ALLOWED}
    assert changes[0].top[DISALLOWED_TO_ALLOWED] == ()


def test_a_proposal_moves_per_purpose_conflicts_and_never_those_of_a_logged_header():
    before = "ai-training: __usage_ai-training Disallow: /drafts/ line 2"
    header = "ai-training: Content-Usage header train-ai=n"
    requests = Counter({
        PastRequest("GPTBot", "verified", ("gptbot",), True, "/drafts/a", "allowed", ("ai-training",), (before, header)): 3,
        PastRequest("GPTBot", "verified", ("gptbot",), True, "/news/a", "allowed", ("ai-training",), ()): 2,
    })
    proposal = robots.parse("User-agent: __usage_ai-training\nDisallow: /news/\n")
    changes = {(c.change, c.conflict): c.requests for c in redecide(requests, proposal).preference_changes}
    assert changes == {
        ("removed", before): 3,
        ("created", "ai-training: __usage_ai-training Disallow: /news/ line 2"): 2,
    }
