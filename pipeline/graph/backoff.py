"""Back-off after 429 and 503 as a batch transform: verdicts in, `backoff` rows out. The rule is
`matcher.backoff`; this module gathers each crawler's requests to a host in time order, for the
keys (host, crawler, operator, identity, as Crawl-delay's) that were answered 429 or 503 at all,
so the requests of every other key are never grouped."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import apache_beam as beam

from matcher.backoff import SLOW_DOWN, Request, findings
from matcher.crawl_delay import key_of
from matcher.timerange import from_micros, micros

# Requests travel as primitives: (time in microseconds, source, status, Retry-After as logged).
Packed = tuple[int, str, int | None, str | None]


class BackoffAudit(beam.PTransform):
    """Verdict batches -> `records.BACKOFF` rows."""

    def expand(self, verdict_batches):
        answered = (
            verdict_batches
            | "KeysAskedToSlowDown" >> beam.FlatMap(lambda verdicts: {key_of(v) for v in verdicts if _asked(v)})
            | "DistinctKeys" >> beam.Distinct()
        )
        return (
            verdict_batches
            | "RequestsOfThoseKeys" >> beam.FlatMap(_requests_of, beam.pvalue.AsList(answered))
            | "GroupPerKey" >> beam.GroupByKey()
            | "BackoffRows" >> beam.FlatMapTuple(backoff_rows)
        )


def _counted(verdict: dict) -> bool:
    """Claimed crawlers and undeclared crawler traffic; automated clients and agents are not."""
    return verdict["client_kind"] == "crawler"


def _asked(verdict: dict) -> bool:
    return _counted(verdict) and verdict["status"] in SLOW_DOWN


def _requests_of(verdicts: list[dict], keys: list) -> Iterator[tuple[tuple, Packed]]:
    wanted = set(keys)
    for verdict in verdicts:
        if _counted(verdict):
            key = key_of(verdict)
            if key in wanted:
                yield key, (micros(verdict["ts"]), verdict["source"], verdict["status"], verdict.get("retry_after"))


def backoff_rows(key: tuple, packed: Iterable[Packed]) -> Iterator[dict]:
    host, crawler, operator, identity = key
    requests = [Request(from_micros(ts), status, retry_after, source) for ts, source, status, retry_after in sorted(packed)]
    for found in findings(requests):
        yield {
            "host": host, "crawler": crawler, "operator": operator, "identity": identity,
            "at": found.at, "status": found.status, "retry_after_s": found.retry_after_s,
            "next_request_after_s": found.next_request_after_s, "backed_off": found.backed_off,
            "source": found.source,
        }
