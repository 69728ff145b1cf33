"""Which of two values of one directive restricts more: the one that wins a conflict.

Search engines document that conflicting directives resolve to the most restrictive: the
shorter snippet, the smaller image preview, the earlier `unavailable_after`.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from matcher.directives.vocabulary import IMAGE_SIZES, UNLIMITED, DirectiveValue

__all__ = ["stricter"]


def stricter(name: str, first: DirectiveValue, second: DirectiveValue) -> DirectiveValue:
    """The more restrictive of two values of the valued directive `name`; the first on a tie."""
    return min(first, second, key=_STRICTNESS[name])


def _count_strictness(count: int) -> float:
    return float("inf") if count == UNLIMITED else float(count)


_STRICTNESS: Mapping[str, Callable[[Any], Any]] = MappingProxyType({
    "max-snippet": _count_strictness,
    "max-video-preview": _count_strictness,
    "max-image-preview": IMAGE_SIZES.index,
    "unavailable_after": lambda moment: moment,
})
