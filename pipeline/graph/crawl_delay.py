"""Crawl-delay compliance as a Beam transform: verdicts in; violations, window rows, back-off
findings and late requests out. The rules themselves are `matcher.crawl_delay` and
`matcher.backoff`; this module decides *when* a request's predecessor is known for certain.

Back-off reads the same sequences: each released request carries its back-off answer, so the
findings come from the requests Crawl-delay gathers, with no grouping of their own.

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
release per window would re-read a key's whole buffer once per window (ten times slower on
hourly windows; bench/README.md), and nothing can be late. So a batch run groups each key's requests and releases them
once, with the same `crawl_delay.rows`. Only packed requests are grouped, never the verdicts.
The grouping is a parameter with `GroupByKey`'s contract: a local runner, which holds a grouped
collection whole in its own memory, passes one that groups on disk (`pipeline/local/spill.py`).

State per key after a release: the last request and the cut, and for back-off the last request
it counts with the times of those in the hour before it (`backoff.Carried`). A 429 or 503 that is
the last request released waits for the next release to be judged; when nothing else is held,
the key's timer is set to the end of time, so the end of a stream judges it with no next request,
as a batch run does. Records leave with the timer's timestamp, where the watermark hold sits, so
no downstream window sees them as late.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import timedelta

import apache_beam as beam
from apache_beam import coders, typehints
from apache_beam.metrics import Metrics
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.transforms import window
from apache_beam.transforms.window import GlobalWindow, GlobalWindows
from apache_beam.utils.timestamp import Timestamp

from matcher import backoff, crawl_delay, records
from matcher.crawl_delay import CrawlRequest
from matcher.records import BACKOFF_TABLE, DEAD_LETTERS_TABLE, VIOLATIONS_TABLE, WINDOWS_TABLE
from matcher.line_auditor import dead_letter
from pipeline.columnar.selections import crawl_requests
from pipeline.graph.sinks import beam_timestamp

LATE_REASON = "late-beyond-allowed-lateness"
# A stream ends when the watermark reaches the end of the global window.
END_OF_TIME = GlobalWindow().max_timestamp()


class CrawlDelayAudit(beam.PTransform):
    """Verdicts -> {"crawl_delay_violations", "crawl_delay_windows", "backoff", "dead_letters"}:
    bounded input as blocks (Arrow tables), a stream as batches (lists of dicts).

    On a stream each verdict is stamped with its log time, so the watermark orders the releases.
    `grouping` groups bounded input's packed requests by key: a transform with `GroupByKey`'s
    contract (KV[key, packed bytes] -> (key, iterable of packed bytes)), `GroupByKey` when None."""

    def __init__(
        self, window: timedelta, allowed_lateness: timedelta, bounded: bool, grouping: beam.PTransform | None = None
    ):
        super().__init__()
        if window <= timedelta(0) or allowed_lateness < timedelta(0):
            raise ValueError("the window must be positive and the allowed lateness not negative")
        if grouping is not None and not bounded:
            raise ValueError("only bounded input is grouped: a stream is released window by window")
        self._window = window
        self._lateness = allowed_lateness
        self._bounded = bounded
        self._grouping = grouping

    def expand(self, verdict_batches):
        if self._bounded:
            released = (
                verdict_batches
                | "PackRequestsByCrawler"
                >> beam.ParDo(PackRequestsFn()).with_output_types(typehints.KV[typehints.Any, bytes])
                | "GroupByCrawler" >> (self._grouping or beam.GroupByKey())
                | "ReleaseInEventTimeOrder"
                >> beam.ParDo(ReleaseAllFn(self._window)).with_outputs(
                    WINDOWS_TABLE, BACKOFF_TABLE, main=VIOLATIONS_TABLE
                )
            )
            nothing_late = verdict_batches.pipeline | "NoLateRequests" >> beam.Create([])
            return {
                VIOLATIONS_TABLE: released[VIOLATIONS_TABLE],
                WINDOWS_TABLE: released[WINDOWS_TABLE],
                BACKOFF_TABLE: released[BACKOFF_TABLE],
                DEAD_LETTERS_TABLE: nothing_late,
            }
        released = (
            verdict_batches
            | "StampAndKeyByCrawler" >> beam.FlatMap(stamped_by_crawler)
            | "ReleaseInEventTimeOrder"
            >> beam.ParDo(ReleaseInOrderFn(self._window, self._lateness)).with_outputs(
                WINDOWS_TABLE, BACKOFF_TABLE, DEAD_LETTERS_TABLE, main=VIOLATIONS_TABLE
            )
        )
        return {
            VIOLATIONS_TABLE: released[VIOLATIONS_TABLE],
            WINDOWS_TABLE: released[WINDOWS_TABLE],
            BACKOFF_TABLE: released[BACKOFF_TABLE],
            DEAD_LETTERS_TABLE: released[DEAD_LETTERS_TABLE],
        }


def stamped_by_crawler(verdicts: list[dict]) -> Iterator[window.TimestampedValue]:
    for verdict in verdicts:
        yield window.TimestampedValue((crawl_delay.key_of(verdict), verdict), beam_timestamp(verdict["ts"]))


# A `CrawlRequest` is a tuple of primitives, which this coder writes compactly (a third of a
# pickle) and reads back as the same tuple: streaming state holds every request of a key until
# its window is released, and the packs below hold requests in the same form.
REQUEST_CODER = coders.FastPrimitivesCoder()

# A batch run groups every crawler request before releasing any, and a local runner holds the
# grouped values decoded in memory. So requests travel packed, up to `_PACK` of one key per value:
# what they share (log file, `crawl_delay.Shared`) is written once, leaving fifteen to thirty
# bytes per request where a verdict would take kilobytes and a lone encoded request two hundred.
# A pack is (table, rows): the table holds (file, shared) pairs, the rows three values a request
# (ts in micros, line number or None, index in the table).
_PACK = 512
# Requests waiting to be packed, across keys: some 120 bytes each, twelve megabytes in all. Fewer
# would mean more and smaller packs, and each value grouped has its cost in the runner.
_PENDING_LIMIT = 100_000


class _Pending:
    """The requests of one key waiting to be packed, already in the shape of a pack."""

    __slots__ = ("table", "rows")

    def __init__(self):
        self.table: dict[tuple[str, crawl_delay.Shared], int] = {}  # (file, shared) -> index
        self.rows: list = []

    def add(self, request: CrawlRequest) -> None:
        ts, source, shared = request
        file, line = _split_source(source)
        self.rows += (ts, line, self.table.setdefault((file, shared), len(self.table)))

    def __len__(self) -> int:
        return len(self.rows) // 3

    def packed(self) -> bytes:
        return REQUEST_CODER.encode((tuple(self.table), tuple(self.rows)))


def unpack_requests(packs: Iterable[bytes]) -> list[CrawlRequest]:
    """The requests of packs, in pack order."""
    requests: list[CrawlRequest] = []
    for packed in packs:
        table, rows = REQUEST_CODER.decode(packed)
        files = [file for file, _ in table]
        shared = [entry for _, entry in table]
        fields = iter(rows)
        requests += [
            (ts, files[index] if line is None else f"{files[index]}:{line}", shared[index])
            for ts, line, index in zip(fields, fields, fields)
        ]
    return requests


def _split_source(source: str) -> tuple[str, int | None]:
    """`path:123` as (path, 123), so a file's name is packed once; any other source whole."""
    file, _, line = source.rpartition(":")
    # Only a line that reads back the same ("7", not "07" or "٧") is split off.
    if file and line.isdigit() and line.isascii() and (line[0] != "0" or line == "0"):
        return file, int(line)
    return source, None


class PackRequestsFn(beam.DoFn):
    """Verdict blocks -> (key, packed requests of that key), for bounded input."""

    def start_bundle(self):
        self._pending: dict[crawl_delay.Key, _Pending] = {}
        self._count = 0

    def process(self, verdicts):
        for key, requests in crawl_requests(verdicts):
            for request in requests:
                pending = self._pending.get(key)
                if pending is None:
                    pending = self._pending[key] = _Pending()
                pending.add(request)
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


class _RowCounters:
    """The rows a release makes, counted alike by the batch and the streaming release: a counter
    no row touched stays unset."""

    def __init__(self, namespace):
        self.violations = Metrics.counter(namespace, "violations")
        self.window_rows = Metrics.counter(namespace, "window_rows")
        self.backoff_rows = Metrics.counter(namespace, "backoff_rows")

    def emitted(self, violations: list[dict], windows: list[dict]):
        """The violation rows (main output) and window rows (tagged), counted."""
        if violations:
            self.violations.inc(len(violations))
            yield from violations
        if windows:
            self.window_rows.inc(len(windows))
            for row in windows:
                yield beam.pvalue.TaggedOutput(WINDOWS_TABLE, row)

    def backoff(self, key: crawl_delay.Key, found: list[backoff.Finding]):
        """The back-off rows of `found` (tagged), counted."""
        if found:
            self.backoff_rows.inc(len(found))
            for row in backoff.rows(key, found):
                yield beam.pvalue.TaggedOutput(BACKOFF_TABLE, row)


class ReleaseAllFn(beam.DoFn):
    """(key, all its packed requests) -> violations, window rows and back-off rows, for bounded
    input."""

    def __init__(self, window: timedelta):
        self._window = window
        self.requests = Metrics.counter(self.__class__, "requests")
        self.rows = _RowCounters(self.__class__)

    def process(self, element):
        key, packs = element
        requests = crawl_delay.in_order(unpack_requests(packs))
        self.requests.inc(len(requests))
        yield from self.rows.emitted(*crawl_delay.rows(key, None, requests, self._window))
        if crawl_delay.asked_to_slow_down(requests):
            yield from self.rows.backoff(key, backoff.findings(crawl_delay.backoff_requests(requests)))


class ReleaseInOrderFn(beam.DoFn):
    """Buffers a key's requests and releases them in event-time order as the watermark passes
    (see the module docstring)."""

    PENDING = BagStateSpec("pending", REQUEST_CODER)
    PREVIOUS = ReadModifyWriteStateSpec("previous", REQUEST_CODER)
    CLOSED = ReadModifyWriteStateSpec("closed", coders.VarIntCoder())  # micros; earlier is late
    ARMED = ReadModifyWriteStateSpec("armed", coders.VarIntCoder())  # micros the timer is set for
    CARRIED = ReadModifyWriteStateSpec("backoff", coders.PickleCoder())  # a `backoff.Carried`
    RELEASE = TimerSpec("release", TimeDomain.WATERMARK)

    def __init__(self, window: timedelta, allowed_lateness: timedelta):
        self._window = window
        self._lateness = allowed_lateness
        self.requests = Metrics.counter(self.__class__, "requests")
        self.late = Metrics.counter(self.__class__, "late_requests")
        self.rows = _RowCounters(self.__class__)

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
        if cut is not None and request[0] < cut:
            self.late.inc()
            yield beam.pvalue.TaggedOutput(DEAD_LETTERS_TABLE, late_letter(
                verdict, f"arrived after its crawler's requests on this host were released up to {released_up_to(cut)};"
                " its crawl-delay gap cannot be placed (the verdict is kept)",
            ))
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
        carried=beam.DoFn.StateParam(CARRIED),
    ):
        cut = fired.micros - self._micros(self._lateness)
        freed = crawl_delay.release(previous.read(), pending.read(), cut)
        pending.clear()
        armed.clear()
        for request in freed.held:
            pending.add(request)
        if freed.held:
            self._arm(freed.held[0], armed, release)
        closed.write(cut)
        if freed.released:
            previous.write(freed.last)
        yield from self.rows.emitted(*crawl_delay.rows(key, freed.previous, freed.released, self._window))
        before = carried.read() or backoff.Carried()
        found, after = backoff.judge_release(before, crawl_delay.backoff_requests(freed.released), fired >= END_OF_TIME)
        if after != before:
            carried.write(after)
        if not freed.held and fired < END_OF_TIME and after.last is not None and after.last.status in backoff.SLOW_DOWN:
            # Its finding waits for a next request, or for the end of the stream to say there is none.
            armed.write(END_OF_TIME.micros)
            release.set(END_OF_TIME)
        yield from self.rows.backoff(key, found)

    def _arm(self, request: CrawlRequest, armed, release) -> None:
        """Set the release timer for the request's window, unless it is set for earlier."""
        start = crawl_delay.window_start(crawl_delay.from_micros(request[0]), self._window)
        window_end = crawl_delay.window_end(start, self._window)
        at = crawl_delay.micros(window_end) + self._micros(self._lateness)
        current = armed.read()
        if current is None or at < current:
            armed.write(at)
            release.set(Timestamp(micros=at))

    @staticmethod
    def _micros(span: timedelta) -> int:
        return span // timedelta(microseconds=1)


def late_letter(verdict: dict, problem: str) -> dict:
    """The dead letter of a request that came too late to be placed exactly: `problem` says what
    it arrived after and what became of it; the verdict goes with it as JSON."""
    return dead_letter(
        verdict["source"],
        LATE_REASON,
        f"request at {records.rfc3339(verdict['ts'])} {problem}",
        json.dumps(records.to_json_ready(verdict, records.VERDICTS), ensure_ascii=False),
    )


def released_up_to(cut_micros: int) -> str:
    """The time a key's requests were released up to, as a late letter names it."""
    return records.rfc3339(crawl_delay.from_micros(cut_micros))
