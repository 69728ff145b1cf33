"""Usage preferences in robots.txt: Content-Signal, Content-Usage (aipref) and License (RSL), with
the examples of each specification."""
from __future__ import annotations

import pytest

from matcher import robots
from matcher.preferences import (
    PURPOSES,
    Preferences,
    conflicts,
    parse_content_signal,
    parse_content_usage,
    parse_license,
    parse_usage_header,
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
        # draft-ietf-aipref-vocab § Multiple Preferences: a bare key and a string are no y or n
        ('train-ai=y, train-ai, search=n, search="n"', None, (), "the value is y or n"),
        # ... § Preference Parameters: the parameters of an earlier member do not survive it
        ("train-ai;allow=n, train-ai=y", None, (("train-ai", "y"),), None),
        ("Train-AI=n", None, (), "not a Structured Fields dictionary"),  # keys are lower case
        ("train-ai=n,", None, (), "not a Structured Fields dictionary"),
        ("/only-a-path", "/only-a-path", (), "a path but no preference"),
    ],
)
def test_content_usage_values(value, path, pairs, problem):
    got_path, got_pairs, problems, _ = parse_content_usage(value)
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
        (("ai-training",), None, "train-genai=n", ("ai-training: train-ai=n",)),
        (("ai-training",), "search=no", "search=n", ()),
        (("search-engine",), "search=no", None, ("search-engine: search=no",)),
        (("search-engine",), None, "all=n", ("search-engine: search=n",)),
        (("ai-search",), "ai-input=no", "ai-use=n", ("ai-search: ai-input=no", "ai-search: ai-use=n")),
        (("archiver", "ai-training"), "ai-train=no", "all=n", ("ai-training: ai-train=no", "ai-training: train-ai=n")),
        (("unknown",), "search=no, ai-input=no, ai-train=no", "all=n", ()),
        (("search-engine",), "search=yes", "search=y", ()),
    ],
)
def test_conflicts_cross_each_purpose_with_its_keys(purposes, signal, usage, expected):
    preferences = Preferences(
        content_signal=parse_content_signal(signal)[0] if signal else (),
        content_usage=parse_content_usage(usage).pairs if usage else (),
    )
    assert conflicts(purposes, preferences) == expected


def test_a_semantics_table_row_for_every_purpose():
    from helpers import REPO

    text = (REPO / "docs" / "semantics.md").read_text("utf-8")
    section = text[text.index("## Usage preferences"):text.index("## Records and accounting")]
    for purpose, use in PURPOSES.items():
        cells = [f"`{value}`" if value else "none" for value in (use.category, use.signal, use.usage_group)]
        assert f"| `{purpose}` | {' | '.join(cells)} |" in section, purpose


# ------------------------------------------------------------------ the current vocabulary


def test_the_vocabulary_draft_s_example_states_two_categories_and_leaves_the_third_unknown():
    value = parse_content_usage("train-ai=y, search=n")
    assert (value.pairs, value.problems, value.obsolete) == ((("train-ai", "y"), ("search", "n")), [], [])
    preferences = Preferences(content_usage=value.pairs)
    assert conflicts(("ai-training", "ai-search"), preferences) == ()
    assert conflicts(("search-engine",), preferences) == ("search-engine: search=n",)


def test_search_takes_precedence_a_search_engine_is_judged_by_search_alone():
    refuses_the_rest = Preferences(content_usage=parse_content_usage("train-ai=n, ai-use=n, search=y").pairs)
    assert conflicts(("search-engine",), refuses_the_rest) == ()
    assert conflicts(("ai-training",), refuses_the_rest) == ("ai-training: train-ai=n",)
    assert conflicts(("ai-search",), refuses_the_rest) == ("ai-search: ai-use=n",)


@pytest.mark.parametrize(
    ("value", "pairs", "obsolete"),
    [
        ("train-genai=n", (("train-ai", "n"),), ["train-genai"]),
        ("all=n", (("search", "n"), ("train-ai", "n"), ("ai-use", "n")), ["all"]),
        ("bots=y", (("search", "y"), ("train-ai", "y"), ("ai-use", "y")), ["bots"]),
        # `all` fills only what no other label states
        ("all=n, search=y", (("search", "y"), ("train-ai", "n"), ("ai-use", "n")), ["all"]),
        # a category stated twice, by its label and an obsolete one: the most restrictive
        ("train-ai=y, train-genai=n", (("train-ai", "n"),), ["train-genai"]),
        ("train-genai=y, train-ai=n", (("train-ai", "n"),), ["train-genai"]),
    ],
)
def test_labels_of_earlier_drafts_keep_the_site_s_intent(value, pairs, obsolete):
    read = parse_content_usage(value)
    assert (dict(read.pairs), read.obsolete, read.problems) == (dict(pairs), obsolete, [])


def test_an_obsolete_label_is_read_and_lint_warns_about_it():
    body = "User-agent: *\nContent-Usage: /a train-genai=n\nContent-Usage: /b all=n\n"
    assert codes(body) == [(2, "obsolete-content-usage-label"), (3, "obsolete-content-usage-label")]
    messages = [d.message for d in robots.parse(body).diagnostics]
    assert "read as train-ai" in messages[0] and "read as search, train-ai, ai-use" in messages[1]
    assert dict(in_force(body, ("gptbot",), "/a/1").content_usage) == {"train-ai": "n"}


def test_a_purpose_no_category_covers_gets_no_conflict():
    everything_refused = Preferences(
        content_signal=parse_content_signal("search=no, ai-input=no, ai-train=no")[0],
        content_usage=parse_content_usage("all=n").pairs,
    )
    uncovered = [purpose for purpose, use in PURPOSES.items() if use.category is None]
    assert {"archiver", "seo-tool", "monitor"} <= set(uncovered)
    assert conflicts(uncovered, everything_refused) == ()


def test_the_attachment_draft_s_example_table():
    # draft-ietf-aipref-attach § Example, with ExampleBot's own group
    body = (
        "User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\n"
        "User-Agent: ExampleBot\nAllow: /\nContent-Usage: / train-ai=y\n"
    )
    parsed = robots.parse(body)
    for path, crawl, preference in (("/test", True, {"train-ai": "n"}), ("/ai-ok/test", True, {"train-ai": "y"})):
        assert parsed.decide_path(("otherbot",), path).allowed is crawl
        assert dict(in_force(body, ("otherbot",), path).content_usage) == preference
    assert not parsed.decide_path(("otherbot",), "/never/test").allowed
    assert dict(in_force(body, ("examplebot",), "/test").content_usage) == {"train-ai": "y"}
    assert codes(body) == []


# ------------------------------------------------------------------ per-purpose groups

# The per-purpose draft's arrangement: a training preference path by path, beside access groups.
PER_PURPOSE = """User-agent: *
Allow: /

User-agent: GPTBot
Allow: /

User-agent: __usage_ai-training
Disallow: /blog/drafts/
Allow: /blog/drafts/public/
"""


def test_a_per_purpose_group_refuses_its_purpose_on_the_paths_it_disallows():
    drafts = in_force(PER_PURPOSE, ("gptbot",), "/blog/drafts/a")
    assert conflicts(("ai-training",), drafts) == ("ai-training: __usage_ai-training Disallow: /blog/drafts/ line 8",)
    assert drafts.record()["usage_groups"] == [
        {"group": "__usage_ai-training", "purpose": "ai-training", "rule": "disallow", "pattern": "/blog/drafts/", "line": 8}
    ]
    # the longest match, as for access
    public = in_force(PER_PURPOSE, ("gptbot",), "/blog/drafts/public/a")
    assert conflicts(("ai-training",), public) == () and public.usage_groups[0].kind == "allow"
    assert conflicts(("ai-training",), in_force(PER_PURPOSE, ("gptbot",), "/blog/")) == ()
    # another purpose, or a crawler that falls to `*`, is judged by its own purpose only
    assert conflicts(("search-engine",), in_force(PER_PURPOSE, ("googlebot",), "/blog/drafts/a")) == ()
    assert conflicts(("ai-training",), in_force(PER_PURPOSE, ("ccbot",), "/blog/drafts/a"))


def test_a_per_purpose_group_is_never_a_crawler_s_own_group():
    parsed = robots.parse(PER_PURPOSE)
    for tokens in (("__usage_ai-training",), ("ccbot",)):
        decision = parsed.decide_path(tokens, "/blog/drafts/a")
        assert decision.allowed and decision.group.agents == ("*",), tokens
    assert parsed.decide("__usage_ai-training/1.0", "https://example.com/blog/drafts/a", _registry()).group.agents == ("*",)


def test_a_group_naming_a_crawler_beside_a_usage_token_still_governs_its_access():
    body = "User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nUser-agent: __usage_ai-training\nDisallow: /drafts/\n"
    parsed = robots.parse(body)
    assert not parsed.decide_path(("gptbot",), "/drafts/a").allowed
    assert parsed.decide_path(("ccbot",), "/drafts/a").allowed
    assert conflicts(("ai-training",), in_force(body, ("ccbot",), "/drafts/a")) == (
        "ai-training: __usage_ai-training Disallow: /drafts/ line 6",
    )


def test_without_a_per_purpose_group_the_catch_all_group_states_no_preference():
    without = "User-agent: *\nDisallow: /blog/drafts/\n\nUser-agent: GPTBot\nAllow: /\n"
    with_group = without + "\nUser-agent: __usage_ai-training\nDisallow: /blog/drafts/\n"
    assert not in_force(without, ("gptbot",), "/blog/drafts/a")
    assert conflicts(("ai-training",), in_force(without, ("gptbot",), "/blog/drafts/a")) == ()
    assert conflicts(("ai-training",), in_force(with_group, ("gptbot",), "/blog/drafts/a")) == (
        "ai-training: __usage_ai-training Disallow: /blog/drafts/ line 8",
    )


@pytest.mark.parametrize(
    ("group_rule", "usage", "expected"),
    [
        ("Allow: /a/", "train-ai=n", ("ai-training: train-ai=n",)),
        ("Disallow: /a/", "train-ai=y", ("ai-training: __usage_ai-training Disallow: /a/ line 6",)),
        ("Disallow: /a/", "train-ai=n", ("ai-training: train-ai=n", "ai-training: __usage_ai-training Disallow: /a/ line 6")),
        ("Allow: /a/", "train-ai=y", ()),
    ],
)
def test_a_per_purpose_rule_and_a_content_usage_line_for_one_path_combine_to_the_most_restrictive(group_rule, usage, expected):
    body = f"User-agent: GPTBot\nAllow: /\nContent-Usage: /a/ {usage}\n\nUser-agent: __usage_ai-training\n{group_rule}\n"
    assert conflicts(("ai-training",), in_force(body, ("gptbot",), "/a/1")) == expected


def test_lint_explains_per_purpose_groups_in_notes_and_finds_nothing_wrong():
    body = PER_PURPOSE + "\nUser-agent: __usage_ai-crawling\nDisallow: /\n"
    parsed = robots.parse(body)
    assert parsed.diagnostics == ()
    assert [(note.line, note.code) for note in parsed.notes] == [(7, "usage-group"), (11, "unknown-usage-group")]
    assert "ai-training (train-ai)" in parsed.notes[0].message
    assert "states no preference" in parsed.notes[1].message
    assert parsed.decide_path(("__usage_ai-crawling",), "/x").allowed  # an unknown one governs nobody either
    assert conflicts(list(PURPOSES), in_force(body, ("anybot",), "/x")) == ()


# ------------------------------------------------------------------ the response header


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("train-ai=n", ("ai-training: Content-Usage header train-ai=n",)),  # the attachment draft's example
        ("train-genai=n", ("ai-training: Content-Usage header train-ai=n",)),
        ("train-ai=y", ()),
        ("/ train-ai=n", ()),  # a path belongs to robots.txt: the header is no dictionary, so unknown
        ("Train-AI=n", ()),
    ],
)
def test_a_logged_header_refusing_the_purpose_is_a_conflict(header, expected):
    assert conflicts(("ai-training",), None, parse_usage_header(header).pairs) == expected


def test_the_header_combines_with_robots_txt_to_the_most_restrictive():
    allowed_in_robots = Preferences(content_usage=(("train-ai", "y"),))
    assert conflicts(("ai-training",), allowed_in_robots, parse_usage_header("train-ai=n").pairs) == (
        "ai-training: Content-Usage header train-ai=n",
    )
    refused_in_robots = Preferences(content_usage=(("train-ai", "n"),))
    assert conflicts(("ai-training",), refused_in_robots, parse_usage_header("train-ai=y").pairs) == (
        "ai-training: train-ai=n",
    )


def _registry():
    from config.registry import default_registry

    return default_registry()
