"""The indexing facet of one request, kept apart from the crawl decision.

The X-Robots-Tag values a log carries and the page-directives row in effect give the
`indexing` object of a verdict; the findings say where robots.txt and those directives
work against each other.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from matcher.directives.model import combine
from matcher.directives.page_table import PageDirectives
from matcher.directives.parser import x_robots_tag_directives
from matcher.history import DISALLOWED, DISALLOWED_BETWEEN_CAPTURES, DISALLOWED_WITHIN_GRACE
from matcher.timerange import parse_timestamp

__all__ = ["effective_indexing", "indexing_unseen", "noindex_unseen", "unavailable_after_passed"]


def effective_indexing(
    header_values: Sequence[str],
    page: PageDirectives | None,
    tokens: Sequence[str],
    content_usage: Sequence[tuple[str, str]] = (),
) -> dict | None:
    """The `indexing` object of a request: None when neither the log nor the table covers it.

    `header_values` are the X-Robots-Tag values the log carries (blank ones count as
    absent), `page` the table row in effect, `tokens` the crawler's robots tokens, and
    `content_usage` the (category, y|n) pairs of the response's Content-Usage header: a
    preference about the use of this one response, written beside the directives as
    `content_usage`.
    """
    present = [value for value in header_values if value.strip()]
    if not present and page is None and not content_usage:
        return None
    parts = [x_robots_tag_directives(present)]
    if page is not None:
        parts.append(page.directives)
    indexing: dict = combine(parts).effective(tokens)
    if content_usage:
        indexing["content_usage"] = dict(content_usage)
    return indexing


def indexing_unseen(decision: str, indexing: Mapping[str, object] | None) -> bool:
    """robots.txt disallows the URL, so a crawler that obeys it never sees these directives."""
    return indexing is not None and decision in (DISALLOWED, DISALLOWED_WITHIN_GRACE, DISALLOWED_BETWEEN_CAPTURES)


def noindex_unseen(decision: str, indexing: Mapping[str, object] | None) -> bool:
    """The page relies on a noindex that robots.txt keeps crawlers from reading.

    Such a URL can still be indexed from links, without its content.
    """
    return indexing_unseen(decision, indexing) and bool(indexing and indexing.get("noindex"))


def unavailable_after_passed(indexing: Mapping[str, object] | None, ts: datetime) -> bool:
    """`unavailable_after` is in effect and `ts` is later than it."""
    moment = None if indexing is None else indexing.get("unavailable_after")
    if moment is None:
        return False
    if not isinstance(moment, str):
        raise ValueError(f"unavailable_after must be an RFC 3339 string, got {moment!r}")
    return ts > parse_timestamp(moment)
