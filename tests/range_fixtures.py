"""Range documents the identity and range tests build: operator-shaped files of documentation and
private prefixes (RFC 5737, RFC 3849, RFC 1918), dated January and June 2026."""
from __future__ import annotations

from datetime import date, datetime

from config.registry import default_registry
from matcher.ip_ranges import RangeIndex, build_range_index

JAN, JUN = date(2026, 1, 1), date(2026, 6, 1)
OPERATORS = {name: s.operator for name, s in default_registry().range_sources.items()}


def range_document(*prefixes: str) -> dict:
    """An operator-shaped file holding `prefixes`."""
    entries = [{"ipv6Prefix" if ":" in p else "ipv4Prefix": p} for p in prefixes]
    return {"creationTime": "2026-01-01T00:00:00Z", "prefixes": entries}


def range_index(*documents) -> RangeIndex:
    return build_range_index(documents, OPERATORS)


def sample_index() -> RangeIndex:
    """Google's common crawlers moving from one network to another in June, and one network each of
    Bing, GPTBot and Anthropic."""
    return range_index(
        ("google-common-crawlers", JAN, range_document("192.0.2.0/24", "2001:db8:1::/48")),
        ("google-common-crawlers", JUN, range_document("198.51.100.0/24", "2001:db8:2::/48")),
        ("bingbot", JAN, range_document("203.0.113.0/26")),
        ("openai-gptbot", JAN, range_document("203.0.113.128/25", "203.0.113.192/27")),
        ("anthropic", JAN, range_document("203.0.113.64/27")),
    )


def crawler(name: str):
    return default_registry().get(name)


def at(day: str) -> datetime:
    return datetime.fromisoformat(day + "T12:00:00+00:00")
