"""Decisions explained (`matcher.explain`): the sentence `crawl-audit check` prints, the rule as a
site owner finds it in the file, and the JSON object of `check --json`, for decisions of real files."""
from __future__ import annotations

import json

import pytest

from matcher import robots
from matcher.explain import decision_to_dict, rule_text, why
from matcher.normalize import normalize, request_path

TOKENS = ("foobot",)


def explained(body: str, url: str) -> str:
    """`why` of the decision for `url`, with the runner-up `crawl-audit check` passes it."""
    decision = robots.parse(body).decide_tokens(TOKENS, url)
    runner_up = None if decision.rule is None else decision.group.runner_up(decision, normalize(request_path(url)))
    return why(decision, runner_up)


@pytest.mark.parametrize(
    ("body", "url", "sentence"),
    [
        ("User-agent: *\nDisallow: /p\n", "/p/x", "the only matching rule (2 octets normalized)"),
        ("User-agent: *\nDisallow: /\n", "/x", "the only matching rule (1 octet normalized)"),
        ("User-agent: *\nDisallow: /p\nAllow: /p/open\n", "/p/open/x",
         "longest match: 7 octets beat 2 of Disallow: /p (line 2)"),
        ("User-agent: *\nDisallow: /p\nAllow: /p\n", "/p", "tie at 2 octets with Disallow: /p (line 2); allow wins ties"),
        ("User-agent: *\nDisallow: /a*\nDisallow: /ab\n", "/abc",
         "tie at 3 octets with Disallow: /ab (line 3); same verdict, earlier line named"),
        # lengths are of the normalized forms: %7E and ~ are one octet
        ("User-agent: *\nDisallow: /%7Eu\nAllow: /~u/a\n", "/~u/a",
         "longest match: 5 octets beat 3 of Disallow: /%7Eu (line 2), normalized /~u"),
        ("User-agent: *\nDisallow: /\n", "/robots.txt", "/robots.txt is always allowed"),
        ("User-agent: otherbot\nDisallow: /\n", "/x", "no group names this crawler and there is no User-agent: * group"),
        ("User-agent: *\nDisallow: /private\n", "/public", "no rule of the group matches this path"),
    ],
)
def test_why_says_what_decided_and_why_it_beat_the_runner_up(body, url, sentence):
    assert explained(body, url) == sentence


def test_rule_text_is_the_line_as_written_with_its_normalized_form_when_that_differs():
    rules = robots.parse("User-agent: *\nDisallow: /%7euser/\nallow: /public\n").groups["*"].rules
    by_pattern = {rule.pattern: rule for rule in rules}
    assert rule_text(by_pattern["/%7euser/"]) == "Disallow: /%7euser/ (line 2), normalized /~user/"
    assert rule_text(by_pattern["/public"]) == "Allow: /public (line 3)"


def test_the_json_of_a_decision_by_a_rule_names_rule_and_group():
    rf = robots.parse("User-agent: FooBot\nUser-agent: BarBot\nDisallow: /%7Eadmin/\n")
    url = "https://www.example.com/~admin/x?y=1#top"
    as_dict = decision_to_dict(url, rf.decide_tokens(TOKENS, url))
    assert as_dict == {
        "url": url,
        "allowed": False,
        "reason": "rule",
        "rule": {"kind": "disallow", "pattern": "/%7Eadmin/", "line": 3, "normalized": "/~admin/"},
        "group": ["FooBot", "BarBot"],
    }
    assert json.loads(json.dumps(as_dict)) == as_dict  # plain JSON, as `check --json` prints it


@pytest.mark.parametrize(
    ("body", "reason", "group"),
    [
        ("User-agent: otherbot\nDisallow: /\n", "no-group", None),
        ("User-agent: *\nDisallow: /private\n", "no-match", ["*"]),
    ],
)
def test_the_json_of_a_decision_without_a_rule(body, reason, group):
    as_dict = decision_to_dict("/x", robots.parse(body).decide_tokens(TOKENS, "/x"))
    assert as_dict == {"url": "/x", "allowed": True, "reason": reason, "rule": None, "group": group}
