"""The rows of a block of verdicts that a table's per-verdict rule can count, with only the
columns it reads, as dicts: the rule itself stays the one in `matcher` (or the graph module that
owns the table), called on fewer and narrower rows.

Each filter keeps every row the rule could count (a necessary condition of the rule, never a
restatement of it): the rule still decides on each row it is given.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from matcher import crawl_delay, records
from matcher.history import DISALLOWED_BETWEEN_CAPTURES
from pipeline.columnar.keys import codes, groups, row_keys
from pipeline.columnar.rows import records_of

__all__ = [
    "CHANGE_READS",
    "crawl_requests",
    "distinct_rows",
    "INDEXING_READS",
    "SIGNATURE_READS",
    "STRADDLE_READS",
    "host_spans",
    "on_hosts",
    "signed",
    "straddling",
    "verdict_records",
    "with_indexing",
]

INDEXING_READS = ("ts", "host", "path", "crawler", "operator", "decision", "indexing")
STRADDLE_READS = ("host", "crawler", "operator", "decision", "robots_version", "later_version")
SIGNATURE_READS = ("ts", "crawler", "operator", "identity", "identity_method", "signature", "signature_input")
CHANGE_READS = ("ts", "host", "path", "crawler", "client_kind", "tokens", "identity", "decision")


def verdict_records(verdicts: pa.Table, columns: Sequence[str] | None = None) -> list[dict]:
    """The rows as the audit makes its verdicts (of `columns` only, when given)."""
    return records_of(verdicts, records.VERDICTS, columns)


def with_indexing(verdicts: pa.Table) -> list[dict]:
    """The rows whose page carries indexing directives."""
    return _where(verdicts, pc.is_valid(verdicts["indexing"]), INDEXING_READS)


def straddling(verdicts: pa.Table) -> list[dict]:
    """The rows judged between two captures of a change."""
    return _where(verdicts, pc.equal(verdicts["decision"], DISALLOWED_BETWEEN_CAPTURES), STRADDLE_READS)


def signed(verdicts: pa.Table) -> list[dict]:
    """The rows that logged a signature."""
    return _where(verdicts, pc.is_valid(verdicts["signature"]), SIGNATURE_READS)


def on_hosts(verdicts: pa.Table, hosts: Iterable[str]) -> list[dict]:
    """The claimed crawlers' rows on `hosts`."""
    wanted = pa.array(sorted(hosts), pa.string())
    if not len(wanted):
        return []
    mask = pc.and_(pc.is_in(verdicts["host"], value_set=wanted), pc.is_valid(verdicts["crawler"]))
    return _where(verdicts, mask, CHANGE_READS)


def distinct_rows(verdicts: pa.Table, columns: Sequence[str]) -> tuple[list[dict], np.ndarray]:
    """The distinct rows of `verdicts` over `columns` (as `verdict_records` gives them) and, per
    row, the index of its distinct row."""
    flat = verdicts.select(list(columns)).flatten()
    _, of_row = row_keys(*(codes(column) for column in flat.columns))
    _, first = np.unique(of_row, return_index=True)
    return verdict_records(verdicts.take(pa.array(first)), columns), of_row


def crawl_requests(verdicts: pa.Table) -> Iterator[tuple[crawl_delay.Key, list[crawl_delay.CrawlRequest]]]:
    """Per crawl-delay key of the block, `crawl_delay.request_of` of each of its verdicts, each
    distinct key and each distinct shared part made once."""
    if not verdicts.num_rows:
        return
    keys, key_of_row = distinct_rows(verdicts, crawl_delay.KEY_READS)
    shared, shared_of_row = distinct_rows(verdicts, crawl_delay.SHARED_READS)
    parts = [crawl_delay.shared_of(row) for row in shared]
    times = verdicts["ts"].cast(pa.int64()).to_numpy().tolist()
    sources = verdicts["source"].to_pylist()
    of_row = shared_of_row.tolist()
    for key, rows in groups(key_of_row):
        yield crawl_delay.key_of(keys[key]), [(times[row], sources[row], parts[of_row[row]]) for row in rows.tolist()]


def host_spans(verdicts: pa.Table) -> Iterator[tuple[str, tuple[int, int]]]:
    """Per host of the block, its first and last request, in microseconds since the epoch."""
    spans = (
        pa.table({"host": verdicts["host"], "at": verdicts["ts"].cast(pa.int64())})
        .filter(pc.is_valid(verdicts["host"]))
        .group_by("host", use_threads=False)
        .aggregate([("at", "min"), ("at", "max")])
    )
    return zip(spans["host"].to_pylist(), zip(spans["at_min"].to_pylist(), spans["at_max"].to_pylist()))


def _where(verdicts: pa.Table, mask, columns: Sequence[str]) -> list[dict]:
    chosen = verdicts.filter(pc.fill_null(mask, False))
    return verdict_records(chosen, columns) if chosen.num_rows else []
