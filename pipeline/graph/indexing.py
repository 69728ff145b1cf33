"""Indexing findings across verdicts: what the page directives mean for the crawl as a whole.

Two findings a site owner acts on (docs/semantics.md § Page directives): a page that robots.txt
disallows yet that relies on `noindex` (a compliant crawler never fetches it, so never sees the noindex and
may keep the URL indexed from links), and a page crawled after its `unavailable_after`.
"""
from __future__ import annotations

from typing import Iterator

import apache_beam as beam

from matcher.directives import noindex_unseen, unavailable_after_passed
from pipeline.columnar.selections import with_indexing
from pipeline.graph.summaries import count_in_batch

NOINDEX_UNSEEN = "noindex-unseen"
CRAWLED_AFTER_UNAVAILABLE = "crawled-after-unavailable"


class IndexingFindings(beam.PTransform):
    """Verdict blocks -> one row per (finding, host, path, crawler) with its request count."""

    def expand(self, verdict_blocks):
        findings = count_in_batch(request_findings)
        return (
            verdict_blocks
            | "FindingsPerBatch" >> beam.FlatMap(lambda block: findings(with_indexing(block)))
            | "CountFindings" >> beam.CombinePerKey(sum)
            | "FindingRows" >> beam.MapTuple(finding_row)
        )


def request_findings(verdict: dict) -> Iterator[tuple[str, str | None, str, str | None]]:
    indexing = verdict["indexing"]
    if indexing is None:
        return
    where = (verdict["host"], verdict["path"], verdict["crawler"] or verdict["operator"])
    if noindex_unseen(verdict["decision"], indexing):
        yield (NOINDEX_UNSEEN, *where)
    if unavailable_after_passed(indexing, verdict["ts"]):
        yield (CRAWLED_AFTER_UNAVAILABLE, *where)


def finding_row(key: tuple[str, str | None, str, str | None], requests: int) -> dict:
    finding, host, path, crawler = key
    return {"finding": finding, "host": host, "path": path, "crawler": crawler, "requests": requests}
