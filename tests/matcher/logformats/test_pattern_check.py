"""The static check of compiled line patterns: overlapping unbounded groups with no literal between
them, and constructs outside the linear-time subset, are refused."""
from __future__ import annotations

import pytest

from matcher.logformats.pattern_check import AmbiguousPattern, check_pattern, first_characters, last_characters


@pytest.mark.parametrize("pattern", [
    r"\S+\S+", r"(?P<a>\S+)(?:x)?(?P<b>\S+)", r"(?:\S+)*x", r"[^\s/]+[a-z]+", r"\S+(?:\?\S*)?\S+",
])
def test_overlapping_unbounded_groups_side_by_side_are_refused(pattern):
    with pytest.raises(AmbiguousPattern, match="no literal between them"):
        check_pattern(pattern)


@pytest.mark.parametrize("pattern", [r"(?=a)\S+", r"(a)\1", r"(?<!a)b"])
def test_constructs_outside_the_linear_time_subset_are_refused(pattern):
    with pytest.raises(AmbiguousPattern, match="linear time"):
        check_pattern(pattern)


@pytest.mark.parametrize("pattern", [
    r"\S+ \S+", r"\S+:\S+", r"[^\s/]+/\S*", r'"[^"\\]*(?:\\.[^"\\]*)*"', r"[^\s?]+(?:\?\S*)?\Z",
    r"\d{1,20}\S+", r"(?: .*)?\Z",
])
def test_groups_a_literal_or_disjoint_classes_separate_pass(pattern):
    check_pattern(pattern)


def test_first_and_last_characters():
    assert first_characters(r"(?:\?\S*)?/x") == {"?", "/"}
    assert last_characters(r"\[\d\d\]") == {"]"}
    assert "/" not in last_characters(r"[^\s/]+")
