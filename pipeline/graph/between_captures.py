"""Requests judged `disallowed-between-captures`, grouped by the change they straddle.

Each row names both candidate versions of one host's robots.txt (the one in effect by
`effective_from`, which disallowed, and the next, which allowed) and the window in which the
change happened, so the closing report can say which change a site owner should date more
precisely (docs/semantics.md § History).
"""
from __future__ import annotations

from typing import Iterator

import apache_beam as beam

from matcher.history import DISALLOWED_BETWEEN_CAPTURES
from matcher.timerange import parse_timestamp
from pipeline.columnar.selections import straddling
from pipeline.graph.summaries import count_in_batch

# Times travel as ISO strings: grouping needs a deterministic encoding, which datetimes lack.
Key = tuple[str | None, str | None, str, str, str]


class BetweenCaptures(beam.PTransform):
    """Verdict blocks -> one row per (host, crawler, earlier version, later version) with its request count."""

    def expand(self, verdict_blocks):
        straddled = count_in_batch(change_straddled)
        return (
            verdict_blocks
            | "ChangesStraddled" >> beam.FlatMap(lambda block: straddled(straddling(block)))
            | "CountPerChange" >> beam.CombinePerKey(sum)
            | "BetweenCapturesRows" >> beam.MapTuple(between_captures_row)
        )


def change_straddled(verdict: dict) -> Iterator[Key]:
    if verdict["decision"] != DISALLOWED_BETWEEN_CAPTURES:
        return
    later = verdict["later_version"]
    yield (
        verdict["host"],
        verdict["crawler"] or verdict["operator"],
        verdict["robots_version"]["effective_from"].isoformat(),
        later["effective_from"].isoformat(),
        later["observed_before"].isoformat(),
    )


def between_captures_row(key: Key, requests: int) -> dict:
    host, crawler, effective_from, later_effective_from, observed_before = key
    return {
        "host": host,
        "crawler": crawler,
        "effective_from": parse_timestamp(effective_from),
        "later_effective_from": parse_timestamp(later_effective_from),
        "observed_before": parse_timestamp(observed_before),
        "requests": requests,
    }
