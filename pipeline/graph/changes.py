"""The change audit of a batch run as a transform: verdict batches -> `changes` rows
(`matcher.changes`), made once every verdict is in, since a change's periods end at the host's
last logged request."""
from __future__ import annotations

from collections.abc import Iterator, Mapping

import apache_beam as beam

from matcher.agents import Registry
from matcher.audit import Claim, fetch_key
from matcher.changes import ChangeKey, RobotsChange, change_row, host_changes, requests_of
from matcher.line_auditor import RobotsByHost
from matcher.robots_fetches import FetchHistory, FetchKey
from matcher.timerange import micros

Changes = Mapping[str, tuple[RobotsChange, ...]]


class AuditChanges(beam.PTransform):
    """Verdict batches -> one `changes` row per host, change, direction, crawler and identity."""

    def __init__(self, robots: beam.PCollection, fetches: beam.PCollection, registry: Registry):
        super().__init__()
        self._robots = robots
        self._fetches = fetches
        self._registry = registry

    def expand(self, verdict_batches):
        changes = self._robots | "HostChanges" >> beam.Map(changes_by_host)
        spans = (
            verdict_batches
            | "HostSpansPerBatch" >> beam.FlatMap(host_spans)
            | "HostSpans" >> beam.CombinePerKey(SpanOfHost())
        )
        return (
            verdict_batches
            | "AffectedRequests" >> beam.FlatMap(affected_requests, beam.pvalue.AsSingleton(changes), self._registry)
            | "GroupByChange" >> beam.GroupByKey()
            | "ChangeRows" >> beam.FlatMap(
                rows_of,
                beam.pvalue.AsDict(spans),
                beam.pvalue.AsSingleton(changes),
                beam.pvalue.AsSingleton(self._fetches),
                self._registry,
            )
        )


def changes_by_host(robots: RobotsByHost) -> dict[str, tuple[RobotsChange, ...]]:
    """Each host's changes; hosts without any are left out."""
    found = {host: host_changes(entry.versions) for host, entry in robots.items()}
    return {host: changes for host, changes in found.items() if changes}


def host_spans(verdicts: list[dict]) -> Iterator[tuple[str, tuple[int, int]]]:
    """Per host of the batch, its first and last request, in microseconds."""
    spans: dict[str, tuple[int, int]] = {}
    for verdict in verdicts:
        host = verdict["host"]
        if host is None:
            continue
        ts = micros(verdict["ts"])
        first, last = spans.get(host, (ts, ts))
        spans[host] = (min(first, ts), max(last, ts))
    return iter(spans.items())


class SpanOfHost(beam.CombineFn):
    def create_accumulator(self):
        return None

    def add_input(self, span, other):
        return other if span is None else (min(span[0], other[0]), max(span[1], other[1]))

    def merge_accumulators(self, spans):
        merged = None
        for span in spans:
            if span is not None:
                merged = self.add_input(merged, span)
        return merged

    def extract_output(self, span):
        return span


def _claim(verdict: dict, registry: Registry) -> Claim:
    registered = registry.get(verdict["crawler"])
    return Claim(
        verdict["crawler"], tuple(verdict["tokens"]), registered is None or not registered.ignores_catch_all, registered
    )


def affected_requests(
    verdicts: list[dict], changes: Changes, registry: Registry
) -> Iterator[tuple[ChangeKey, tuple[int, str]]]:
    """The crawler requests of the batch to paths a change of their host turned, keyed by change,
    direction, crawler and identity."""
    for verdict in verdicts:
        of_host = changes.get(verdict["host"])
        if of_host is None or verdict["crawler"] is None or verdict["client_kind"] != "crawler":
            continue
        claim = _claim(verdict, registry)
        for change, direction in requests_of(of_host, verdict["ts"], claim.tokens, claim.catch_all, verdict["path"] or "/"):
            key = (change.host, micros(change.at), direction, verdict["crawler"], verdict["identity"])
            yield key, (micros(verdict["ts"]), verdict["decision"])


def rows_of(
    keyed: tuple[ChangeKey, list[tuple[int, str]]],
    spans: Mapping[str, tuple[int, int]],
    changes: Changes,
    fetches: Mapping[FetchKey, FetchHistory],
    registry: Registry,
) -> Iterator[dict]:
    key, requests = keyed
    host, at, _, crawler, identity = key
    (change,) = [change for change in changes[host] if micros(change.at) == at]
    claim = _claim({"crawler": crawler, "tokens": ()}, registry)
    history = fetches.get(fetch_key(claim, identity, host))
    fetch_times = [] if history is None else [fetch.ts for fetch in history.fetches]
    row = change_row(key, requests, spans[host], change.next_at, fetch_times)
    if row is not None:
        yield row
