"""The crawlers' own robots.txt fetches, followed so that each verdict knows what its crawler held:
that is known only when all its fetches are, in whichever file and order they were logged. A
batch run reads them before the audit:

    logs ──ReadLogLines──► RobotsFetchesOfBatch ──┐
    --prior-run OUT/robots_fetches ───────────────┴─► GroupFetchesByKey ──► FetchHistories ──► side input of the audit
                                                                                          └─► robots_fetches rows

It reads the logs itself, like the DNS questions: the audit needs every fetch before its first
verdict, and a shared read would hold every line in memory meanwhile. Only lines that can spell
/robots.txt are parsed. A key's fetches are few (one a crawler and host every few hours), so they
are grouped by the runner's `GroupByKey` and meet in one dict, which the audit reads whole.

A stream cannot wait for every fetch, so it follows them in event time, like the crawl-delay audit
(`pipeline.graph.crawl_delay`). The audit judges each request as when no fetch was seen; each
crawler request then waits in its key's state until the watermark is `allowed_lateness` past it,
when every fetch at or before it has come, and is judged again by what its crawler held:

    verdict batches ──KeyByFetchFamily──► HoldUntilFetchesKnown ──► JudgeByWhatWasHeld ──► verdict batches
                                                 └─► robots_fetches rows, late fetches as dead letters

(the verdicts of requests that claim no crawler go through at once, a batch's together).

A key's state keeps only the fetches that still decide what its crawler holds (`FetchHistory.kept_after`).
A request later than that (behind its key's last release) is judged at once from the state; a
fetch that late cannot change the requests already written, so it is counted and dead-lettered.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import timedelta

import apache_beam as beam
from apache_beam import coders, typehints
from apache_beam.metrics import Metrics
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.utils.timestamp import Timestamp

from matcher.audit import fetch_key_of, fetch_of, judged_by_what_was_held
from matcher.history import HostHistory
from matcher.line_auditor import LineAuditor
from matcher.records import DEAD_LETTERS_TABLE, ROBOTS_FETCHES_TABLE, robots_fetch_record
from matcher.robots_fetches import FetchHistory, FetchKey, Held, RobotsFetch, carried_over, held_version
from matcher.timerange import from_micros, micros
from pipeline.graph.crawl_delay import late_letter, released_up_to
from pipeline.graph.line_audit import VERDICT_BATCHES, VerdictBatch, followed_fields, is_line_batch
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
        yield robots_fetch_record(key, held, held_version(versions, held))


# The output of `HoldUntilFetchesKnownFn` besides the released requests.
_FETCHES = "fetches"
# (FetchKey, verdict), typed so that the key has a deterministic coder, as state needs; the
# verdicts of a batch whose requests claim no crawler go through as one list, under a key of
# their own that no state is kept for.
_KEYED_VERDICT = typehints.KV[typehints.Tuple[typehints.Optional[str], str, str], typehints.Any]


class FollowRobotsFetchesOnStream(beam.PTransform):
    """A stream's verdict batches, judged as when no fetch was seen -> {"verdict_batches": the
    same verdicts judged by what each crawler held, "robots_fetches": rows, "dead_letters": late
    fetches} (see the module docstring). `robots` is the robots table the audit reads, `prior`
    the (key, RobotsFetch) pairs carried over from an earlier run, which start each key's state.

    Every verdict goes through the one stateful step, those with nothing to wait for too: a
    Flatten of two streams would be held to the end of the input by the local runners."""

    def __init__(
        self,
        auditor: LineAuditor,
        robots: beam.PCollection,
        allowed_lateness: timedelta,
        prior: Iterable[tuple[FetchKey, RobotsFetch]] = (),
    ):
        super().__init__()
        self._auditor = auditor
        self._robots = robots
        self._lateness = allowed_lateness
        self._prior: dict[FetchKey, tuple[RobotsFetch, ...]] = {}
        for key, fetch in prior:
            self._prior[key] = (*self._prior.get(key, ()), fetch)

    def expand(self, verdict_batches):
        released = (
            verdict_batches
            | "KeyByFetchFamily" >> beam.ParDo(KeyByFetchFamilyFn(self._auditor)).with_output_types(_KEYED_VERDICT)
            | "HoldUntilFetchesKnown"
            >> beam.ParDo(HoldUntilFetchesKnownFn(self._lateness, self._prior)).with_outputs(
                _FETCHES, DEAD_LETTERS_TABLE, main="released"
            )
        )
        robots = beam.pvalue.AsSingleton(self._robots)
        return {
            VERDICT_BATCHES: released.released
            | "JudgeByWhatWasHeld" >> beam.ParDo(JudgeByWhatWasHeldFn(self._auditor), robots).with_output_types(VerdictBatch),
            ROBOTS_FETCHES_TABLE: released[_FETCHES]
            | "FetchRows" >> beam.ParDo(FetchRowsOnStreamFn(self._auditor), robots),
            DEAD_LETTERS_TABLE: released[DEAD_LETTERS_TABLE],
        }


class KeyByFetchFamilyFn(beam.DoFn):
    """A verdict batch -> (fetch key, verdict) for each crawler's request; the rest as one list,
    keyed by its first source (no fetch key has an empty family).

    The verdicts keep the batch's timestamp: the step after decides by each request's own time
    and the watermark, and a verdict stamped with its request's time, behind the watermark, is
    dropped as late by Prism before any step could judge it."""

    def __init__(self, auditor: LineAuditor):
        self._auditor = auditor

    def process(self, verdicts):
        unfollowed = []
        for verdict in verdicts:
            key = fetch_key_of(verdict, self._auditor.registry)
            if key is None:
                unfollowed.append(verdict)
            else:
                yield key, verdict
        if unfollowed:
            yield (None, "", unfollowed[0]["source"]), unfollowed


# Verdicts and fetches in state: Beam's encoding of primitives, dicts and tuples, pickling the rest.
_STATE_CODER = coders.FastPrimitivesCoder()


class HoldUntilFetchesKnownFn(beam.DoFn):
    """(key, verdict) -> lists of (verdict, what its crawler held at it) as the watermark passes
    each request by the allowed lateness; (key, held after it) of each fetch, tagged `fetches`.
    `prior` holds the fetches carried over from an earlier run by key; a stream does not write
    them again."""

    # Names no other step's state or timers have: the local runner mixes up the timers of two
    # stateful steps fused into one stage (the crawl-delay release) when they share a name.
    PENDING = BagStateSpec("waiting_requests", _STATE_CODER)
    FETCHES = ReadModifyWriteStateSpec("kept_fetches", _STATE_CODER)  # the fetches kept, a tuple
    FORGOTTEN = ReadModifyWriteStateSpec("forgotten_before", coders.VarIntCoder())  # micros: fetches before it dropped
    CLOSED = ReadModifyWriteStateSpec("judged_up_to", coders.VarIntCoder())  # micros released up to
    ARMED = ReadModifyWriteStateSpec("judge_at", coders.VarIntCoder())  # micros the timer is set for
    RELEASE = TimerSpec("judge", TimeDomain.WATERMARK)

    def __init__(self, allowed_lateness: timedelta, prior: dict[FetchKey, tuple[RobotsFetch, ...]]):
        self._lateness = allowed_lateness // timedelta(microseconds=1)
        self._prior = prior
        self.requests = Metrics.counter(self.__class__, "requests")
        self.late = Metrics.counter(self.__class__, "late_requests")
        self.late_fetches = Metrics.counter(self.__class__, "late_fetches")

    def process(
        self,
        element,
        pending=beam.DoFn.StateParam(PENDING),
        fetches=beam.DoFn.StateParam(FETCHES),
        forgotten=beam.DoFn.StateParam(FORGOTTEN),
        closed=beam.DoFn.StateParam(CLOSED),
        armed=beam.DoFn.StateParam(ARMED),
        release=beam.DoFn.TimerParam(RELEASE),
    ):
        key, verdict = element
        if isinstance(verdict, list):  # requests that claim no crawler: nothing to wait for
            yield [(unfollowed, None) for unfollowed in verdict]
            return
        self.requests.inc()
        at = micros(verdict["ts"])
        cut = closed.read()
        if cut is None or at > cut:
            pending.add(verdict)
            self._arm(at, armed, release)
            return
        self.late.inc()
        fetch = fetch_of(verdict)
        history = FetchHistory((*self._kept(key, fetches), *([fetch] if fetch is not None else [])))
        if fetch is not None:
            self.late_fetches.inc()
            yield from self._keep(key, history, {fetch}, cut, fetches, forgotten)
            yield beam.pvalue.TaggedOutput(DEAD_LETTERS_TABLE, late_letter(
                verdict, f"for /robots.txt arrived after its crawler's requests on this host were judged up to"
                f" {released_up_to(cut)}: those after it were judged without it, later ones use it",
            ))
        dropped = forgotten.read()
        if dropped is not None and at < dropped:
            yield beam.pvalue.TaggedOutput(DEAD_LETTERS_TABLE, late_letter(
                verdict, f"arrived after its crawler's robots.txt fetches before {released_up_to(dropped)} were"
                " no longer kept: judged as when no fetch was seen (the verdict is kept)",
            ))
            yield [(verdict, None)]
        else:
            yield [(verdict, history.held_at(verdict["ts"]))]

    @on_timer(RELEASE)
    def on_release(
        self,
        key=beam.DoFn.KeyParam,
        fired=beam.DoFn.TimestampParam,
        pending=beam.DoFn.StateParam(PENDING),
        fetches=beam.DoFn.StateParam(FETCHES),
        forgotten=beam.DoFn.StateParam(FORGOTTEN),
        closed=beam.DoFn.StateParam(CLOSED),
        armed=beam.DoFn.StateParam(ARMED),
        release=beam.DoFn.TimerParam(RELEASE),
    ):
        cut = fired.micros - self._lateness
        waiting = list(pending.read())
        pending.clear()
        armed.clear()
        due = []
        for verdict in waiting:
            at = micros(verdict["ts"])
            if at <= cut:
                due.append(verdict)
            else:
                pending.add(verdict)
                self._arm(at, armed, release)
        closed.write(cut)
        arrived = {fetch for fetch in map(fetch_of, due) if fetch is not None}
        history = FetchHistory((*self._kept(key, fetches), *arrived))
        if arrived:
            yield from self._keep(key, history, arrived, cut, fetches, forgotten)
        if due:
            yield [(verdict, history.held_at(verdict["ts"])) for verdict in due]

    def _arm(self, at: int, armed, release) -> None:
        """Sets the timer for a request at `at` (micros) to be judged, unless it is set for earlier."""
        due = at + self._lateness
        current = armed.read()
        if current is None or due < current:
            armed.write(due)
            release.set(Timestamp(micros=due))

    def _kept(self, key: FetchKey, fetches) -> tuple[RobotsFetch, ...]:
        """The key's fetches in state; before its first, those carried over from an earlier run."""
        kept = fetches.read()
        return self._prior.get(key, ()) if kept is None else kept

    @staticmethod
    def _keep(key: FetchKey, history: FetchHistory, new: set[RobotsFetch], cut: int, fetches, forgotten):
        """Keeps the fetches that decide what the crawler holds after `cut`, remembering from
        when on they do, and emits the rows of the `new` ones."""
        kept = history.kept_after(from_micros(cut))
        if len(kept) < len(history.held):
            forgotten.write(max(micros(kept[0].ts), forgotten.read() or 0))
        fetches.write(kept)
        yield beam.pvalue.TaggedOutput(_FETCHES, [(key, held) for held in history.held if held.fetch in new])


class JudgeByWhatWasHeldFn(beam.DoFn):
    """A list of (verdict, held) -> the verdicts as `audit` judges them when each crawler held that."""

    def __init__(self, auditor: LineAuditor):
        self._auditor = auditor

    def process(self, released, robots_by_host):
        history, registry = self._auditor.history, self._auditor.registry
        yield VerdictBatch(
            judged_by_what_was_held(verdict, history(verdict["host"], robots_by_host), held, registry)
            for verdict, held in released
        )


class FetchRowsOnStreamFn(beam.DoFn):
    """A list of (key, held after a fetch) -> its `robots_fetches` rows."""

    def __init__(self, auditor: LineAuditor):
        self._auditor = auditor

    def process(self, found: list[tuple[FetchKey, Held]], robots_by_host):
        for key, held in found:
            history = self._auditor.history(key[0], robots_by_host)
            yield robots_fetch_record(key, held, held_version(history, held))
