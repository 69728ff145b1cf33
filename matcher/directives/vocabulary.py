"""The directive names robots meta elements and X-Robots-Tag headers use, and their values."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType

__all__ = [
    "DirectiveValue",
    "EXPANSIONS",
    "FLAGS",
    "FLAG_SET",
    "IMAGE_SIZES",
    "KNOWN",
    "MAX_COUNT",
    "UNLIMITED",
    "VALUED",
]

# Flags recognised by at least one major engine. `nocache` (Bing), `noyaca` (Yandex),
# `noodp`/`noydir` (retired, still common in templates) and the `noai`/`noimageai`
# opt-outs are kept so a site owner sees them in effect rather than flagged as typos.
FLAGS: tuple[str, ...] = (
    "indexifembedded",
    "noai",
    "noarchive",
    "nocache",
    "nofollow",
    "noimageai",
    "noimageindex",
    "noindex",
    "noodp",
    "nosnippet",
    "nositelinkssearchbox",
    "notranslate",
    "noydir",
    "noyaca",
)
# Directives that take a value after a colon.
VALUED: tuple[str, ...] = ("max-image-preview", "max-snippet", "max-video-preview", "unavailable_after")
# Names that stand for other directives: `none` restricts like two flags, the rest
# restate the defaults and so restrict nothing.
EXPANSIONS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "none": ("noindex", "nofollow"),
    "all": (),
    "index": (),
    "follow": (),
})
FLAG_SET = frozenset(FLAGS)
KNOWN = FLAG_SET | set(VALUED) | set(EXPANSIONS)

IMAGE_SIZES = ("none", "standard", "large")  # most restrictive first
UNLIMITED = -1  # max-snippet / max-video-preview: no limit
MAX_COUNT = 2**63 - 1  # fits the int64 columns of Parquet and BigQuery

DirectiveValue = int | str | datetime
