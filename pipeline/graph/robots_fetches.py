"""The robots.txt fetches of a batch run, read before the audit: what each crawler held at each
request is known only when all its fetches are, in whichever file and order they were logged.

    logs ──ReadLogLines──► RobotsFetchesOfBatch ──┐
    --prior-run OUT/robots_fetches ───────────────┴─► GroupFetchesByKey ──► FetchHistories ──► side input of the audit
                                                                                          └─► robots_fetches rows

It reads the logs itself, like the DNS questions: the audit needs every fetch before its first
verdict, and a shared read would hold every line in memory meanwhile. Only lines that can spell
/robots.txt are parsed. A key's fetches are few (one a crawler and host every few hours), so they
are grouped by the runner's `GroupByKey` and meet in one dict, which the audit reads whole.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import timedelta

import apache_beam as beam
from apache_beam.metrics import Metrics

from matcher.history import HostHistory
from matcher.line_auditor import LineAuditor
from matcher.records import robots_fetch_record
from matcher.robots_fetches import FetchHistory, FetchKey, RobotsFetch, carried_over
from pipeline.graph.line_audit import followed_fields, is_line_batch
from pipeline.graph.read_logs import PIECE_BYTES, ReadLogLines


class FollowRobotsFetches(beam.PTransform):
    """pbegin -> {"histories": one dict FetchKey -> FetchHistory, "rows": robots_fetches rows}.

    `robots` is the robots table as the audit reads it (a singleton; the rows name the version
    each fetch was served), `dns_answers` the
    (address, DnsAnswer) pairs of a run with DNS (None: off), `prior` the fetches carried over
    from an earlier run as (key, RobotsFetch) pairs."""

    def __init__(
        self,
        pattern: str,
        auditor: LineAuditor,
        robots: beam.PCollection,
        dns_answers: beam.PCollection | None = None,
        prior: Iterable[tuple[FetchKey, RobotsFetch]] = (),
        piece_bytes: int | None = PIECE_BYTES,
    ):
        super().__init__()
        self._piece_bytes = piece_bytes
        self._pattern = pattern
        self._auditor = auditor
        self._robots = robots
        self._dns_answers = dns_answers
        self._prior = list(prior)

    def expand(self, pbegin):
        side_inputs = [] if self._dns_answers is None else [beam.pvalue.AsDict(self._dns_answers)]
        logged = (
            pbegin
            | "ReadLogLines" >> ReadLogLines(self._pattern, piece_bytes=self._piece_bytes)
            | "RobotsFetchesOfBatch" >> beam.ParDo(RobotsFetchesOfBatchFn(self._auditor), *side_inputs)
        )
        prior = pbegin | "PriorRunFetches" >> beam.Create(self._prior)
        histories = (
            (logged, prior)
            | "AllFetches" >> beam.Flatten()
            | "GroupFetchesByKey" >> beam.GroupByKey()
            | "FetchHistories" >> beam.MapTuple(lambda key, fetches: (key, FetchHistory(fetches)))
        )
        return {
            "histories": histories | "OneDict" >> beam.combiners.ToDict(),
            "rows": histories
            | "FetchRows"
            >> beam.FlatMap(fetch_rows, beam.pvalue.AsSingleton(self._robots), self._auditor.error_limit),
        }


class RobotsFetchesOfBatchFn(beam.DoFn):
    """A batch of lines -> (key, RobotsFetch) of each crawler request for /robots.txt in it."""

    def __init__(self, auditor: LineAuditor):
        self._auditor = auditor
        self.fetches = Metrics.counter(self.__class__, "robots_fetches")

    def process(self, batch, dns_answers=None):
        if followed_fields(self._auditor, batch) or not is_line_batch(batch):
            return  # the audit's own read makes a dead letter of what is not lines
        found = self._auditor.robots_fetches(batch, dns_answers)
        self.fetches.inc(len(found))
        yield from found


def fetch_rows(keyed: tuple[FetchKey, FetchHistory], robots_by_host, error_limit: timedelta) -> Iterator[dict]:
    """The `robots_fetches` rows of one key, in time order; the fetches carried over from an
    earlier run that still decide what the crawler held are written again."""
    key, history = keyed
    host = key[0]
    entry = robots_by_host.get(host) if host else None
    versions = None if entry is None else HostHistory(entry.versions, error_limit=error_limit)
    kept = carried_over(history)
    for held in history.held:
        if held.fetch.carried and held.fetch not in kept:
            continue
        version = None if versions is None or held.kind != "ok" else versions.version_at(held.served_at)
        yield robots_fetch_record(key, held, version)
