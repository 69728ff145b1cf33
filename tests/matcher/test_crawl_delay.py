"""Crawl-delay compliance (docs/semantics.md § Crawl-delay): the rule, the windows, and the batch
pipeline against a brute-force sort-and-compare of every key's requests."""
from __future__ import annotations

import pickle
import tempfile
from collections import defaultdict
from datetime import datetime, timedelta, timezone

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from matcher import crawl_delay, timerange
from matcher.crawl_delay import CrawlRequest, Step
import pipeline.graph.crawl_delay
from pipeline.report import text as report
from crawl_delay_reference import KEYS, T0, VERSION, brute_force, request, verdict, violation_tuple, window_tuple
from helpers import REPO, run_audit
from pipeline.graph.crawl_delay import (
    CrawlDelayAudit,
    CrawlRequestCoder,
    PackRequestsFn,
    SpillPacksFn,
    shard_of,
    spilled_packs,
    unpack_requests,
)

# ---- The rule


def test_a_gap_shorter_than_the_delay_is_a_violation_and_an_equal_one_is_not():
    assert crawl_delay.violates(timedelta(seconds=9.999), 10.0)
    assert not crawl_delay.violates(timedelta(seconds=10), 10.0)
    assert crawl_delay.violates(timedelta(seconds=0), 0.5)
    assert not crawl_delay.violates(timedelta(seconds=0), None)  # no Crawl-delay in effect
    assert not crawl_delay.violates(None, 10.0)  # a key's first request has no gap


def test_the_delay_of_the_later_request_decides():
    # The delay changed from 30 s to 5 s between the two requests: the later one's 5 s applies.
    step = Step(request(0, delay=30.0), request(20, delay=5.0))
    assert step.gap == timedelta(seconds=20) and not step.violation
    assert Step(request(0, delay=5.0), request(20, delay=30.0)).violation


def test_the_key_keeps_spoofed_traffic_apart_from_the_real_crawler():
    real, fake = verdict(KEYS[0], 0, 10.0), verdict(KEYS[1], 1, 10.0)
    assert crawl_delay.key_of(real) != crawl_delay.key_of(fake)
    assert crawl_delay.key_of(fake) == ("www.example.com", "bingbot", "Microsoft", "spoofed")


def test_release_orders_by_time_and_chains_to_the_previous_release():
    first = crawl_delay.release(None, [request(30), request(5), request(62)], cut=T0 + timedelta(seconds=60))
    assert [step.request.ts for step in first.steps] == [T0 + timedelta(seconds=5), T0 + timedelta(seconds=30)]
    assert first.steps[0].previous is None
    assert [held.ts for held in first.held] == [T0 + timedelta(seconds=62)]
    second = crawl_delay.release(first.steps[-1].request, first.held, cut=None)
    assert second.steps[0].gap == timedelta(seconds=32)  # the pair across the cut


def test_requests_in_the_same_second_pair_the_same_way_every_time():
    ordered = crawl_delay.release(None, [request(1, source="b:2"), request(1, source="a:9")], None).steps
    assert [step.request.source for step in ordered] == ["a:9", "b:2"]
    assert ordered[1].gap == timedelta(0)


@given(
    st.lists(st.integers(0, 7200), max_size=30),
    st.lists(st.integers(0, 7200), max_size=5),
)
def test_releasing_in_pieces_equals_releasing_at_once(offsets, cuts):
    requests = [request(offset, source=f"log:{n}") for n, offset in enumerate(offsets)]
    at_once = crawl_delay.release(None, requests, None).steps
    previous, held, pieces = None, requests, []
    for cut in sorted(cuts) + [None]:
        freed = crawl_delay.release(previous, held, None if cut is None else T0 + timedelta(seconds=cut))
        pieces.extend(freed.steps)
        held = freed.held
        previous = freed.steps[-1].request if freed.steps else previous
    assert pieces == list(at_once)


def test_windows_are_aligned_to_the_epoch_like_fixed_windows():
    moment = datetime(2026, 11, 2, 10, 59, 59, tzinfo=timezone.utc)
    assert crawl_delay.window_start(moment, timedelta(hours=1)) == datetime(2026, 11, 2, 10, tzinfo=timezone.utc)
    seven = timedelta(minutes=7)
    start = crawl_delay.window_start(moment, seven)
    assert start <= moment < start + seven and (start - crawl_delay.EPOCH) % seven == timedelta(0)


def test_a_window_row_counts_the_gap_from_the_previous_window_and_reports_the_last_delay():
    steps = crawl_delay.release(request(3590, 10.0), [request(3602, 10.0), request(3605, 5.0), request(3700, 5.0)], None).steps
    (row,) = crawl_delay.window_records(KEYS[0], steps, timedelta(hours=1))
    assert row["window_start"] == T0 + timedelta(hours=1)
    assert (row["requests"], row["violations"], row["min_gap_s"]) == (3, 1, 3.0)  # 12 s ok, 3 s < 5 s, 95 s ok
    assert (row["crawl_delay_s"], row["honours_crawl_delay"]) == (5.0, True)


# Times from a few seconds (ties, windows of microseconds) to the whole span of datetimes.
_MOMENTS = st.one_of(
    st.integers(0, 40).map(lambda second: crawl_delay.micros(T0) + second * 1_000_000),
    st.integers(0, 3_000_000).map(lambda offset: crawl_delay.micros(T0) + offset),
    st.integers(timerange.EARLIEST_MICROS, timerange.LATEST_MICROS),
)
_SHARED = st.tuples(
    st.one_of(
        st.none(),
        st.sampled_from([0.0, 0.5, 1.0, 2.5e-6, 1e-7, 10.0, timerange.LONGEST_SPAN_S, 1e300]),
        st.floats(0, 1e12),
    ),
    st.one_of(st.none(), st.integers(1, 99)),
    st.one_of(st.none(), st.just(VERSION)),
    st.one_of(st.none(), st.booleans()),
)


_SOURCES = st.sampled_from(["a:9", "a:10", "b:2", "a.log:1", "a.log.1:1", "pubsub:x"])


@settings(max_examples=300)
@given(
    st.lists(st.tuples(_MOMENTS, _SOURCES, st.integers(0, 3)), max_size=40),
    st.lists(_SHARED, min_size=4, max_size=4),
    st.one_of(
        st.integers(1, 10**8).map(lambda size: timedelta(microseconds=size)),
        st.sampled_from([timedelta(hours=1), timedelta(days=10**6), timedelta.max]),
    ),
)
def test_the_batch_rows_are_the_rows_of_a_release(requests, shared, size):
    """`batch_rows` from primitives against the release one request object at a time."""
    key = KEYS[0]
    objects = [CrawlRequest(crawl_delay.from_micros(ts), source, *shared[index]) for ts, source, index in requests]
    steps = crawl_delay.release(None, objects, None).steps
    violations = [crawl_delay.violation_record(key, step) for step in steps if step.violation]
    windows = crawl_delay.window_records(key, steps, size)
    assert crawl_delay.batch_rows(key, requests, shared, size) == (violations, windows)


def test_micros_round_trip_exactly():
    moment = datetime(2026, 11, 2, 10, 0, 0, 123456, tzinfo=timezone.utc)
    assert crawl_delay.from_micros(crawl_delay.micros(moment)) == moment


UNVERSIONED = CrawlRequest(T0 + timedelta(microseconds=7), "a.log:1", None, None, None, None)


def test_the_request_coder_round_trips_what_the_rows_need():
    coder = CrawlRequestCoder()
    for original in (request(12.5, 0.5, "ünïcode.log:3"), UNVERSIONED):
        encoded = coder.encode(original)
        assert coder.decode(encoded) == original
        assert len(encoded) < len(pickle.dumps(original)) / 2


def pack(verdicts: list[dict]) -> bytes:
    """The one pack `PackRequestsFn` makes of fewer verdicts of one key than fill a pack."""
    fn = PackRequestsFn()
    fn.start_bundle()
    assert not list(fn.process(verdicts))
    ((_, packed),) = [wv.value for wv in fn.finish_bundle()]
    return packed


def as_requests(unpacked: tuple[list, list]) -> list[CrawlRequest]:
    requests, shared = unpacked
    return [CrawlRequest(crawl_delay.from_micros(ts), source, *shared[index]) for ts, source, index in requests]


def test_packed_verdicts_round_trip_in_order_and_take_little_room():
    odd_sources = ["pubsub:msg-1", "x.log:007", "no line", ":5", "y.log:٣", "a.log:0", "b.log:", "c.log:12:3"]
    verdicts = [verdict(KEYS[0], n, 10.0 if n % 3 else None, f"/var/log/access.log:{n}") for n in range(300)]
    verdicts += [verdict(KEYS[0], n, 5.0, source) for n, source in enumerate(odd_sources)]
    unversioned = {**verdict(KEYS[0], 0.000007, None, "a.log:1"), "robots_version": None, "honours_crawl_delay": None}
    verdicts.append(unversioned)
    packed = pack(verdicts)
    assert as_requests(unpack_requests([packed])) == [crawl_delay.request_of(v) for v in verdicts]
    assert len(packed) < 20 * len(verdicts)


def test_requests_of_several_packs_keep_their_own_shared_fields():
    first = [verdict(KEYS[0], n, 10.0, f"a.log:{n}") for n in range(3)]
    second = [{**verdict(KEYS[0], n, 5.0, f"b.log:{n}"), "robots_version": None} for n in range(2)]
    unpacked = unpack_requests([pack(first), pack(second)])
    assert as_requests(unpacked) == [crawl_delay.request_of(v) for v in first + second]


@pytest.mark.parametrize("pending_limit", [20_000, 50])  # packs fill, or the waiting requests overflow
def test_packing_keeps_every_request_of_every_key(monkeypatch, pending_limit):
    monkeypatch.setattr(pipeline.graph.crawl_delay, "_PENDING_LIMIT", pending_limit)
    fn = PackRequestsFn()
    fn.start_bundle()
    verdicts = [verdict(KEYS[n % 3], n, 10.0) for n in range(1600)]  # one pack fills, the rest wait
    batches = [verdicts[at : at + 7] for at in range(0, len(verdicts), 7)]
    packed = [out for batch in batches for out in fn.process(batch)] + [wv.value for wv in fn.finish_bundle()]
    unpacked = defaultdict(list)
    for key, value in packed:
        unpacked[key] += as_requests(unpack_requests([value]))
    assert {key: sorted(requests, key=lambda r: r.ts) for key, requests in unpacked.items()} == {
        key: [crawl_delay.request_of(v) for v in verdicts if crawl_delay.key_of(v) == key] for key in KEYS[:3]
    }
    assert len(packed) < len(verdicts) / (100 if pending_limit > len(verdicts) else 10)


def test_spilled_packs_come_back_by_key_whichever_bundle_wrote_them(tmp_path):
    fn = SpillPacksFn(str(tmp_path))
    elements = [(key, f"pack {n} of {key}".encode()) for n in range(3) for key in KEYS]
    files = []
    for bundle in (elements[::2], elements[1::2]):
        fn.start_bundle()
        for element in bundle:
            fn.process(element)
        files += [windowed.value for windowed in fn.finish_bundle()]
    by_shard = defaultdict(list)
    for shard, path in files:
        by_shard[shard].append(path)
    assert len(files) == len(set(path for _, path in files)) == sum(map(len, by_shard.values()))
    released = {}
    for shard, paths in by_shard.items():
        packs = spilled_packs(paths)
        assert {shard_of(key) for key in packs} == {shard}
        released.update(packs)
    assert {key: sorted(packs) for key, packs in released.items()} == {
        key: sorted(packed for k, packed in elements if k == key) for key in KEYS
    }


# ---- The batch pipeline against the brute force


# How a test pipeline audits: bounded input grouped by the runner or on disk, or a stream's release per window.
AUDIT_MODES = ("Grouped", "Spilled", "PerWindow")


def _run_audits(scenarios: dict[timedelta, list[dict]], modes=AUDIT_MODES) -> dict:
    """One pipeline, one audit per window size and mode, all checked against the brute force at
    once (each assertion adds stages, and stages are what a local pipeline spends its time on)."""
    expected = {size: brute_force(verdicts, size) for size, verdicts in scenarios.items()}
    with tempfile.TemporaryDirectory() as spill, TestPipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
        results, wanted = [], []
        for size, verdicts in scenarios.items():
            for mode in modes:
                name = f"{size.total_seconds():g}s{mode}"
                batches = [verdicts[at : at + 7] for at in range(0, len(verdicts), 7)]
                audit = CrawlDelayAudit(
                    size, timedelta(minutes=15), bounded=mode != "PerWindow", spill=spill if mode == "Spilled" else None
                )
                out = p | f"Create{name}" >> beam.Create(batches, reshuffle=False) | f"Audit{name}" >> audit
                for table, shape in (("crawl_delay_violations", violation_tuple), ("crawl_delay_windows", window_tuple)):
                    results.append(out[table] | f"{table}{name}" >> beam.Map(lambda row, n=name, f=shape: (n, f(row))))
                    wanted += [(name, row) for row in expected[size][0 if table == "crawl_delay_violations" else 1]]
                results.append(out["dead_letters"] | f"Late{name}" >> beam.Map(lambda row, n=name: (n, "late", row["source"])))
        assert_that(results | beam.Flatten(), equal_to(wanted))
    return expected


# A scenario: requests for several keys at random seconds over two hours, random delays, and a
# random window size; a key is namespaced by its scenario so scenarios can share an audit.
scenario_strategy = st.tuples(
    st.integers(10, 60).map(lambda minutes: timedelta(minutes=minutes)),
    st.lists(
        st.tuples(st.sampled_from(KEYS), st.integers(0, 2 * 3600), st.sampled_from([None, 0.5, 5.0, 10.0, 30.0])),
        min_size=1,
        max_size=30,
    ),
)


@settings(max_examples=4, deadline=None)
@given(st.lists(scenario_strategy, min_size=1, max_size=4))
def test_pipeline_violations_equal_the_brute_force(scenarios):
    by_size = defaultdict(list)
    for number, (size, requests) in enumerate(scenarios):
        for n, (key, seconds, delay) in enumerate(requests):
            scenario_key = (f"s{number}.{key[0]}", *key[1:])
            by_size[size].append(verdict(scenario_key, seconds, delay, f"log{number}:{n}"))
    _run_audits(dict(by_size))


def test_pairs_across_window_boundaries_are_compared_in_batch():
    key = KEYS[0]
    # 10:59:58 -> 11:00:03 straddles the hour; 11:00:03 -> 11:00:06 is inside it.
    verdicts = [verdict(key, 3598, 10.0), verdict(key, 3603, 10.0), verdict(key, 3606, 10.0), verdict(key, 10, 10.0)]
    violations, _ = _run_audits({timedelta(hours=1): verdicts}, modes=("PerWindow",))[timedelta(hours=1)]
    assert [gap for *_, gap, _ in violations] == [5.0, 3.0]


def test_the_bundled_sample_has_48_bingbot_violations(tmp_path, capsys):
    """samples/README.md: bingbot keeps under its delay 38 times on www (10 s) and 10 on the shop (5 s)."""
    argv = [
        f"--logs={REPO / 'samples/logs/*.log.gz'}",
        "--log-format=host_combined",
        f"--robots={REPO / 'samples/robots/history.jsonl'}",
        f"--ranges={REPO / 'samples/ranges'}",
        f"--out={tmp_path}",
        "--format=parquet",
        "--runner=FnApiRunner",
    ]
    assert run_audit(argv) == 0
    violations = pq.read_table(tmp_path / "crawl_delay_violations").to_pylist()
    by_host = defaultdict(int)
    for row in violations:
        assert (row["crawler"], row["identity"], row["honours_crawl_delay"]) == ("bingbot", "verified", True)
        by_host[(row["host"], row["crawl_delay_s"])] += 1
    assert dict(by_host) == {("www.example.com", 10.0): 38, ("shop.example.net", 5.0): 10}
    assert min(row["gap_s"] for row in violations) == 1.0
    verdicts = pq.read_table(tmp_path / "verdicts").to_pylist()
    expected_violations, expected_windows = brute_force(verdicts, timedelta(hours=1))
    assert sorted(map(violation_tuple, violations)) == sorted(expected_violations)
    windows = pq.read_table(tmp_path / "crawl_delay_windows").to_pylist()
    assert sorted(map(window_tuple, windows), key=repr) == sorted(expected_windows, key=repr)
    printed = capsys.readouterr().out
    section = printed[printed.index("crawl-delay:"):]
    assert "promised to honour Crawl-delay" in section and "never promised" not in section
    assert "bingbot    verified  www.example.com   10s" in section
    assert report.load(str(tmp_path)).crawl_delay_windows  # the report reads Parquet back
