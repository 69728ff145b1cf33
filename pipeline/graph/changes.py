"""The change audit as a transform: verdict batches -> `changes` rows (`matcher.changes`).

A change's periods end at the host's next change or at its last logged request, so a row is
complete only once every verdict is in. A batch run makes each row once, at the end (`final`
true). A stream cannot wait for its end: each host's requests to affected paths, its first and
last request and its crawlers' robots.txt fetch times accumulate in one value per host in the
global window, which writes the rows so far every `--changes-every` of processing time (early
panes, `final` false) and the rows a batch run writes once the input has ended (a bounded
stream, or a drained job: the last pane, `final` true). Both make a row with the same
`matcher.changes.change_row`."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from datetime import timedelta
from itertools import chain, repeat

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms import trigger, window

from matcher.agents import Registry
from matcher.audit import Claim, fetch_key, fetch_key_of, is_robots_fetch
from matcher.changes import ChangeKey, RobotsChange, change_row, host_changes, requests_of
from matcher.line_auditor import RobotsByHost
from matcher.robots_fetches import FetchHistory, FetchKey, RobotsFetch
from matcher.timerange import from_micros, micros
from pipeline.columnar import selections

Changes = Mapping[str, tuple[RobotsChange, ...]]


class AuditChanges(beam.PTransform):
    """Verdict blocks -> one `changes` row per host, change, direction, crawler and identity."""

    def __init__(self, robots: beam.PCollection, fetches: beam.PCollection, registry: Registry):
        super().__init__()
        self._robots = robots
        self._fetches = fetches
        self._registry = registry

    def expand(self, verdict_blocks):
        changes = self._robots | "HostChanges" >> beam.Map(changes_by_host)
        spans = (
            verdict_blocks
            | "HostSpansPerBatch" >> beam.FlatMap(selections.host_spans)
            | "HostSpans" >> beam.CombinePerKey(SpanOfHost())
        )
        return (
            verdict_blocks
            | "AffectedRequests" >> beam.FlatMap(affected_in_block, beam.pvalue.AsSingleton(changes), self._registry)
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


def affected_in_block(verdicts, changes: Changes, registry: Registry) -> Iterator[tuple[ChangeKey, list[tuple[int, str]]]]:
    """`affected_requests` of a block of verdicts (an Arrow table)."""
    return affected_requests(selections.on_hosts(verdicts, changes), changes, registry)


def affected_requests(
    verdicts: list[dict], changes: Changes, registry: Registry
) -> Iterator[tuple[ChangeKey, list[tuple[int, str]]]]:
    """The crawler requests of the batch to paths a change of their host turned, as their times
    and decisions, gathered per change, direction, crawler and identity: one element per key and
    batch rather than per request is what keeps the shuffle small."""
    found: dict[ChangeKey, list[tuple[int, str]]] = defaultdict(list)
    for verdict in verdicts:
        of_host = changes.get(verdict["host"])
        if of_host is None or verdict["crawler"] is None or verdict["client_kind"] != "crawler":
            continue
        claim = _claim(verdict, registry)
        for change, direction in requests_of(of_host, verdict["ts"], claim.tokens, claim.catch_all, verdict["path"] or "/"):
            key = (change.host, micros(change.at), direction, verdict["crawler"], verdict["identity"])
            found[key].append((micros(verdict["ts"]), verdict["decision"]))
    return iter(found.items())


def rows_of(
    keyed: tuple[ChangeKey, Iterable[list[tuple[int, str]]]],
    spans: Mapping[str, tuple[int, int]],
    changes: Changes,
    fetches: Mapping[FetchKey, FetchHistory],
    registry: Registry,
) -> Iterator[dict]:
    key, gathered = keyed
    host, at = key[:2]
    (change,) = [change for change in changes[host] if micros(change.at) == at]
    history = fetches.get(_fetch_key_of_change(key, registry))
    fetch_times = [] if history is None else [fetch.ts for fetch in history.fetches]
    row = change_row(key, chain.from_iterable(gathered), spans[host], change.next_at, fetch_times)
    if row is not None:
        yield {**row, "final": True}


def _fetch_key_of_change(key: ChangeKey, registry: Registry) -> FetchKey | None:
    """Whose robots.txt fetches a change key's crawler re-read the change by (as `robots_fetches`)."""
    host, _, _, crawler, identity = key
    return fetch_key(_claim({"crawler": crawler, "tokens": ()}, registry), identity, host)


class AuditChangesOnStream(beam.PTransform):
    """A stream's verdict batches, each judged by what its crawler held -> `changes` rows, pane by
    pane (see the module docstring). `robots` is the robots table the audit reads, `every` how
    often an early pane is written (0: none), `prior` the (key, RobotsFetch) pairs carried over
    from an earlier run, which a batch run counts among the fetches too."""

    def __init__(
        self, robots: beam.PCollection, registry: Registry, every: timedelta,
        prior: Iterable[tuple[FetchKey, RobotsFetch]] = (),
    ):
        super().__init__()
        self._robots = robots
        self._registry = registry
        self._every = every
        self._prior: dict[FetchKey, frozenset[int]] = {}
        for key, fetch in prior:
            self._prior[key] = self._prior.get(key, frozenset()) | {micros(fetch.ts)}

    def expand(self, verdict_batches):
        changes = self._robots | "HostChanges" >> beam.Map(changes_by_host)
        # Beam counts the delay in whole seconds.
        early = trigger.AfterProcessingTime(math.ceil(self._every.total_seconds())) if self._every else None
        return (
            verdict_batches
            | "PartsOfHosts" >> beam.FlatMap(parts_of_hosts, beam.pvalue.AsSingleton(changes), self._registry)
            | "PaneAfterPane"
            >> beam.WindowInto(
                window.GlobalWindows(),
                trigger=trigger.AfterWatermark(early=early),
                accumulation_mode=trigger.AccumulationMode.ACCUMULATING,
                # Stamped at the window's end, the accumulated values hold back no watermark.
                timestamp_combiner=window.TimestampCombiner.OUTPUT_AT_EOW,
            )
            | "HostSoFar" >> beam.CombinePerKey(HostSoFar())
            | "ChangeRowsOfPane" >> beam.ParDo(ChangeRowsOfPaneFn(self._registry, self._prior))
        )


class ChangeRequests:
    """A change key's requests so far. Those before the change are kept one by one (micros,
    decision): how far back the before-period reaches depends on how long the after-period turns
    out. Those after it are kept as a count and the latest time per decision, so a change's state
    stops growing once the watermark is past it: every one of them falls in the after-period
    (`requests_of` keys a request after a change to that change alone, whose period ends at the
    next), and `change_row` reads of them only their decision and the latest time."""

    __slots__ = ("at", "before", "after")

    def __init__(self, at: int):
        self.at = at
        self.before: list[tuple[int, str]] = []
        self.after: dict[str, tuple[int, int]] = {}  # decision -> (requests, latest micros)

    def __getstate__(self):
        return self.at, self.before, self.after

    def __setstate__(self, state):
        self.at, self.before, self.after = state

    def add(self, ts: int, decision: str) -> None:
        if ts < self.at:
            self.before.append((ts, decision))
        else:
            self._after(decision, 1, ts)

    def merge(self, other: ChangeRequests) -> None:
        self.before.extend(other.before)
        for decision, (count, latest) in other.after.items():
            self._after(decision, count, latest)

    def _after(self, decision: str, count: int, latest: int) -> None:
        known, last = self.after.get(decision, (0, latest))
        self.after[decision] = (known + count, max(last, latest))

    def requests(self) -> Iterator[tuple[int, str]]:
        """The requests as `change_row` takes them: those after the change each at its decision's latest time."""
        yield from self.before
        for decision, (count, latest) in self.after.items():
            yield from repeat((latest, decision), count)


class HostParts:
    """What the change audit of one host has seen: its first and last request (`span`, micros), its
    crawlers' robots.txt fetch times by fetch key, the requests to paths a change turned by change
    key, and each change's next change (micros, None: none known) by its time."""

    __slots__ = ("span", "fetches", "requests", "next_at")

    def __init__(self):
        self.span: tuple[int, int] | None = None
        self.fetches: dict[FetchKey, set[int]] = {}
        self.requests: dict[ChangeKey, ChangeRequests] = {}
        self.next_at: dict[int, int | None] = {}

    def __getstate__(self):
        return self.span, self.fetches, self.requests, self.next_at

    def __setstate__(self, state):
        self.span, self.fetches, self.requests, self.next_at = state

    def saw(self, ts: int) -> None:
        self.span = (ts, ts) if self.span is None else (min(self.span[0], ts), max(self.span[1], ts))

    def requested(self, key: ChangeKey, ts: int, decision: str) -> None:
        self._of(key).add(ts, decision)

    def add(self, other: HostParts) -> HostParts:
        """This host's parts with `other`'s added; `other` is left as it was."""
        if other.span is not None:
            self.saw(other.span[0])
            self.saw(other.span[1])
        for key, times in other.fetches.items():
            self.fetches.setdefault(key, set()).update(times)
        for key, requests in other.requests.items():
            self._of(key).merge(requests)
        for at, next_at in other.next_at.items():
            # A next change once known stays known; a table re-read may only bring it nearer.
            known = self.next_at.get(at)
            self.next_at[at] = next_at if known is None else known if next_at is None else min(known, next_at)
        return self

    def _of(self, key: ChangeKey) -> ChangeRequests:
        requests = self.requests.get(key)
        if requests is None:
            requests = self.requests[key] = ChangeRequests(key[1])
        return requests


def parts_of_hosts(verdicts: list[dict], changes: Changes, registry: Registry) -> Iterator[tuple[str, HostParts]]:
    """Per host of the batch, what its change audit needs of it."""
    parts: dict[str, HostParts] = {}
    for verdict in verdicts:
        host = verdict["host"]
        if host is None:
            continue
        of_host = parts.get(host)
        if of_host is None:
            of_host = parts[host] = HostParts()
            for change in changes.get(host, ()):
                of_host.next_at[micros(change.at)] = None if change.next_at is None else micros(change.next_at)
        ts = micros(verdict["ts"])
        of_host.saw(ts)
        key = fetch_key_of(verdict, registry) if is_robots_fetch(verdict["path"]) else None
        if key is not None:
            of_host.fetches.setdefault(key, set()).add(ts)
    for key, requests in affected_requests(verdicts, changes, registry):
        for ts, decision in requests:
            parts[key[0]].requested(key, ts, decision)
    return iter(parts.items())


class HostSoFar(beam.CombineFn):
    def create_accumulator(self):
        return HostParts()

    def add_input(self, parts, other):
        return parts.add(other)

    def merge_accumulators(self, accumulators):
        merged = HostParts()
        for parts in accumulators:
            merged.add(parts)
        return merged

    def extract_output(self, parts):
        return parts


class ChangeRowsOfPaneFn(beam.DoFn):
    """(host, its parts so far) -> its `changes` rows, `final` in the last pane, once the input ended."""

    def __init__(self, registry: Registry, prior: Mapping[FetchKey, frozenset[int]]):
        self._registry = registry
        self._prior = prior
        self.early_rows = Metrics.counter(self.__class__, "early_rows")
        self.final_rows = Metrics.counter(self.__class__, "final_rows")

    def process(self, element, pane=beam.DoFn.PaneInfoParam):
        _, parts = element
        final = pane.is_last
        for key, requests in parts.requests.items():
            whose = _fetch_key_of_change(key, self._registry)
            fetched = sorted({*parts.fetches.get(whose, ()), *self._prior.get(whose, ())})
            next_at = parts.next_at.get(key[1])
            end = None if next_at is None else from_micros(next_at)
            row = change_row(key, requests.requests(), parts.span, end, [from_micros(ts) for ts in fetched])
            if row is not None:
                (self.final_rows if final else self.early_rows).inc()
                yield {**row, "final": final}
