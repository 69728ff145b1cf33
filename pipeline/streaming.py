"""The audit on continuous logs: line batches from a streaming source (`pipeline/stream_sources.py`)
audited against the robots table, read once or refreshed (`pipeline/robots_refresh.py`), with live
DNS. Its sinks, like the batch ones, are in `pipeline/sinks.py`.

Event time. Verdicts carry the log line's time as their timestamp; the watermark comes from the
source. Late data: a request whose window its crawler has already released is counted and sent
to the dead-letter table (`pipeline/crawl_delay.py`); nothing is dropped for being late.

Reverse DNS (`--dns live`) is asked by the worker auditing a batch, through one `CachingResolver`
per worker process: an address is asked once per `--dns-ttl`, a bundle waits for new lookups at
most one lookup budget (`--dns-timeout` x (`--dns-retries` + 1)) in all, and an address still
unanswered then is `unverified` for that batch. `--dns snapshot:FILE` answers from the file.
"""
from __future__ import annotations

import time

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms import window
from apache_beam.utils.shared import Shared

from matcher.records import DEAD_LETTERS_TABLE, DNS_ANSWERS_TABLE, VERDICTS_TABLE
from matcher.reverse_dns import DnsAnswer
from pipeline.auditing import LineAuditor
from pipeline.dns import DnsSettings, count_trouble
from pipeline.plain.resolvers import CachingResolver, LiveResolver, answer_to_json
from pipeline.sinks import beam_timestamp
from pipeline.transforms import TALLY, AuditLineBatchFn


class AuditLogStream(beam.PTransform):
    """Line batches -> {"verdicts" (stamped with their log time), "dead_letters", "tally"}, and
    with `dns` "dns_answers": each answer a worker's live lookups brought, once.

    The batch graph's `AuditLogLines` groups a fixed table into a dict view; here the table
    arrives whole, one snapshot at a time, so it is read as a singleton. Both answer `.get(host)`.
    """

    def __init__(self, auditor: LineAuditor, robots_snapshots, dns: DnsSettings | None = None):
        super().__init__()
        self._auditor = auditor
        self._robots = robots_snapshots
        self._dns = dns

    def expand(self, batches):
        audit = AuditLineBatchFn(self._auditor) if self._dns is None else AuditWithDnsFn(self._auditor, self._dns)
        audited = batches | "AuditLineBatches" >> beam.ParDo(
            audit, beam.pvalue.AsSingleton(self._robots)
        ).with_outputs(DEAD_LETTERS_TABLE, TALLY, DNS_ANSWERS_TABLE, main=VERDICTS_TABLE)
        verdicts = audited.verdicts | "StampEventTime" >> beam.Map(stamp_event_time)
        outputs = {
            VERDICTS_TABLE: verdicts, DEAD_LETTERS_TABLE: audited[DEAD_LETTERS_TABLE], TALLY: audited[TALLY]
        }
        if self._dns is not None and isinstance(self._dns.resolver, LiveResolver):
            outputs[DNS_ANSWERS_TABLE] = audited[DNS_ANSWERS_TABLE]
        return outputs


class AuditWithDnsFn(AuditLineBatchFn):
    """The per-line audit, with the reverse DNS of a batch's crawler claims asked first.

    Live answers come from the worker's shared `CachingResolver`; the answers it brings in are
    emitted once, tagged `dns_answers`, as snapshot records. The wait for new lookups is one
    lookup budget per bundle, so a slow resolver delays a bundle by at most that.
    """

    def __init__(self, auditor: LineAuditor, dns: DnsSettings):
        super().__init__(auditor)
        self._dns = dns
        self._shared = Shared()
        self.lookups = Metrics.counter(self.__class__, "dns_lookups")
        self.timeouts = Metrics.counter(self.__class__, "dns_timeouts")
        self.errors = Metrics.counter(self.__class__, "dns_errors")
        self.cut_off = Metrics.counter(self.__class__, "dns_unanswered_in_time")

    def setup(self):
        self._cache = None
        if isinstance(self._dns.resolver, LiveResolver):
            self._cache = self._shared.acquire(self._new_cache)

    def _new_cache(self) -> CachingResolver:
        return CachingResolver(self._dns.resolver, ttl=self._dns.ttl, capacity=self._dns.cache_size)

    def start_bundle(self):
        self._wait_left = self._cache.budget if self._cache is not None else 0.0

    def process(self, batch, robots_by_host):
        questions = self._auditor.dns_questions(batch)
        if self._cache is None:
            answers = {address: self._dns.resolver.resolve(address) for address in questions}
        else:
            answers = yield from self._ask(questions)
        yield from super().process(batch, robots_by_host, answers)

    def _ask(self, questions: set[str]):
        started = time.monotonic()
        answers, arrived = self._cache.answers(sorted(questions), self._wait_left)
        self._wait_left -= time.monotonic() - started
        for answer in arrived:
            self.lookups.inc()
            count_trouble(answer, self.timeouts, self.errors)
            yield beam.pvalue.TaggedOutput(DNS_ANSWERS_TABLE, answer_to_json(answer))
        self.cut_off.inc(sum(1 for address in questions if _cut_off(answers[address])))
        return answers


def _cut_off(answer: DnsAnswer) -> bool:
    """The placeholder `CachingResolver.answers` gives an address it could not wait for."""
    return answer.ptr.error == "timeout" and not answer.resolved_at


def stamp_event_time(verdict: dict) -> window.TimestampedValue:
    return window.TimestampedValue(verdict, beam_timestamp(verdict["ts"]))
