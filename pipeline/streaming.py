"""The audit on continuous logs: streaming sources, the refreshing robots table, live DNS.

Its sinks, like the batch ones, are in `pipeline/sinks.py`.

Every source yields the batches the batch graph reads, `(origin, first line number, lines)`, so
the per-line audit (`AuditLineBatchFn`) and the crawl-delay transform are shared with batch runs.

Event time and watermarks. Verdicts carry the log line's time as their timestamp. The watermark
comes from the source:

- a folder (`WatchLogFolder`): each new file is stamped with the time of its first request, and
  after each poll the watermark moves to the earliest such time among the files it found. Files
  must appear complete (written elsewhere, then moved in, as log rotation does); each is read once.
- Pub/Sub: the publish time, or the log time when the publisher puts it in an attribute
  (`--pubsub-timestamp-attribute`);
- Kafka: the record's CreateTime, which the log shipper should set to the log time.

Late data: a request whose window its crawler has already released is counted and sent to the
dead-letter table (`pipeline/crawl_delay.py`); nothing is dropped for being late.

The robots table is re-read every `--robots-refresh` (the slowly-updating side input pattern):
a version added to the table applies to requests audited after the next refresh, without a
restart. A table that fails to load keeps the previous one in force and is counted.

Reverse DNS (`--dns live`) is asked by the worker auditing a batch, through one `CachingResolver`
per worker process: an address is asked once per `--dns-ttl`, a bundle waits for new lookups at
most one lookup budget (`--dns-timeout` x (`--dns-retries` + 1)) in all, and an address still
unanswered then is `unverified` for that batch. `--dns snapshot:FILE` answers from the file.
"""
from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

import apache_beam as beam
from apache_beam import coders
from apache_beam.io import fileio
from apache_beam.io.filesystem import BeamIOError, FileMetadata
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.kafka import ReadFromKafka
from apache_beam.io.watch import PollFn, PollResult, Watch, after_total_of, never
from apache_beam.metrics import Metrics
from apache_beam.transforms import trigger, window
from apache_beam.transforms.periodicsequence import PeriodicImpulse
from apache_beam.utils.shared import Shared
from apache_beam.utils.timestamp import Timestamp

from matcher.history import RobotsTableError
from matcher.records import DEAD_LETTERS_TABLE, DNS_ANSWERS_TABLE, VERDICTS_TABLE
from matcher.reverse_dns import DnsAnswer
from pipeline.auditing import HostVersions, LineAuditor, host_versions
from pipeline.dns import DnsSettings, count_trouble
from pipeline.logformats import LogParseError, parser_for
from pipeline.resolvers import CachingResolver, LiveResolver, answer_to_json
from pipeline.robots_table import read_robots_table
from pipeline.sinks import beam_timestamp
from pipeline.transforms import LINES_PER_BATCH, TALLY, AuditLineBatchFn, line_batches

_LOG = logging.getLogger(__name__)
# How far into a new file to look for a line that parses, to stamp the file with its time.
_FIRST_REQUEST_SEARCH = 100


# ---- Sources


class LogFolderPoll(PollFn):
    """One poll of a log folder: every file matching the glob, stamped with its first request's
    time (its last-modified time when none of its first lines parses). `Watch` keeps the new."""

    def __init__(self, log_format: str, default_host: str | None, field_map: dict | None):
        self._parser_args = (log_format, default_host, field_map)
        self._stamps: dict[str, Timestamp] = {}
        self.new_files = Metrics.counter(self.__class__, "new_files")
        self.stamped_by_mtime = Metrics.counter(self.__class__, "files_stamped_by_mtime")

    def __call__(self, pattern: str) -> PollResult:
        stamped = [window.TimestampedValue(found.path, self._stamp(found)) for found in matching_files(pattern)]
        # Only files still in the folder keep their stamp: a job that runs for months sees
        # rotated logs come and go, and must not remember every one.
        self._stamps = {value.value: value.timestamp for value in stamped}
        return PollResult.incomplete(stamped)

    def default_output_coder(self):
        return coders.StrUtf8Coder()

    def _stamp(self, found: FileMetadata) -> Timestamp:
        stamp = self._stamps.get(found.path)
        if stamp is None:
            self.new_files.inc()
            try:
                first = first_request_time(found.path, parser_for(*self._parser_args))
            except OSError:
                first = None  # unreadable for now; reading it will report the error
            if first is None:
                self.stamped_by_mtime.inc()
                stamp = Timestamp(found.last_updated_in_seconds)
            else:
                stamp = beam_timestamp(first)
            self._stamps[found.path] = stamp
        return stamp


def matching_files(pattern: str) -> list[FileMetadata]:
    try:
        return FileSystems.match([pattern])[0].metadata_list
    except BeamIOError:
        return []  # the folder is empty or not there yet: nothing new this time


def first_request_time(path: str, parse, search: int = _FIRST_REQUEST_SEARCH) -> datetime | None:
    with FileSystems.open(path) as handle:
        for _, raw in zip(range(search), iter(handle.readline, b"")):
            try:
                return parse(raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace")).ts
            except LogParseError:
                continue
    return None


class WatchLogFolder(beam.PTransform):
    """New files matching a glob, as line batches, until `watch_for` has passed (None: forever)."""

    def __init__(self, pattern: str, poll: LogFolderPoll, interval: timedelta, watch_for: timedelta | None):
        super().__init__()
        self._pattern = pattern
        self._poll = poll
        self._interval = interval.total_seconds()
        self._termination = never() if watch_for is None else after_total_of(watch_for.total_seconds())

    def expand(self, pbegin):
        return (
            pbegin
            | "LogFolderPattern" >> beam.Create([self._pattern])
            | "WatchForNewFiles" >> Watch(self._poll, poll_interval=self._interval, termination=self._termination)
            | "NewFilePaths" >> beam.Map(lambda pattern_and_path: pattern_and_path[1])
            | "OpenNewFiles" >> fileio.ReadMatches()
            | "BatchLines" >> beam.FlatMap(line_batches, LINES_PER_BATCH)
        )


class ReadPubSubLines(beam.PTransform):
    """Pub/Sub messages of one or more log lines -> line batches named `pubsub:<message id>`."""

    def __init__(self, subscription: str, timestamp_attribute: str | None):
        super().__init__()
        self._subscription = subscription
        self._timestamp_attribute = timestamp_attribute

    def expand(self, pbegin):
        return (
            pbegin
            | "ReadPubSub" >> beam.io.ReadFromPubSub(
                subscription=self._subscription, with_attributes=True, timestamp_attribute=self._timestamp_attribute
            )
            | "PubSubLines" >> beam.Map(pubsub_batch)
        )


def pubsub_batch(message) -> tuple[str, int, list[str]]:
    return f"pubsub:{message.message_id}", 1, _lines(message.data)


class ReadKafkaLines(beam.PTransform):
    """Kafka records of one or more log lines -> line batches named `kafka:<topic>/<partition>@<offset>`.

    `ReadFromKafka` is Java (cross-language): building the graph asks an expansion service, the
    given address or else one Beam starts from its jar (which needs Java and Maven Central).
    """

    def __init__(self, bootstrap: str, topic: str, consumer_config: dict, expansion_service: str | None):
        super().__init__()
        self._config = {"bootstrap.servers": bootstrap, **consumer_config}
        self._topic = topic
        self._expansion_service = expansion_service

    def expand(self, pbegin):
        return (
            pbegin
            | "ReadKafka" >> ReadFromKafka(
                consumer_config=self._config,
                topics=[self._topic],
                with_metadata=True,
                timestamp_policy=ReadFromKafka.create_time_policy,
                expansion_service=self._expansion_service,
            )
            | "KafkaLines" >> beam.Map(kafka_batch)
        )


def kafka_batch(record) -> tuple[str, int, list[str]]:
    """A record of `ReadFromKafka(with_metadata=True)`: a Row with topic, partition, offset, value."""
    return f"kafka:{record.topic}/{record.partition}@{record.offset}", 1, _lines(record.value)


def _lines(data: bytes) -> list[str]:
    # Split at line feeds only, as files are read: str.splitlines would also cut at form feeds
    # and U+2028, which can sit inside a logged header.
    lines = data.decode("utf-8", "backslashreplace").split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


# ---- The robots table, refreshed


def robots_snapshot(location: str) -> dict[str, HostVersions]:
    """The whole robots table as the audit's side input holds it: host -> its versions."""
    by_host: dict[str, list] = {}
    for version in read_robots_table(location):
        by_host.setdefault(version.host, []).append(version)
    return {host: host_versions(versions) for host, versions in by_host.items()}


class ReloadRobotsTableFn(beam.DoFn):
    """A fresh snapshot per tick; a table that does not load keeps the previous one in force."""

    def __init__(self, location: str):
        self._location = location
        self.reloads = Metrics.counter(self.__class__, "reloads")
        self.failures = Metrics.counter(self.__class__, "failed_reloads")

    def process(self, tick):
        try:
            snapshot = robots_snapshot(self._location)
        except (RobotsTableError, OSError) as error:
            self.failures.inc()
            _LOG.error("robots table not reloaded, the previous one stays in force: %s", error)
            return
        self.reloads.inc()
        yield snapshot


class RefreshRobotsTable(beam.PTransform):
    """One robots snapshot per `interval`, as a global-window stream whose latest pane wins;
    read it with `AsSingleton`."""

    def __init__(self, location: str, interval: timedelta):
        super().__init__()
        self._location = location
        self._interval = interval.total_seconds()

    def expand(self, pbegin):
        return (
            pbegin
            | "RobotsRefreshTicks" >> PeriodicImpulse(start_timestamp=Timestamp.now(), fire_interval=self._interval)
            | "ReloadRobotsTable" >> beam.ParDo(ReloadRobotsTableFn(self._location))
            | "EachReloadFires" >> beam.WindowInto(
                window.GlobalWindows(),
                trigger=trigger.Repeatedly(trigger.AfterCount(1)),
                accumulation_mode=trigger.AccumulationMode.DISCARDING,
            )
            # Two ticks can share a pane; a singleton view must see one table.
            | "LatestRobotsTable" >> beam.combiners.Latest.Globally().without_defaults()
        )


# ---- The audit on a stream


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
