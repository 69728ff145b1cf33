"""The summary table's counts from a block's verdict columns: one group-by, and the summary's own
functions (`matcher.summary`) called once per group rather than once per verdict."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from matcher.summary import SummaryKey, count_bytes, decision_counts, summary_key
from pipeline.columnar.keys import joined_items

__all__ = ["summary_counts"]

_READ = ("crawler", "operator", "identity", "client_kind", "purpose", "decision", "preference_conflicts")


def summary_counts(verdicts: pa.Table) -> dict[SummaryKey, Counter]:
    """Per summary key, what its verdicts add to the summary row (`decisions_per_crawler`)."""
    if not verdicts.num_rows:
        return {}
    conflicts = pc.fill_null(pc.greater(pc.list_value_length(verdicts["preference_conflicts"]), 0), False)
    grouped = pa.table({
        "crawler": verdicts["crawler"],
        "operator": verdicts["operator"],
        "identity": verdicts["identity"],
        "client_kind": verdicts["client_kind"],
        "purpose": joined_items(verdicts["purpose"]),
        "decision": verdicts["decision"],
        "conflicts": conflicts,
        "row": np.arange(verdicts.num_rows),
        "bytes": verdicts["bytes"],
    }).group_by(["crawler", "operator", "identity", "client_kind", "purpose", "decision", "conflicts"]).aggregate(
        [("row", "min"), ("row", "count"), ("bytes", "sum"), ("bytes", "count")]
    )
    firsts = verdicts.select(list(_READ)).take(grouped["row_min"]).to_pylist()
    counts: dict[SummaryKey, Counter] = {}
    sizes = zip(grouped["bytes_sum"].to_pylist(), grouped["bytes_count"].to_pylist())
    for first, lines, (total, sized) in zip(firsts, grouped["row_count"].to_pylist(), sizes):
        of_key = counts.setdefault(summary_key(first), Counter())
        for label in decision_counts(first):
            of_key[label] += lines
        if sized:
            count_bytes(of_key, total, sized)
    return counts
