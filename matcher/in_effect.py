"""The version in effect at a moment: the latest one that started at or before it.

robots.txt versions, page-directives rows and the snapshot a request that claims no crawler is
looked up in follow this rule: a change takes effect from its start and is never retroactive;
before the first there is none. Key-directory snapshots also speak a little way past the ends of
their history: `HISTORY_EDGE`. (A crawler's claim is checked against IP-range snapshots by their
spans and a window around the request instead: `matcher/range_evidence.py`.)
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

__all__ = ["HISTORY_EDGE", "index_in_effect", "later_note"]

# How far a dated snapshot speaks for days outside its history: a request up to this long before
# the first snapshot may be proved by a later one, and the last snapshot is stale beyond it.
HISTORY_EDGE = timedelta(days=30)


def index_in_effect(starts: Sequence[Any], at: Any) -> int:
    """Position in the ascending `starts` of the one in effect at `at`; -1 before the first."""
    return bisect_right(starts, at) - 1


def later_note(taken: date, day: date) -> str:
    """What a verdict says when a snapshot taken after the request's `day` proved it."""
    gap = (taken - day).days
    return f"later: {gap} {'day' if gap == 1 else 'days'} after the request"
