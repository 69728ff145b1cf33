"""The `served` tallies of a block's verdicts: one group-by, and the row's own key function
(`matcher.served.served_key`) called once per group rather than once per verdict."""
from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from matcher.served import ServedKey, ServedTally, served_key

__all__ = ["served_in_block"]

_READ = ("host", "crawler", "operator", "identity", "decision", "status")


def served_in_block(verdicts: pa.Table) -> Iterator[tuple[ServedKey, ServedTally]]:
    """(row key, (requests, bytes, requests that logged a size)) of each `served` row the block counts in."""
    if not verdicts.num_rows:
        return iter(())
    grouped = verdicts.select([*_READ, "bytes"]).group_by(list(_READ), use_threads=False).aggregate(
        [([], "count_all"), ("bytes", "sum"), ("bytes", "count")]
    )
    tallies: dict[ServedKey, list[int]] = {}
    sums = pc.fill_null(grouped["bytes_sum"], 0)
    for first, requests, sent, sized in zip(
        grouped.select(list(_READ)).to_pylist(), grouped["count_all"].to_pylist(), sums.to_pylist(),
        grouped["bytes_count"].to_pylist(),
    ):
        tally = tallies.setdefault(served_key(first), [0, 0, 0])
        tally[0] += requests
        tally[1] += sent
        tally[2] += sized
    return ((key, tuple(tally)) for key, tally in tallies.items())
