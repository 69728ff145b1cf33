"""The version in effect at a moment: the latest one that started at or before it.

robots.txt versions, page-directives rows and IP-range snapshots all follow this rule: a change
takes effect from its start and is never retroactive; before the first there is none.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

__all__ = ["index_in_effect"]


def index_in_effect(starts: Sequence[Any], at: Any) -> int:
    """Position in the ascending `starts` of the one in effect at `at`; -1 before the first."""
    return bisect_right(starts, at) - 1
