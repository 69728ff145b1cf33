"""What a batch run adds up across verdicts: the summary per crawler and identity, what the HTML
report counts, and the counts of where every line went.

Every input line ends in exactly one of three places, which the counts check: a verdict, the
skipped non-crawler count, or the dead-letter table.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Iterator

import apache_beam as beam

from matcher.records import DEAD_LETTERS_TABLE
from matcher.summary import summary_row
from matcher.report_counts import READS, ReportCounts, TopDisallowed, disallowed_keys
from pipeline.columnar.selections import verdict_records
from pipeline.columnar.summary import summary_counts
from pipeline.graph.line_audit import NOT_REQUEST_KEY, TALLY


class CountDecisions(beam.CombineFn):
    """Decision counts of one key, from the counts of each batch."""

    def create_accumulator(self):
        return Counter()

    def add_input(self, counts, batch_counts):
        counts.update(batch_counts)
        return counts

    def merge_accumulators(self, accumulators):
        return sum(accumulators, Counter())

    def extract_output(self, counts):
        return counts


class Summarize(beam.PTransform):
    """Verdict blocks -> one row per (crawler, identity, client kind, purpose): requests and each
    decision's count."""

    def expand(self, verdict_blocks):
        return (
            verdict_blocks
            | "CountPerBatch" >> beam.FlatMap(lambda block: summary_counts(block).items())
            | "CountDecisions" >> beam.CombinePerKey(CountDecisions())
            | "SummaryRows" >> beam.MapTuple(summary_row)
        )


class CombineReportCounts(beam.CombineFn):
    """The report's counts of the run, from the counts of each batch."""

    def create_accumulator(self):
        return ReportCounts()

    def add_input(self, counts, batch_counts):
        return counts.merge(batch_counts)

    def merge_accumulators(self, accumulators):
        total = ReportCounts()
        for counts in accumulators:
            total.merge(counts)
        return total

    def extract_output(self, counts):
        return counts


class TopDisallowedFn(beam.CombineFn):
    """One crawler's disallowed totals and top rows of one identity, from the exact count of each
    distinct row."""

    def create_accumulator(self):
        return TopDisallowed()

    def add_input(self, top, row):
        fields, requests = row
        return top.add(fields, requests)

    def merge_accumulators(self, accumulators):
        merged = TopDisallowed()
        for top in accumulators:
            merged.merge(top)
        return merged

    def extract_output(self, top):
        return top.result()


class CountForReport(beam.PTransform):
    """Verdict blocks -> one `ReportCounts`: what the HTML report draws, so that it need not
    read the verdicts back.

    Disallowed requests are counted per distinct (crawler, identity, path, what decided) through
    `grouping`, a transform with `GroupByKey`'s contract: a local batch run hands in one that
    groups on disk (`pipeline.local.spill`), since a local runner holds a grouped collection in
    memory; without it the runner's `GroupByKey` groups them. What is kept per crawler and
    identity after that is its totals and top rows, so memory does not grow with the number of
    distinct paths."""

    def __init__(self, grouping: beam.PTransform | None = None):
        super().__init__()
        self._grouping = grouping

    def expand(self, verdict_blocks):
        verdicts = verdict_blocks | "ReportColumns" >> beam.Map(verdict_records, READS)
        disallowed = (
            verdicts
            | "DisallowedPerBatch" >> beam.FlatMap(lambda verdicts: disallowed_keys(verdicts).items())
            | "GroupDisallowed" >> (self._grouping or beam.GroupByKey())
            | "SumPerDisallowed" >> beam.MapTuple(lambda key, counts: (key[:2], (key[2:], sum(counts))))
            | "TopPerCrawler" >> beam.CombinePerKey(TopDisallowedFn())
        )
        return (
            verdicts
            | "CountPerBatch" >> beam.Map(lambda verdicts: ReportCounts().add(verdicts))
            | "CombineReportCounts" >> beam.CombineGlobally(CombineReportCounts())
            | "WithTopDisallowed" >> beam.Map(_with_disallowed, beam.pvalue.AsDict(disallowed))
        )


def _with_disallowed(counts: ReportCounts, disallowed: dict) -> ReportCounts:
    counts.disallowed = dict(disallowed)
    return counts


def count_in_batch(keys_of: Callable[[dict], Iterable]) -> Callable[[list[dict]], Iterator[tuple]]:
    """Verdict batch -> (key, requests) for each key that `keys_of` gives its verdicts."""

    def count(verdicts: list[dict]) -> Iterator[tuple]:
        return iter(Counter(key for verdict in verdicts for key in keys_of(verdict)).items())

    return count


class CountOutcomes(beam.PTransform):
    """{"dead_letters", "tally"} -> one dict: lines read and where each went."""

    def expand(self, outputs):
        dead = outputs[DEAD_LETTERS_TABLE] | "CountDeadLetters" >> beam.combiners.Count.Globally()
        tallies = outputs[TALLY] | "SumTallies" >> beam.CombineGlobally(sum_tallies)
        return tallies | "CountsDict" >> beam.Map(counts_of, beam.pvalue.AsSingleton(dead))


def sum_tallies(tallies) -> dict:
    total = Counter({"lines": 0, "skipped": 0, "verdicts": 0})
    for tally in tallies:
        total.update(tally)
    return dict(total)


def counts_of(tally: dict, dead_letters: int) -> dict:
    """A run's summed tally as counts.json holds it: lines read, verdicts, skips, dead letters,
    and the not-requests in all and by reason."""
    reasons = {key[len(NOT_REQUEST_KEY):]: n for key, n in tally.items() if key.startswith(NOT_REQUEST_KEY)}
    plain = {key: n for key, n in tally.items() if not key.startswith(NOT_REQUEST_KEY)}
    return {
        **plain,
        "dead_letters": dead_letters,
        "not_requests": sum(reasons.values()),
        "not_request_reasons": dict(sorted(reasons.items())),
    }
