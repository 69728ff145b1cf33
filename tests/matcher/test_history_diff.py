"""The rule-level difference between two robots.txt versions."""
from __future__ import annotations

from matcher import robots
from matcher.history_diff import affected, diff

BEFORE = """User-agent: *
Disallow: /private
Allow: /private/open

User-agent: Googlebot
User-agent: Bingbot
Disallow: /tmp
"""


def _diff(after: str):
    return diff(robots.parse(BEFORE), robots.parse(after))


def test_moving_rules_or_reordering_lines_is_no_change():
    reordered = "User-agent: Bingbot\nUser-agent: Googlebot\nDisallow: /tmp\n\nUser-agent: *\nAllow: /private/open\nDisallow: /private\n"
    assert _diff(reordered) == []


def test_tokens_of_one_merged_group_are_reported_together():
    (change,) = _diff(BEFORE.replace("Disallow: /tmp", "Disallow: /tmp\nDisallow: /drafts"))
    assert change.tokens == ("bingbot", "googlebot")
    assert [(rule.kind, rule.pattern, rule.line) for rule in change.added] == [("disallow", "/drafts", 8)]
    assert affected(change) == "crawlers with token bingbot, googlebot"


def test_a_rule_changed_between_allow_and_disallow_is_changed_not_added_and_removed():
    (change,) = _diff(BEFORE.replace("Allow: /private/open", "Disallow: /private/open"))
    assert change.tokens == ("*",) and change.added == change.removed == ()
    ((old, new),) = change.changed
    assert (old.kind, new.kind, new.pattern) == ("allow", "disallow", "/private/open")
    assert affected(change) == "every crawler without a group of its own"


def test_rules_compare_in_normalized_form():
    assert _diff(BEFORE.replace("/private/open", "/%70rivate/open")) == []


def test_a_new_group_takes_a_crawler_away_from_the_catch_all():
    changes = _diff(BEFORE + "\nUser-agent: GPTBot\nDisallow: /\nCrawl-delay: 10\n")
    (change,) = changes
    assert change.tokens == ("gptbot",) and change.group_added and not change.group_removed
    assert change.crawl_delay == (None, 10.0)
    removed = diff(robots.parse(BEFORE), robots.parse("User-agent: *\nDisallow: /private\nAllow: /private/open\n"))
    assert [(c.tokens, c.group_removed) for c in removed] == [(("bingbot", "googlebot"), True)]


def test_changes_come_catch_all_first_then_by_token_and_say_whom_they_reach():
    after = """User-agent: Googlebot
Crawl-delay: 4
Disallow: /tmp

User-agent: Bingbot
Disallow: /tmp

User-agent: *
Disallow: /private
Allow: /private/open
Disallow: /tmp
"""
    catch_all, googlebot = _diff(after)
    assert (catch_all.tokens, [rule.pattern for rule in catch_all.added]) == (("*",), ["/tmp"])
    assert (googlebot.tokens, googlebot.crawl_delay, googlebot.added) == (("googlebot",), (None, 4.0), ())
    (both,) = diff(robots.parse("User-agent: *\nUser-agent: FooBot\nDisallow: /a\n"),
                   robots.parse("User-agent: *\nUser-agent: FooBot\nDisallow: /b\n"))
    assert both.tokens == ("*", "foobot")
    assert affected(both) == "every crawler without a group of its own; crawlers with token foobot"
