"""Precedence lookups over normalized patterns (`matcher.matching`), against the set-of-positions
reference of tests/robots_reference.py: the first pattern, in precedence order, that matches."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matcher.matching import FEW, MANY, RuleIndex, RuleList, WildcardSet, index_rules
from robots_reference import many_wildcards, reference_matches, wildcard_paths


@settings(max_examples=500, deadline=None)
@given(many_wildcards, st.lists(wildcard_paths, min_size=1, max_size=5), st.integers(0, 48))
def test_wildcards_matched_together_agree_with_reference(patterns, path_list, limit):
    together = WildcardSet([(rank, body, anchored) for rank, (body, anchored) in enumerate(patterns)])
    for path in path_list:
        matching = [
            rank for rank, (body, anchored) in enumerate(patterns) if reference_matches(body + "$" * anchored, path)
        ]
        expected = min([limit, *matching])
        assert together.best(path, limit) == expected, (path, expected)


def reference_best(patterns: list[str], path: str) -> int:
    """The position of the first pattern that matches, or the number of patterns."""
    return next((rank for rank, pattern in enumerate(patterns) if reference_matches(pattern, path)), len(patterns))


def in_precedence_order(patterns: list[str]) -> list[str]:
    """Longest first, as `robots` orders a group's normalized patterns; a stable sort keeps ties as drawn."""
    return sorted(patterns, key=len, reverse=True)


# Normalized patterns over a small alphabet, so that they overlap, repeat and nest: plain prefixes
# (`/` alone too), patterns led by `*`, anchored ones, several stars in a row.
normalized_patterns = st.builds(
    lambda head, rest, anchored: head + rest + ("$" if anchored else ""),
    st.sampled_from(["/", "*", "/a", "/b", "/ab"]),
    st.text("/ab*", max_size=5),
    st.booleans(),
)
short_paths = st.text("/ab", max_size=8).map(lambda text: "/" + text)


@settings(max_examples=300, deadline=None)
@given(st.lists(normalized_patterns, min_size=1, max_size=12), st.lists(short_paths, min_size=1, max_size=6))
def test_the_index_finds_the_first_matching_pattern_in_precedence_order(drawn, path_list):
    patterns = in_precedence_order(drawn)
    lookup = RuleIndex(patterns)
    for path in path_list + path_list:  # the second round is answered from prepared buckets
        assert lookup.best(path) == reference_best(patterns, path), path
        assert index_rules(patterns).best(path) == reference_best(patterns, path), path


@settings(max_examples=300, deadline=None)
@given(st.lists(normalized_patterns, min_size=1, max_size=6), st.lists(short_paths, min_size=1, max_size=6))
def test_the_list_finds_the_first_matching_pattern_in_any_order(patterns, path_list):
    lookup = RuleList(patterns)
    for path in path_list:
        assert lookup.best(path) == reference_best(patterns, path), path


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text("ab/", max_size=4).map(lambda rest: "/a*" + rest), min_size=MANY + 1, max_size=MANY + 16),
    st.lists(normalized_patterns, max_size=4),
    st.lists(short_paths, min_size=1, max_size=4),
)
def test_a_bucket_of_many_wildcards_finds_the_same_pattern(wildcards, others, path_list):
    # More than MANY wildcards share the bucket `/a`: they are matched together, not one by one.
    patterns = in_precedence_order(wildcards + others)
    lookup = RuleIndex(patterns)
    for path in path_list:
        assert lookup.best(path) == reference_best(patterns, path), path


def test_a_lookup_of_few_patterns_tries_them_in_turn():
    assert isinstance(index_rules(["/a"] * FEW), RuleList)
    assert isinstance(index_rules(["/a"] * (FEW + 1)), RuleIndex)


@pytest.mark.parametrize("make", [RuleList, RuleIndex])
def test_no_match_ranks_after_every_pattern(make):
    patterns = ["/private/", "/p*x$"]
    assert make(patterns).best("/public") == 2
    assert make(patterns).best("/private/x") == 0
    assert make(patterns).best("/pix") == 1


def test_of_two_equal_patterns_the_earlier_rank_is_found():
    for patterns in (["/a", "/a"], ["/a$", "/a$"], ["/a*b", "/a*b"]):
        assert RuleIndex(patterns).best(patterns[0].rstrip("$").replace("*", "")) == 0


def test_paths_shorter_than_a_bucket_meet_short_prefixes_and_exact_patterns():
    index = RuleIndex(["/ab", "/$", "/"])
    assert index.best("/") == 1  # `/$` and `/` both match; the earlier rank wins
    assert index.best("/a") == 2
    assert index.best("/ab") == 0
