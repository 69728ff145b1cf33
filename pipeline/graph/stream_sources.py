"""Streaming sources of log lines: a watched folder, Pub/Sub, Kafka.

Every source yields the batches the batch graph reads, `(origin, first line number, lines)`, so
the per-line audit and the crawl-delay transform are shared with batch runs. The watermark comes
from the source:

- a folder (`WatchLogFolder`): each new file is stamped with the time of its first request, and
  after each poll the watermark moves to the earliest such time among the files it found. Files
  must appear complete (written elsewhere, then moved in, as log rotation does); each is read once.
  Only regular files are read: a FIFO or device among them is passed over, never opened.
- Pub/Sub: the publish time, or the log time when the publisher puts it in an attribute
  (`--pubsub-timestamp-attribute`);
- Kafka: the record's CreateTime, which the log shipper should set to the log time.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, timedelta
from itertools import islice

import apache_beam as beam
from apache_beam import coders
from apache_beam.io import fileio
from apache_beam.io.filesystem import BeamIOError, FileMetadata
from apache_beam.io.filesystems import FileSystems
from apache_beam.io.kafka import ReadFromKafka
from apache_beam.io.watch import PollFn, PollResult, Watch, after_total_of, never
from apache_beam.metrics import Metrics
from apache_beam.transforms import window
from apache_beam.utils.timestamp import Timestamp

from matcher.logformats import AUTO, LogParseError, parser_for
from matcher.logformats.detect import SAMPLE_LINES
from matcher.logformats.inference import InferredFormat, detected_format
from pipeline.evidence.confined import is_url
from pipeline.graph.read_logs import (
    LINES_PER_BATCH, LONG_LINE_PREFIX_BYTES, MAX_LINE_BYTES, LongLine, decoded, file_lines, first_lines, line_batches,
)
from pipeline.graph.sinks import beam_timestamp
from matcher.line_auditor import UNKNOWN_FORMAT

# How far into a new file to look for a line that parses, to stamp the file with its time.
_FIRST_REQUEST_SEARCH = 100


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

    def _parser(self, path: str):
        """The parser of a new file: the run's format, or with `auto` the one its first lines are in."""
        log_format, default_host, field_map = self._parser_args
        if log_format == AUTO:
            detected = detected_format(first_lines(path, SAMPLE_LINES)[0])
            if detected is None:
                return _never_parses
            log_format = detected.name
            if isinstance(detected, InferredFormat):
                field_map = detected.field_map
        return parser_for(log_format, default_host, field_map)

    def _stamp(self, found: FileMetadata) -> Timestamp:
        stamp = self._stamps.get(found.path)
        if stamp is None:
            self.new_files.inc()
            try:
                first = first_request_time(found.path, self._parser(found.path))
            except OSError:
                first = None  # unreadable for now; reading it will report the error
            if first is None:
                self.stamped_by_mtime.inc()
                stamp = Timestamp(found.last_updated_in_seconds)
            else:
                stamp = beam_timestamp(first)
            self._stamps[found.path] = stamp
        return stamp


def _never_parses(line: str):
    raise LogParseError(UNKNOWN_FORMAT, "no log format reads this file's first lines")


def matching_files(pattern: str) -> list[FileMetadata]:
    """The files matching `pattern`; on local disk only regular files (a link to one is fine): a
    FIFO would block the job on opening it, and a device would never end."""
    try:
        found = FileSystems.match([pattern])[0].metadata_list
    except BeamIOError:
        return []  # the folder is empty or not there yet: nothing new this time
    return [metadata for metadata in found if is_url(metadata.path) or _is_regular(metadata.path)]


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # gone since the listing


def first_request_time(path: str, parse, search: int = _FIRST_REQUEST_SEARCH) -> datetime | None:
    with closing(file_lines(path)) as lines:
        for line in islice(lines, search):
            if line is None:
                continue
            try:
                return parse(line).ts
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
            | "PubSubLines" >> beam.FlatMap(pubsub_batches)
        )


def pubsub_batches(message) -> Iterator[tuple[str, int, list[str]] | LongLine]:
    return message_batches(f"pubsub:{message.message_id}", message.data)


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
            | "KafkaLines" >> beam.FlatMap(kafka_batches)
        )


def kafka_batches(record) -> Iterator[tuple[str, int, list[str]] | LongLine]:
    """A record of `ReadFromKafka(with_metadata=True)`: a Row with topic, partition, offset, value."""
    return message_batches(f"kafka:{record.topic}/{record.partition}@{record.offset}", record.value)


def message_batches(origin: str, data: bytes) -> Iterator[tuple[str, int, list[str]] | LongLine]:
    """The line batch of one message, cut where a line over `MAX_LINE_BYTES` stands instead as
    its `LongLine`, as a file's batches are."""
    first, lines = 1, []
    for number, raw in enumerate(_raw_lines(data), start=1):
        if len(raw) <= MAX_LINE_BYTES:
            lines.append(decoded(raw))
            continue
        if lines:
            yield origin, first, lines
        yield LongLine(origin, number, len(raw), decoded(raw[:LONG_LINE_PREFIX_BYTES]))
        first, lines = number + 1, []
    if lines:
        yield origin, first, lines


def _raw_lines(data: bytes) -> list[bytes]:
    # Split at line feeds only, as files are read: str.splitlines would also cut at form feeds
    # and U+2028, which can sit inside a logged header.
    lines = data.split(b"\n")
    if len(lines) > 1 and lines[-1] == b"":
        lines.pop()
    return [line.removesuffix(b"\r") for line in lines]
