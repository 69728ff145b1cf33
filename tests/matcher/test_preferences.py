"""Usage preferences in robots.txt: Content-Signal, Content-Usage (aipref) and License (RSL), with
the examples of each specification."""
from __future__ import annotations

import pytest

from matcher import robots
from matcher.preferences import (
    Preferences,
    conflicts,
    parse_content_signal,
    parse_content_usage,
    parse_license,
)

# Cloudflare's Content Signals Policy, as its managed robots.txt writes it.
CLOUDFLARE = """# As a condition of accessing this website, you agree to abide by the following content signals:
User-Agent: *
Content-Signal: search=yes, ai-train=no
Allow: /
"""
# draft-ietf-aipref-attach: a rule for the whole site and one for a path.
AIPREF = """User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
"""
# RSL 1.0: the licence terms of the site, beside the sitemap.
RSL = """License: https://example.com/license.xml
User-agent: *
Allow: /
"""


def in_force(body: str, tokens: tuple[str, ...], path: str) -> Preferences:
    parsed = robots.parse(body)
    return parsed.preferences(parsed.decide_path(tokens, path).group, path)


def codes(body: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in robots.parse(body).diagnostics]


def test_cloudflare_s_example_applies_to_the_group_it_is_written_in():
    preferences = in_force(CLOUDFLARE, ("gptbot",), "/articles/1")
    assert preferences.content_signal == (("search", "yes"), ("ai-train", "no"))
    assert preferences.record() == {"content_signal": {"search": "yes", "ai-train": "no"}, "content_signal_lines": [3]}
    assert codes(CLOUDFLARE) == []


def test_a_content_signal_is_scoped_to_its_group():
    body = CLOUDFLARE + "\nUser-Agent: Googlebot\nContent-Signal: search=yes, ai-input=no\nAllow: /\n"
    assert dict(in_force(body, ("googlebot",), "/").content_signal) == {"search": "yes", "ai-input": "no"}
    assert dict(in_force(body, ("gptbot",), "/").content_signal) == {"search": "yes", "ai-train": "no"}


def test_the_aipref_example_takes_the_longest_matching_path():
    site = in_force(AIPREF, ("examplebot",), "/page")
    assert (site.content_usage, site.content_usage_line) == ((("train-ai", "n"),), 4)
    ai_ok = in_force(AIPREF, ("examplebot",), "/ai-ok/page")
    assert (ai_ok.content_usage, ai_ok.content_usage_line, ai_ok.content_usage_pattern) == ((("train-ai", "y"),), 5, "/ai-ok/")
    assert codes(AIPREF) == []


def test_aipref_categories_inherit_from_their_parents():
    _, pairs, problems = parse_content_usage("train-ai=y, train-genai=n")
    preferences = Preferences(content_usage=pairs)
    assert problems == []
    assert preferences.usage("train-genai") == ("n", "train-genai")
    assert preferences.usage("train-ai") == ("y", "train-ai")
    assert preferences.usage("search") is None
    root = Preferences(content_usage=parse_content_usage("all=n")[1])
    assert root.usage("train-genai") == ("n", "all") and root.usage("search") == ("n", "all")


@pytest.mark.parametrize(
    ("value", "path", "pairs", "problem"),
    [
        ("train-ai=n", None, (("train-ai", "n"),), None),
        ("/ai-ok/ train-ai=y, search=n", "/ai-ok/", (("train-ai", "y"), ("search", "n")), None),
        ("train-ai=n;reason=x", None, (("train-ai", "n"),), None),  # parameters are for extensions
        ("train-ai=y, train-ai=n", None, (("train-ai", "n"),), None),  # a dictionary keeps the last
        ("train-ai=maybe", None, (), "the value is y or n"),
        ("search", None, (), "the value is y or n"),  # a bare key is the boolean ?1
        ("future-use=n, search=y", None, (("search", "y"),), "not an aipref category"),
        ("Train-AI=n", None, (), "not a Structured Fields dictionary"),  # keys are lower case
        ("train-ai=n,", None, (), "not a Structured Fields dictionary"),
        ("/only-a-path", "/only-a-path", (), "a path but no preference"),
    ],
)
def test_content_usage_values(value, path, pairs, problem):
    got_path, got_pairs, problems = parse_content_usage(value)
    assert (got_path, got_pairs) == (path, pairs)
    assert (problem is None and problems == []) or any(problem in p for p in problems)


@pytest.mark.parametrize(
    ("value", "pairs", "problem"),
    [
        ("search=yes, ai-train=no", (("search", "yes"), ("ai-train", "no")), None),
        ("search=yes,ai-input=no,ai-train=no", (("search", "yes"), ("ai-input", "no"), ("ai-train", "no")), None),
        ("ai-train=No", (("ai-train", "no"),), None),
        ("ai-train", (), "is not key=value"),
        ("ai-train=maybe", (), "the value is yes or no"),
        ("ai-training=no", (), "is not a content signal"),
        ("", (), "no signal given"),
    ],
)
def test_content_signal_values(value, pairs, problem):
    got, problems = parse_content_signal(value)
    assert got == pairs
    assert (problem is None and problems == []) or any(problem in p for p in problems)


def test_rsl_license_lines_belong_to_the_whole_file():
    assert in_force(RSL, ("anybot",), "/").licenses == ("https://example.com/license.xml",)
    no_group = "License: https://example.com/license.xml\n"
    assert in_force(no_group, ("anybot",), "/").licenses == ("https://example.com/license.xml",)
    assert parse_license("https://example.com/license.xml") == []
    assert parse_license("/license.xml") and parse_license("see our terms")
    assert codes("License: /license.xml\n") == [(1, "invalid-license")]


def test_lint_reports_malformed_values_and_group_lines_outside_any_group():
    body = (
        "Content-Signal: ai-train=no\n"
        "Content-Usage: train-ai=n\n"
        "User-agent: *\n"
        "Content-Signal: ai-train=perhaps\n"
        "Content-Usage: Train-AI=n\n"
        "Disallow: /private\n"
    )
    assert codes(body) == [
        (1, "content-signal-outside-group"), (2, "content-usage-outside-group"),
        (4, "invalid-content-signal"), (5, "invalid-content-usage"),
    ]
    assert not in_force(body, ("anybot",), "/")


def test_preference_lines_neither_end_nor_split_a_group_and_change_no_decision():
    plain = "User-agent: a\nUser-agent: b\nDisallow: /x\nAllow: /x/y\n\nUser-agent: c\nDisallow: /\n"
    marked = (
        "User-agent: a\nContent-Signal: ai-train=no\nUser-agent: b\nContent-Usage: /x train-ai=n\n"
        "Disallow: /x\nLicense: https://example.com/l.xml\nAllow: /x/y\n\nUser-agent: c\nContent-Signal: search=no\n"
        "Disallow: /\n"
    )
    before, after = robots.parse(plain), robots.parse(marked)
    assert after.diagnostics == ()
    for token in ("a", "b", "c", "d"):
        for path in ("/", "/x", "/x/y", "/z"):
            old, new = before.decide_path((token,), path), after.decide_path((token,), path)
            rules = [(d.rule.kind, d.rule.pattern) if d.rule else None for d in (old, new)]
            assert (old.allowed, old.reason, rules[0]) == (new.allowed, new.reason, rules[1]), (token, path)
    assert after.groups["a"] is after.groups["b"]  # one group, as without the preference lines
    assert dict(in_force(marked, ("b",), "/x/1").content_usage) == {"train-ai": "n"}
    assert dict(in_force(marked, ("a",), "/x/1").content_signal) == {"ai-train": "no"}


def test_several_signals_of_a_group_combine_with_no_winning():
    body = "User-agent: *\nContent-Signal: search=yes, ai-train=yes\nContent-Signal: ai-train=no\nAllow: /\n"
    preferences = in_force(body, ("anybot",), "/")
    assert dict(preferences.content_signal) == {"search": "yes", "ai-train": "no"}
    assert preferences.content_signal_lines == (2, 3)


@pytest.mark.parametrize(
    ("purposes", "signal", "usage", "expected"),
    [
        (("ai-training",), "ai-train=no", None, ("ai-training: ai-train=no",)),
        (("ai-training",), None, "train-ai=n", ("ai-training: train-ai=n",)),
        (("ai-training",), None, "train-genai=n", ("ai-training: train-genai=n",)),
        (("ai-training",), "search=no", "search=n", ()),
        (("search-engine",), "search=no", None, ("search-engine: search=no",)),
        (("search-engine",), None, "all=n", ("search-engine: all=n",)),
        (("ai-search",), "ai-input=no", "ai-use=n", ("ai-search: ai-input=no", "ai-search: ai-use=n")),
        (("archiver", "ai-training"), "ai-train=no", "all=n", ("archiver: all=n", "ai-training: ai-train=no", "ai-training: all=n")),
        (("unknown",), "search=no, ai-input=no, ai-train=no", "all=n", ()),
        (("search-engine",), "search=yes", "search=y", ()),
    ],
)
def test_conflicts_cross_each_purpose_with_its_keys(purposes, signal, usage, expected):
    preferences = Preferences(
        content_signal=parse_content_signal(signal)[0] if signal else (),
        content_usage=parse_content_usage(usage)[1] if usage else (),
    )
    assert conflicts(purposes, preferences) == expected


def test_a_semantics_table_row_for_every_purpose_with_conflicting_keys():
    from helpers import REPO
    from matcher.preferences import CONFLICTING_KEYS

    text = (REPO / "docs" / "semantics.md").read_text("utf-8")
    for purpose in CONFLICTING_KEYS:
        assert f"| `{purpose}` | " in text[text.index("## Usage preferences"):], purpose
