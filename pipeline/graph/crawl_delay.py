"""Crawl-delay compliance as a Beam transform: verdicts in; violations, window rows and late
requests out. The rule itself is `matcher.crawl_delay`; this module decides *when* a request's
predecessor is known for certain.

Exactness. The result must equal sorting all requests of a key by time and comparing
neighbours, whatever order they arrive in and wherever window boundaries fall. So each key
(host, crawler, operator, identity) buffers its requests in state and releases them only once
the watermark guarantees that nothing earlier can still come: window by window, when the
watermark passes the window's end plus `allowed_lateness`. A release sorts what it frees and
pairs the first request with the last one released before, which the state keeps; a pair that
straddles a window boundary is therefore an ordinary pair. A released window is complete, so
its aggregate row is written once and is final: sinks never have to replace an earlier pane.

    window 10:00-11:00, allowed lateness 15 m, requests of one key arriving in this order:
      10:59:58   buffered; release timer set for 11:15
      11:00:03   buffered (next window)
      10:59:50   buffered: late for the watermark, but within the allowed lateness
      watermark 11:15 -> release 10:59:50, 10:59:58 (gap 8 s); window 10:00 row written
      watermark 12:15 -> release 11:00:03, paired with 10:59:58 (gap 5 s)
      10:59:59   arrives now: its window was released -> dead letter, counted

Alternatives rejected: fixed windows with the previous window's last request carried in need a
chain through empty windows and emit replacement panes for late data; session windows take one
gap for all crawlers and hosts; grouping per window loses the pair across a boundary.

Late data. A request earlier than the last cut its key released cannot be placed without
changing rows already written. It is counted (`late_requests`) and goes to the dead-letter
table with reason `late-beyond-allowed-lateness` and its verdict as JSON; its verdict itself is
written as usual, since verdicts do not depend on order. A request behind the watermark whose
window its key has not released yet (a key that was quiet) is still placed exactly.

Bounded input. A batch watermark jumps from the start to the end of time in one step, so a
release per window would re-read a key's whole buffer once per window (measured: 50,000
requests of 20 keys over 72 hourly windows, 100 s against 11 s for the same pipeline without the
step), and nothing can be late. So a batch run groups each key's requests and releases them
once, with `crawl_delay.batch_rows`, which gives the rows `release` would. Only packed requests
are grouped, never the verdicts. A local runner holds a grouped collection whole in its own
memory, and then in a worker's as it hands it over: a 10M-line run's packs grew the launching
process by 170 MB. So a local run groups them on disk (`spill`, a folder on the local machine):
each bundle appends the packs to one file per shard of the keys, only the files' names are
grouped, and the release reads one shard at a time.

State per key after a release: the last request and the cut. Records leave with the timer's
timestamp, where the watermark hold sits, so no downstream window sees them as late.
"""
from __future__ import annotations

import json
import os
import uuid
import zlib
from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import BinaryIO

import apache_beam as beam
from apache_beam import coders, typehints
from apache_beam.metrics import Metrics
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.transforms import window
from apache_beam.transforms.window import GlobalWindows
from apache_beam.utils.timestamp import Timestamp

from matcher import crawl_delay, records
from matcher.crawl_delay import CrawlRequest
from matcher.records import DEAD_LETTERS_TABLE, VIOLATIONS_TABLE, WINDOWS_TABLE
from matcher.line_auditor import dead_letter
from pipeline.graph.sinks import beam_timestamp

LATE_REASON = "late-beyond-allowed-lateness"


class CrawlDelayAudit(beam.PTransform):
    """Verdict batches -> {"crawl_delay_violations", "crawl_delay_windows", "dead_letters"}.

    On a stream each verdict is stamped with its log time, so the watermark orders the releases."""

    def __init__(self, window: timedelta, allowed_lateness: timedelta, bounded: bool, spill: str | None = None):
        super().__init__()
        if window <= timedelta(0) or allowed_lateness < timedelta(0):
            raise ValueError("the window must be positive and the allowed lateness not negative")
        if spill is not None and not bounded:
            raise ValueError("only bounded input can be grouped on disk")
        self._window = window
        self._lateness = allowed_lateness
        self._bounded = bounded
        self._spill = spill

    def expand(self, verdict_batches):
        if self._bounded:
            packs = verdict_batches | "PackRequestsByCrawler" >> beam.ParDo(PackRequestsFn()).with_output_types(
                typehints.KV[typehints.Any, bytes]
            )
            if self._spill is None:
                grouped, release = packs | "GroupByCrawler" >> beam.GroupByKey(), ReleaseAllFn(self._window)
            else:
                files = packs | "SpillByShard" >> beam.ParDo(SpillPacksFn(self._spill))
                grouped, release = files | "GroupSpilledFiles" >> beam.GroupByKey(), ReleaseSpilledFn(self._window)
            released = grouped | "ReleaseInEventTimeOrder" >> beam.ParDo(release).with_outputs(
                WINDOWS_TABLE, main=VIOLATIONS_TABLE
            )
            nothing_late = verdict_batches.pipeline | "NoLateRequests" >> beam.Create([])
            return {
                VIOLATIONS_TABLE: released[VIOLATIONS_TABLE],
                WINDOWS_TABLE: released[WINDOWS_TABLE],
                DEAD_LETTERS_TABLE: nothing_late,
            }
        released = (
            verdict_batches
            | "StampAndKeyByCrawler" >> beam.FlatMap(stamped_by_crawler)
            | "ReleaseInEventTimeOrder"
            >> beam.ParDo(ReleaseInOrderFn(self._window, self._lateness)).with_outputs(
                WINDOWS_TABLE, DEAD_LETTERS_TABLE, main=VIOLATIONS_TABLE
            )
        )
        return {
            VIOLATIONS_TABLE: released[VIOLATIONS_TABLE],
            WINDOWS_TABLE: released[WINDOWS_TABLE],
            DEAD_LETTERS_TABLE: released[DEAD_LETTERS_TABLE],
        }


def stamped_by_crawler(verdicts: list[dict]) -> Iterator[window.TimestampedValue]:
    for verdict in verdicts:
        yield window.TimestampedValue((crawl_delay.key_of(verdict), verdict), beam_timestamp(verdict["ts"]))


def request_fields(request: CrawlRequest) -> tuple:
    """A request as primitives any Beam coder writes compactly."""
    version = request.robots_version
    if version is not None:
        version = (crawl_delay.micros(version["effective_from"]), version["status"], version["sha256"])
    return (crawl_delay.micros(request.ts), request.source, request.crawl_delay, request.crawl_delay_line,
            version, request.honours_crawl_delay)


def request_from_fields(fields: tuple) -> CrawlRequest:
    ts, source, delay, delay_line, version, honours = fields
    if version is not None:
        effective_from, status, sha256 = version
        version = {"effective_from": crawl_delay.from_micros(effective_from), "status": status, "sha256": sha256}
    return CrawlRequest(crawl_delay.from_micros(ts), source, delay, delay_line, version, honours)


class CrawlRequestCoder(coders.Coder):
    """A `CrawlRequest` as a tuple of primitives, a third of its pickle: streaming state holds every
    request of a key until its window is released."""

    _fields = coders.FastPrimitivesCoder()

    def encode(self, request: CrawlRequest) -> bytes:
        return self._fields.encode(request_fields(request))

    def decode(self, encoded: bytes) -> CrawlRequest:
        return request_from_fields(self._fields.decode(encoded))

    def is_deterministic(self) -> bool:
        return True


# A batch run groups every crawler request before releasing any, and a local runner holds the
# grouped values decoded in memory. So requests travel packed, up to `_PACK` of one key per value:
# what they share (log file, delay, robots version) is written once, leaving fifteen to thirty
# bytes per request where a verdict would take kilobytes and a lone encoded request two hundred.
# A pack is (shared, rows): shared holds (file, delay, delay line, robots version as primitives,
# honours), rows three values a request (ts in micros, line number or None, index in shared).
# Neither end makes an object per request: packing reads the verdict's fields, and the release
# (`crawl_delay.batch_rows`) works on the primitives.
_PACK = 512
# Requests waiting to be packed, across keys: some 120 bytes each, twelve megabytes in all. Fewer
# would mean more and smaller packs, and each value grouped has its cost in the runner.
_PENDING_LIMIT = 100_000
_PRIMITIVES = coders.FastPrimitivesCoder()


class _Pending:
    """The requests of one key waiting to be packed, already in the shape of a pack."""

    __slots__ = ("shared", "rows")

    def __init__(self):
        self.shared: dict[tuple, int] = {}  # as the verdicts have it -> index
        self.rows: list = []

    def add(self, verdict: dict) -> None:
        file, line = _split_source(verdict["source"])
        version = verdict["robots_version"]
        if version is not None:
            version = (version["effective_from"], version["status"], version["sha256"])
        shared = (file, verdict["crawl_delay"], verdict["crawl_delay_line"], version, verdict["honours_crawl_delay"])
        self.rows += (crawl_delay.micros(verdict["ts"]), line, self.shared.setdefault(shared, len(self.shared)))

    def __len__(self) -> int:
        return len(self.rows) // 3

    def packed(self) -> bytes:
        shared = []
        for file, delay, delay_line, version, honours in self.shared:
            if version is not None:
                effective_from, status, sha256 = version
                version = (crawl_delay.micros(effective_from), status, sha256)
            shared.append((file, delay, delay_line, version, honours))
        return _PRIMITIVES.encode((tuple(shared), tuple(self.rows)))


def unpack_requests(packs: Iterable[bytes]) -> tuple[list[crawl_delay.BatchRequest], list[crawl_delay.Shared]]:
    """The requests of packs, as `crawl_delay.batch_rows` takes them."""
    requests: list[crawl_delay.BatchRequest] = []
    shared: list[crawl_delay.Shared] = []
    for packed in packs:
        pack_shared, rows = _PRIMITIVES.decode(packed)
        base, files = len(shared), []
        for file, delay, delay_line, version, honours in pack_shared:
            if version is not None:
                effective_from, status, sha256 = version
                version = {
                    "effective_from": crawl_delay.from_micros(effective_from), "status": status, "sha256": sha256
                }
            files.append(file)
            shared.append((delay, delay_line, version, honours))
        fields = iter(rows)
        requests += [
            (ts, files[index] if line is None else f"{files[index]}:{line}", base + index)
            for ts, line, index in zip(fields, fields, fields)
        ]
    return requests, shared


def _split_source(source: str) -> tuple[str, int | None]:
    """`path:123` as (path, 123), so a file's name is packed once; any other source whole."""
    file, _, line = source.rpartition(":")
    # Only a line that reads back the same ("7", not "07" or "٧") is split off.
    if file and line.isdigit() and line.isascii() and (line[0] != "0" or line == "0"):
        return file, int(line)
    return source, None


class PackRequestsFn(beam.DoFn):
    """Verdict batches -> (key, packed requests of that key), for bounded input."""

    def start_bundle(self):
        self._pending: dict[crawl_delay.Key, _Pending] = {}
        self._count = 0

    def process(self, verdicts):
        for verdict in verdicts:
            key = crawl_delay.key_of(verdict)
            pending = self._pending.get(key)
            if pending is None:
                pending = self._pending[key] = _Pending()
            pending.add(verdict)
            self._count += 1
            if len(pending) >= _PACK:
                self._count -= len(pending)
                yield key, self._pending.pop(key).packed()
            elif self._count >= _PENDING_LIMIT:
                yield from self._packed()

    def finish_bundle(self):
        for packed in self._packed():
            yield GlobalWindows.windowed_value(packed)

    def _packed(self):
        pending, self._pending, self._count = self._pending, {}, 0
        for key, requests in pending.items():
            yield key, requests.packed()


# Shards of the keys a local batch run groups on disk: a shard's packs are what the release holds
# in memory at once, a 64th of all: 9.6 MB were spilled at 1M lines, so 1.5 MB a shard at 10M.
SPILL_SHARDS = 64
_RECORD_LENGTH = 4  # bytes of the length before each (key, packed) record of a spilled file


def shard_of(key: crawl_delay.Key) -> int:
    """The spill shard of a key, the same in every process (unlike `hash`, which is salted)."""
    return zlib.crc32(_PRIMITIVES.encode(key)) % SPILL_SHARDS


class SpillPacksFn(beam.DoFn):
    """(key, packed requests) -> (shard, file) for each file a bundle wrote under `folder`: the
    bundle's packs of that shard's keys, as length-prefixed records."""

    def __init__(self, folder: str):
        self._folder = folder
        self.spilled = Metrics.counter(self.__class__, "spilled_bytes")

    def start_bundle(self):
        self._files: dict[int, BinaryIO] = {}

    def process(self, element):
        record = _PRIMITIVES.encode(element)
        shard = shard_of(element[0])
        spilled = self._files.get(shard)
        if spilled is None:
            name = f"{shard:02d}-{uuid.uuid4().hex}"
            spilled = self._files[shard] = open(os.path.join(self._folder, name), "wb")
        spilled.write(len(record).to_bytes(_RECORD_LENGTH, "big") + record)
        self.spilled.inc(_RECORD_LENGTH + len(record))

    def finish_bundle(self):
        for shard, spilled in self._files.items():
            spilled.close()
            yield GlobalWindows.windowed_value((shard, spilled.name))


def spilled_packs(paths: Iterable[str]) -> dict[crawl_delay.Key, list[bytes]]:
    """The packs of spilled files by key."""
    packs: dict[crawl_delay.Key, list[bytes]] = {}
    for path in paths:
        with open(path, "rb") as spilled:
            while length := spilled.read(_RECORD_LENGTH):
                key, packed = _PRIMITIVES.decode(spilled.read(int.from_bytes(length, "big")))
                packs.setdefault(key, []).append(packed)
    return packs


class ReleaseAllFn(beam.DoFn):
    """(key, all its packed requests) -> violations and window rows, for bounded input."""

    def __init__(self, window: timedelta):
        self._window = window
        self.requests = Metrics.counter(self.__class__, "requests")
        self.violations = Metrics.counter(self.__class__, "violations")
        self.window_rows = Metrics.counter(self.__class__, "window_rows")

    def process(self, element):
        yield from self._release(*element)

    def _release(self, key, packs):
        requests, shared = unpack_requests(packs)
        violations, windows = crawl_delay.batch_rows(key, requests, shared, self._window)
        self.requests.inc(len(requests))
        # Counted as the streaming release counts: a counter no row touched stays unset.
        if violations:
            self.violations.inc(len(violations))
        self.window_rows.inc(len(windows))
        yield from violations
        for row in windows:
            yield beam.pvalue.TaggedOutput(WINDOWS_TABLE, row)


class ReleaseSpilledFn(ReleaseAllFn):
    """(shard, its spilled files) -> violations and window rows of the shard's keys."""

    def process(self, element):
        _, paths = element
        packs = spilled_packs(paths)
        while packs:
            yield from self._release(*packs.popitem())


def released_rows(key, steps, window: timedelta, violations, window_rows):
    """The violation rows (main output) and window rows of released steps, counted."""
    for step in steps:
        if step.violation:
            violations.inc()
            yield crawl_delay.violation_record(key, step)
    for row in crawl_delay.window_records(key, steps, window):
        window_rows.inc()
        yield beam.pvalue.TaggedOutput(WINDOWS_TABLE, row)


class ReleaseInOrderFn(beam.DoFn):
    """Buffers a key's requests and releases them in event-time order as the watermark passes
    (see the module docstring)."""

    PENDING = BagStateSpec("pending", CrawlRequestCoder())
    PREVIOUS = ReadModifyWriteStateSpec("previous", CrawlRequestCoder())
    CLOSED = ReadModifyWriteStateSpec("closed", coders.VarIntCoder())  # micros; earlier is late
    ARMED = ReadModifyWriteStateSpec("armed", coders.VarIntCoder())  # micros the timer is set for
    RELEASE = TimerSpec("release", TimeDomain.WATERMARK)

    def __init__(self, window: timedelta, allowed_lateness: timedelta):
        self._window = window
        self._lateness = allowed_lateness
        self.requests = Metrics.counter(self.__class__, "requests")
        self.late = Metrics.counter(self.__class__, "late_requests")
        self.violations = Metrics.counter(self.__class__, "violations")
        self.window_rows = Metrics.counter(self.__class__, "window_rows")

    def process(
        self,
        element,
        pending=beam.DoFn.StateParam(PENDING),
        closed=beam.DoFn.StateParam(CLOSED),
        armed=beam.DoFn.StateParam(ARMED),
        release=beam.DoFn.TimerParam(RELEASE),
    ):
        _, verdict = element
        request = crawl_delay.request_of(verdict)
        cut = closed.read()
        if cut is not None and crawl_delay.micros(request.ts) < cut:
            self.late.inc()
            yield beam.pvalue.TaggedOutput(DEAD_LETTERS_TABLE, late_letter(verdict, cut))
            return
        self.requests.inc()
        pending.add(request)
        self._arm(request, armed, release)

    @on_timer(RELEASE)
    def on_release(
        self,
        key=beam.DoFn.KeyParam,
        fired=beam.DoFn.TimestampParam,
        pending=beam.DoFn.StateParam(PENDING),
        previous=beam.DoFn.StateParam(PREVIOUS),
        closed=beam.DoFn.StateParam(CLOSED),
        armed=beam.DoFn.StateParam(ARMED),
        release=beam.DoFn.TimerParam(RELEASE),
    ):
        cut = fired.micros - self._micros(self._lateness)
        freed = crawl_delay.release(previous.read(), pending.read(), crawl_delay.from_micros(cut))
        pending.clear()
        armed.clear()
        for request in freed.held:
            pending.add(request)
        if freed.held:
            self._arm(freed.held[0], armed, release)
        closed.write(cut)
        if freed.steps:
            previous.write(freed.steps[-1].request)
        yield from released_rows(key, freed.steps, self._window, self.violations, self.window_rows)

    def _arm(self, request: CrawlRequest, armed, release) -> None:
        """Set the release timer for the request's window, unless it is set for earlier."""
        window_end = crawl_delay.window_end(crawl_delay.window_start(request.ts, self._window), self._window)
        at = crawl_delay.micros(window_end) + self._micros(self._lateness)
        current = armed.read()
        if current is None or at < current:
            armed.write(at)
            release.set(Timestamp(micros=at))

    @staticmethod
    def _micros(span: timedelta) -> int:
        return span // timedelta(microseconds=1)


def late_letter(verdict: dict, cut_micros: int) -> dict:
    cut = records.rfc3339(crawl_delay.from_micros(cut_micros))
    return dead_letter(
        verdict["source"],
        LATE_REASON,
        f"request at {records.rfc3339(verdict['ts'])} arrived after its crawler's requests on this host"
        f" were released up to {cut}; its crawl-delay gap cannot be placed (the verdict is kept)",
        json.dumps(records.to_json_ready(verdict, records.VERDICTS), ensure_ascii=False),
    )
