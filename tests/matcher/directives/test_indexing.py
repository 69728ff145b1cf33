"""The indexing facet of one request (`matcher.directives.indexing`): the log's X-Robots-Tag and the
page-directives row combined for a crawler, and the findings drawn from it."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from matcher.directives import (
    PageDirectives,
    effective_indexing,
    indexing_unseen,
    noindex_unseen,
    page_directives_from_row,
    unavailable_after_passed,
    x_robots_tag_directives,
)
from matcher.logformats import parser_for

GOOGLEBOT = ("googlebot",)
BINGBOT = ("bingbot",)
HOST = "example.com"
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
TICK = timedelta(microseconds=1)


def header(*values: str, tokens: tuple[str, ...] = GOOGLEBOT) -> dict:
    return x_robots_tag_directives(values).effective(tokens)


def page(when: datetime, path: str = "/report.pdf", headers: tuple[str, ...] = (), metas=()) -> PageDirectives:
    return PageDirectives(HOST, path, when, headers, tuple(metas))


# ------------------------------------------------------------------ effective indexing per request


def test_no_source_is_none():
    assert effective_indexing((), None, GOOGLEBOT) is None
    assert effective_indexing(("", "  "), None, GOOGLEBOT) is None


def test_sources_that_restrict_nothing_give_an_empty_object():
    assert effective_indexing(("all",), None, GOOGLEBOT) == {}
    assert effective_indexing(("bingbot: noindex",), None, GOOGLEBOT) == {}
    assert effective_indexing((), page(T0), GOOGLEBOT) == {}


def test_log_header_and_table_row_combine():
    row = page(T0, headers=("max-snippet: 50",), metas=[("robots", "nofollow"), ("bingbot", "noarchive")])
    assert effective_indexing(("googlebot: max-snippet: 10",), row, GOOGLEBOT) == {"max-snippet": 10, "nofollow": True}
    assert effective_indexing(("googlebot: max-snippet: 10",), row, BINGBOT) == {
        "max-snippet": 50,
        "noarchive": True,
        "nofollow": True,
    }


def test_design_example_row():
    row = page_directives_from_row({
        "host": "example.com", "path": "/report.pdf", "effective_from": "2026-11-01T00:00:00Z",
        "x_robots_tag": ["noindex", "googlebot: max-snippet: 20"],
        "meta_robots": [{"name": "robots", "content": "nofollow"}, {"name": "bingbot", "content": "noarchive"}],
    })
    assert effective_indexing((), row, GOOGLEBOT) == {"max-snippet": 20, "noindex": True, "nofollow": True}
    assert effective_indexing((), row, BINGBOT) == {"noarchive": True, "noindex": True, "nofollow": True}
    assert effective_indexing((), row, ()) == {"noindex": True, "nofollow": True}


def test_combined_xrt_log_line_feeds_the_header_source():
    line = (
        '66.249.66.1 - - [01/Nov/2026:10:00:00 +0000] "GET /report.pdf HTTP/1.1" 200 512 "-" '
        '"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" "googlebot: noindex, nofollow"'
    )
    record = parser_for("combined_xrt")(line)
    assert effective_indexing(record.x_robots_tag, None, GOOGLEBOT) == {"noindex": True, "nofollow": True}
    assert effective_indexing(record.x_robots_tag, None, BINGBOT) == {}


def test_json_log_header_list_feeds_the_header_source():
    line = json.dumps({
        "EdgeStartTimestamp": "2026-11-01T10:00:00Z", "ClientIP": "66.249.66.1", "ClientRequestHost": HOST,
        "ClientRequestMethod": "GET", "ClientRequestURI": "/a", "EdgeResponseStatus": 200,
        "ClientRequestUserAgent": "Googlebot", "ResponseHeaders": {"x-robots-tag": ["noarchive", "googlebot: noindex"]},
    })
    record = parser_for("cloudflare")(line)
    assert effective_indexing(record.x_robots_tag, None, GOOGLEBOT) == {"noarchive": True, "noindex": True}


# ------------------------------------------------------------------ report helpers


@pytest.mark.parametrize(
    ("decision", "indexing", "unseen", "noindex"),
    [
        ("disallowed", {"noindex": True}, True, True),
        ("disallowed-within-grace", {"noindex": True}, True, True),
        ("disallowed", {"nosnippet": True}, True, False),
        ("disallowed", {}, True, False),
        ("disallowed", None, False, False),
        ("allowed", {"noindex": True}, False, False),
        ("unknown", {"noindex": True}, False, False),
    ],
)
def test_unseen_directives(decision, indexing, unseen, noindex):
    assert indexing_unseen(decision, indexing) is unseen
    assert noindex_unseen(decision, indexing) is noindex


def test_unavailable_after_passed_only_after_the_moment():
    indexing = header("unavailable_after: 2026-12-01T00:00:00Z")
    moment = datetime(2026, 12, 1, tzinfo=timezone.utc)
    assert not unavailable_after_passed(indexing, moment - TICK)
    assert not unavailable_after_passed(indexing, moment)
    assert unavailable_after_passed(indexing, moment + TICK)
    assert not unavailable_after_passed({"noindex": True}, moment + TICK)
    assert not unavailable_after_passed(None, moment + TICK)


def test_a_blank_header_leaves_the_table_row_to_decide():
    row = page(T0, headers=("nofollow",))
    assert effective_indexing(("  ",), row, GOOGLEBOT) == {"nofollow": True}


def test_a_between_captures_disallow_also_hides_the_noindex():
    assert noindex_unseen("disallowed-between-captures", {"noindex": True})


def test_an_unavailable_after_that_is_no_rfc3339_text_is_an_error():
    with pytest.raises(ValueError, match="must be an RFC 3339 string"):
        unavailable_after_passed({"unavailable_after": T0}, T0)
