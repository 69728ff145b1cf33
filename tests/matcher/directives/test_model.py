"""Directives as parsed, and the `indexing` object they give one crawler
(`matcher.directives.model`): the generic and the addressed directives, conflicts resolved to the
most restrictive, sources combined."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from matcher.directives import (
    Directive,
    Directives,
    PageDirectives,
    combine,
    effective_indexing,
    parse_meta,
    parse_x_robots_tag,
    x_robots_tag_directives,
)

GOOGLEBOT = ("googlebot",)
BINGBOT = ("bingbot",)
HOST = "example.com"
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def header(*values: str, tokens: tuple[str, ...] = GOOGLEBOT) -> dict:
    return x_robots_tag_directives(values).effective(tokens)


def page(when: datetime, path: str = "/report.pdf", headers: tuple[str, ...] = (), metas=()) -> PageDirectives:
    return PageDirectives(HOST, path, when, headers, tuple(metas))


# ------------------------------------------------------------------ conflicts


def test_noindex_wins_over_index():
    assert header("index", "noindex") == {"noindex": True}


def test_header_index_and_meta_noindex_resolve_to_noindex():
    row = page(T0, headers=("index, follow",), metas=[("robots", "noindex")])
    assert effective_indexing((), row, GOOGLEBOT) == {"noindex": True}


def test_smaller_max_snippet_wins():
    assert header("max-snippet: 50", "max-snippet: 20") == {"max-snippet": 20}
    assert header("max-snippet: 0, max-snippet: 20") == {"max-snippet": 0}


def test_minus_one_means_unlimited_so_any_limit_is_stricter():
    assert header("max-snippet: -1", "max-snippet: 300") == {"max-snippet": 300}
    assert header("max-video-preview: -1, max-video-preview: 0") == {"max-video-preview": 0}
    assert header("max-snippet: -1") == {"max-snippet": -1}


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [(("large", "standard"), "standard"), (("standard", "none"), "none"), (("large", "large"), "large")],
)
def test_smaller_image_preview_wins(sizes, expected):
    values = [f"max-image-preview: {size}" for size in sizes]
    assert header(*values) == header(*reversed(values)) == {"max-image-preview": expected}


def test_earlier_unavailable_after_wins():
    assert header(
        "unavailable_after: 2027-01-01T00:00:00Z", "googlebot: unavailable_after: 2026-12-01"
    ) == {"unavailable_after": "2026-12-01T00:00:00Z"}


def test_bot_specific_stricter_value_applies_only_to_that_bot():
    values = ("max-snippet: 100", "googlebot: max-snippet: 5")
    assert header(*values, tokens=GOOGLEBOT) == {"max-snippet": 5}
    assert header(*values, tokens=BINGBOT) == {"max-snippet": 100}


def test_combine_keeps_every_part():
    parts = [parse_x_robots_tag("noindex"), parse_meta("robots", "bogus")]
    merged = combine(parts)
    assert merged.items == parts[0].items
    assert merged.lint == parts[1].lint


# ------------------------------------------------------------------ the indexing object


def test_the_indexing_object_has_sorted_lower_case_names_and_record_values():
    directives = Directives((
        Directive("nosnippet"),
        Directive("unavailable_after", datetime(2026, 12, 1, 1, tzinfo=timezone(timedelta(hours=1)))),
        Directive("max-snippet", 20, "googlebot"),
        Directive("max-image-preview", "standard"),
    ))
    effective = directives.effective(("GoogleBot",))  # tokens compare lower-case
    assert list(effective) == sorted(effective)
    assert effective == {
        "max-image-preview": "standard", "max-snippet": 20, "nosnippet": True, "unavailable_after": "2026-12-01T00:00:00Z",
    }


def test_without_tokens_only_the_directives_for_every_crawler_apply():
    directives = Directives((Directive("noindex", None, "googlebot"), Directive("noarchive")))
    assert directives.effective(()) == {"noarchive": True}
    assert directives.effective(("bingbot",)) == {"noarchive": True}


def test_a_value_for_one_bot_and_one_for_all_resolve_to_the_stricter():
    directives = Directives((Directive("max-snippet", 5, "googlebot"), Directive("max-snippet", 50)))
    assert directives.effective(("googlebot",)) == {"max-snippet": 5}
    assert directives.effective(("bingbot",)) == {"max-snippet": 50}


def test_nothing_combined_is_nothing():
    assert combine([]) == Directives()
    assert combine([]).effective(("googlebot",)) == {}
