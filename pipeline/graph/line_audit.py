"""The audit of log lines as one transform: line batches and the robots table in; verdicts, dead
letters and tallies out. A batch run audits each batch column by column (`pipeline.columnar`) and
passes its verdicts on as one Arrow table; a stream audits line by line and passes a list of dicts.

Reverse DNS. A batch run resolves each distinct address once before the audit
(`ResolveLogClients`) and hands the answers over as a side input. A streaming run asks as lines
arrive (`--dns live`), through one `CachingResolver` per worker process: an address is asked once
per `--dns-ttl`, a bundle waits for new lookups at most one lookup budget (`--dns-timeout` x
(`--dns-retries` + 1)) in all, and an address still unanswered then is `unverified` for that
batch. `--dns snapshot:FILE` answers from the file.
"""
from __future__ import annotations

import time
from collections import Counter

import apache_beam as beam
import pyarrow as pa
from apache_beam import coders
from apache_beam.coders import coder_impl
from apache_beam.metrics import Metrics
from apache_beam.utils.shared import Shared

from matcher.records import DEAD_LETTERS_TABLE, DNS_ANSWERS_TABLE
from matcher.reverse_dns import DnsAnswer
from pipeline.graph.dns import DnsSettings, count_trouble
from matcher.line_auditor import DEAD_LETTER, NOT_REQUEST, SKIPPED, VERDICT, LineAuditor, dead_letter
from pipeline.columnar.verdicts import BlockAuditor
from pipeline.evidence.resolvers import CachingResolver, LiveResolver, answer_to_json
from pipeline.graph.read_logs import MAX_LINE_BYTES, PIECE_BYTES, FieldsInForce, LongLine, ReadLogLines, UnreadableRest

TALLY = "tally"
# Visits an operator's service referred, counted per batch: lists of (Referral, visits).
REFERRAL_COUNTS = "referral_counts"
# Tally keys of not-requests, one per reason: "not_request:no-request" ...
NOT_REQUEST_KEY = "not_request:"
VERDICT_BATCHES = "verdict_batches"
# Lines a batch run audits at a time: Arrow's cost per call is paid per block, and a larger block
# holds more lines that share a key.
BLOCK_LINES = 4_096
UNREADABLE_REASON = "unreadable-rest-of-file"
LONG_LINE_REASON = "line-too-long"


def is_line_batch(batch) -> bool:
    """A batch of lines, not the dead letter of a file's unread rest or of an over-long line, nor
    the fields a piece of a W3C file starts with."""
    return not isinstance(batch, (UnreadableRest, LongLine, FieldsInForce))


def followed_fields(auditor: LineAuditor, batch) -> bool:
    """True when `batch` is the `FieldsInForce` a piece of a file starts with, now taken by the
    auditor's parser of that file for the piece's lines after it."""
    if isinstance(batch, FieldsInForce):
        auditor.take_fields(batch.path, batch.line)
        return True
    return False


def _read_failure(batch: UnreadableRest | LongLine) -> dict:
    if isinstance(batch, UnreadableRest):
        return dead_letter(f"{batch.path}:{batch.line}", UNREADABLE_REASON, batch.message, "")
    message = (
        f"line of {batch.length:,} bytes, over the {MAX_LINE_BYTES:,}-byte maximum; "
        f"its first {len(batch.prefix.encode('utf-8', 'backslashreplace')):,} bytes kept"
    )
    return dead_letter(f"{batch.path}:{batch.line}", LONG_LINE_REASON, message, batch.prefix)


class VerdictBatch(list):
    """The verdicts of one batch of lines, the element type that gives them `VerdictBatchCoder`."""


class VerdictBatchCoder(coders.Coder):
    """Verdict batches encoded as Beam encodes any list, sized from a few of their verdicts.

    Beam samples the encoded size of elements for its metrics, some forty elements per worker in a
    million-line run, and encoding a whole batch of hundreds of verdicts for each sample costs
    more than the step it measures (bench/README.md)."""

    _SIZED_FROM = 8
    _encoding = coders.FastPrimitivesCoder()

    def _create_impl(self):
        return coder_impl.CallbackCoderImpl(self.encode, self.decode, self.estimate_size)

    def encode(self, batch: list) -> bytes:
        return self._encoding.encode(batch)

    def decode(self, encoded: bytes) -> list:
        return self._encoding.decode(encoded)

    def estimate_size(self, batch: list) -> int:
        step = max(1, len(batch) // self._SIZED_FROM)
        sample = batch[::step][: self._SIZED_FROM]
        if not sample:
            return len(self._encoding.encode([]))
        return len(self._encoding.encode(sample)) * len(batch) // len(sample)

    def is_deterministic(self) -> bool:
        return False

    def to_type_hint(self):
        return VerdictBatch


coders.registry.register_coder(VerdictBatch, VerdictBatchCoder)


class VerdictBlockCoder(coders.Coder):
    """A block of verdicts (an Arrow table) in Arrow's IPC stream format, sized by its buffers."""

    def encode(self, table: pa.Table) -> bytes:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return sink.getvalue().to_pybytes()

    def decode(self, encoded: bytes) -> pa.Table:
        return pa.ipc.open_stream(encoded).read_all()

    def _create_impl(self):
        return coder_impl.CallbackCoderImpl(self.encode, self.decode, lambda table: table.nbytes)

    def is_deterministic(self) -> bool:
        return False

    def to_type_hint(self):
        return pa.Table


coders.registry.register_coder(pa.Table, VerdictBlockCoder)


class _AuditBatchFn(beam.DoFn):
    """What both audits of a batch of lines share: the fields a piece starts with, a file's unread
    rest or over-long line as its dead letter, and the tally of lines, verdicts and skips."""

    def __init__(self, auditor: LineAuditor):
        self._auditor = auditor
        self.lines = Metrics.counter(self.__class__, "lines")
        self.verdicts = Metrics.counter(self.__class__, "verdicts")
        self.skipped = Metrics.counter(self.__class__, "skipped_non_crawlers")
        self.dead = Metrics.counter(self.__class__, "dead_letters")
        self.not_requests = Metrics.counter(self.__class__, "not_requests")

    def process(self, batch, robots_by_host, dns_answers=None, fetches=None):
        if followed_fields(self._auditor, batch):
            return
        if not is_line_batch(batch):
            # The unread rest of a file, or a line over the maximum, counts as one line read and
            # is its dead letter.
            self.lines.inc()
            self.dead.inc()
            yield beam.pvalue.TaggedOutput(DEAD_LETTERS_TABLE, _read_failure(batch))
            yield beam.pvalue.TaggedOutput(TALLY, {"lines": 1, "skipped": 0, "verdicts": 0})
            return
        yield from self.audit(batch, robots_by_host, dns_answers, fetches)

    def audit(self, batch, robots_by_host, dns_answers, fetches):
        raise NotImplementedError

    def tallied(self, lines: int, verdicts: int, dead: int, not_requests: Counter) -> beam.pvalue.TaggedOutput:
        others = sum(not_requests.values())
        tally = {"lines": lines, "skipped": lines - verdicts - dead - others, "verdicts": verdicts}
        # one flat key per reason, so that tallies add up as counters; `counts_of` nests them
        tally.update({NOT_REQUEST_KEY + reason: n for reason, n in not_requests.items()})
        self.lines.inc(tally["lines"])
        self.skipped.inc(tally["skipped"])
        self.verdicts.inc(verdicts)
        self.dead.inc(dead)
        self.not_requests.inc(others)
        return beam.pvalue.TaggedOutput(TALLY, tally)


class AuditBlockFn(_AuditBatchFn):
    """A batch of lines audited column by column -> its verdicts as one Arrow table (main output),
    dead letters tagged one by one, the visits operators' services referred, and a tally."""

    def setup(self):
        self._blocks = BlockAuditor(self._auditor)

    def audit(self, batch, robots_by_host, dns_answers, fetches):
        path, first_number, lines = batch
        audited = self._blocks.audit_block(path, first_number, lines, robots_by_host, dns_answers, fetches)
        for letter in audited.dead_letters:
            yield beam.pvalue.TaggedOutput(DEAD_LETTERS_TABLE, letter)
        if audited.verdicts.num_rows:
            yield audited.verdicts
        if audited.referrals:
            yield beam.pvalue.TaggedOutput(REFERRAL_COUNTS, list(audited.referrals.items()))
        yield self.tallied(len(lines), audited.verdicts.num_rows, len(audited.dead_letters), Counter(audited.not_requests))


class AuditLineBatchFn(_AuditBatchFn):
    """A batch of lines audited line by line -> its verdicts as one list (main output), dead
    letters tagged one by one, the visits operators' services referred, and a tally."""

    def audit(self, batch, robots_by_host, dns_answers, fetches):
        path, first_number, lines = batch
        verdicts, dead, not_requests, referrals = [], 0, Counter(), Counter()
        for kind, record in self._auditor.audit_lines(path, first_number, lines, robots_by_host, dns_answers, fetches):
            if kind == VERDICT:
                verdicts.append(record)
            elif kind == SKIPPED:
                if record is not None:
                    referrals[record] += 1
            elif kind == DEAD_LETTER:
                dead += 1
                yield beam.pvalue.TaggedOutput(DEAD_LETTERS_TABLE, record)
            elif kind == NOT_REQUEST:
                not_requests[record] += 1
        if verdicts:
            yield verdicts
        if referrals:
            yield beam.pvalue.TaggedOutput(REFERRAL_COUNTS, list(referrals.items()))
        yield self.tallied(len(lines), len(verdicts), dead, not_requests)


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
        questions = self._auditor.dns_questions(batch) if is_line_batch(batch) else set()
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


class ResolveLogClients(beam.PTransform):
    """Log files -> (address, DnsAnswer) for each client address whose verdicts reverse DNS
    decides, each resolved once by `resolve` (see `pipeline.graph.dns.ResolveDistinct`).

    It reads the logs itself rather than sharing the audit's read: the audit needs every answer
    before its first verdict, and a shared read would hold every line in memory meanwhile.
    """

    def __init__(self, pattern: str, auditor: LineAuditor, resolve: beam.PTransform, piece_bytes: int | None = PIECE_BYTES):
        super().__init__()
        self._pattern = pattern
        self._auditor = auditor
        self._resolve = resolve
        self._piece_bytes = piece_bytes

    def expand(self, pbegin):
        return (
            pbegin
            | "ReadLogLines" >> ReadLogLines(self._pattern, piece_bytes=self._piece_bytes)
            | "DnsQuestions" >> beam.FlatMap(_dns_questions, self._auditor)
            | "Resolve" >> self._resolve
        )


def _dns_questions(batch, auditor: LineAuditor) -> set[str]:
    if followed_fields(auditor, batch) or not is_line_batch(batch):
        return set()
    return auditor.dns_questions(batch)


class AuditLogLines(beam.PTransform):
    """Line batches -> {"verdict_batches", "dead_letters", "tally"}, and "dns_answers" with
    live DNS.

    `robots` holds the robots table as `host -> HostVersions` dicts, read as a singleton: the
    snapshot read at launch in a batch run, each refresh in turn in a streaming one. `dns` is
    None (identity decided with DNS off), the `(address, DnsAnswer)` pairs a batch run resolved
    before the audit, or the settings of the lookups a streaming run asks as lines arrive.

    Verdicts travel as one list per batch of lines: Beam's cost per element and step is of the
    order of auditing a line, and every consumer (the sinks, the summaries, the crawl-delay
    audit) works through a list as cheaply as through single elements.

    `fetches` is the one dict `FetchKey -> FetchHistory` of a batch run's robots.txt fetches
    (`pipeline.graph.robots_fetches`); None: each verdict is judged as when no fetch was seen.

    The DNS answers are a dict side input rather than joined to the lines by address: the join
    was slower at every size measured, for a lower peak memory only at a million distinct
    addresses (`bench/dns_join_bench.py`; the figures are in bench/README.md)."""

    def __init__(
        self,
        auditor: LineAuditor,
        robots: beam.PCollection,
        dns: beam.PCollection | DnsSettings | None = None,
        fetches: beam.PCollection | None = None,
        columnar: bool = False,
    ):
        super().__init__()
        if columnar and isinstance(dns, DnsSettings):
            raise ValueError("lines looked up as they arrive are audited line by line")
        self._auditor = auditor
        self._robots = robots
        self._dns = dns
        self._fetches = fetches
        self._columnar = columnar

    def expand(self, batches):
        side_inputs = [beam.pvalue.AsSingleton(self._robots)]
        if isinstance(self._dns, DnsSettings):
            audit = AuditWithDnsFn(self._auditor, self._dns)
        else:
            audit = (AuditBlockFn if self._columnar else AuditLineBatchFn)(self._auditor)
            if self._dns is not None:
                side_inputs.append(beam.pvalue.AsDict(self._dns))
        followed = {} if self._fetches is None else {"fetches": beam.pvalue.AsSingleton(self._fetches)}
        verdicts_type = pa.Table if self._columnar else VerdictBatch
        audit_batches = beam.ParDo(audit, *side_inputs, **followed).with_output_types(verdicts_type)
        audited = batches | "AuditLineBatches" >> audit_batches.with_outputs(
            DEAD_LETTERS_TABLE, TALLY, DNS_ANSWERS_TABLE, REFERRAL_COUNTS, main=VERDICT_BATCHES
        )
        outputs = {
            VERDICT_BATCHES: audited[VERDICT_BATCHES],
            DEAD_LETTERS_TABLE: audited[DEAD_LETTERS_TABLE],
            TALLY: audited[TALLY],
            REFERRAL_COUNTS: audited[REFERRAL_COUNTS],
        }
        if isinstance(self._dns, DnsSettings) and isinstance(self._dns.resolver, LiveResolver):
            outputs[DNS_ANSWERS_TABLE] = audited[DNS_ANSWERS_TABLE]
        return outputs
