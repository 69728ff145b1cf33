"""Crawl-delay compliance as a transform: the request coder, the packs, and the pipeline grouped by
the runner, grouped on disk and released window by window, against a brute-force sort-and-compare
of every key's requests."""
from __future__ import annotations

import tempfile
from collections import defaultdict
from datetime import timedelta

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st

from matcher import crawl_delay
import pipeline.graph.crawl_delay
from pipeline.local.spill import GroupOnDisk
from pipeline.report import text as report
from crawl_delay_reference import KEYS, brute_force, request, verdict, violation_tuple, window_tuple
from helpers import printed_by, verdict_block
from pipeline.graph.crawl_delay import REQUEST_CODER, CrawlDelayAudit, PackRequestsFn, unpack_requests


def test_the_request_coder_round_trips_a_request_as_it_was():
    unversioned = crawl_delay.request_of({**verdict(KEYS[0], 0.000007, None, "a.log:1"), "robots_version": None})
    for original in (request(12.5, 0.5, "ünïcode.log:3"), unversioned):
        decoded = REQUEST_CODER.decode(REQUEST_CODER.encode(original))
        assert decoded == original and type(decoded[2]) is tuple


def pack(verdicts: list[dict]) -> bytes:
    """The one pack `PackRequestsFn` makes of fewer verdicts of one key than fill a pack."""
    fn = PackRequestsFn()
    fn.start_bundle()
    assert not list(fn.process(verdict_block(verdicts)))
    ((_, packed),) = [wv.value for wv in fn.finish_bundle()]
    return packed


def test_packed_verdicts_round_trip_in_order_and_take_little_room():
    odd_sources = ["pubsub:msg-1", "x.log:007", "no line", ":5", "y.log:٣", "a.log:0", "b.log:", "c.log:12:3"]
    verdicts = [verdict(KEYS[0], n, 10.0 if n % 3 else None, f"/var/log/access.log:{n}") for n in range(300)]
    verdicts += [verdict(KEYS[0], n, 5.0, source) for n, source in enumerate(odd_sources)]
    unversioned = {**verdict(KEYS[0], 0.000007, None, "a.log:1"), "robots_version": None, "honours_crawl_delay": None}
    verdicts.append(unversioned)
    packed = pack(verdicts)
    assert unpack_requests([packed]) == [crawl_delay.request_of(v) for v in verdicts]
    assert len(packed) < 20 * len(verdicts)


def test_requests_of_several_packs_keep_their_own_shared_fields():
    first = [verdict(KEYS[0], n, 10.0, f"a.log:{n}") for n in range(3)]
    second = [{**verdict(KEYS[0], n, 5.0, f"b.log:{n}"), "robots_version": None} for n in range(2)]
    assert unpack_requests([pack(first), pack(second)]) == [crawl_delay.request_of(v) for v in first + second]


@pytest.mark.parametrize("pending_limit", [20_000, 50])  # packs fill, or the waiting requests overflow
def test_packing_keeps_every_request_of_every_key(monkeypatch, pending_limit):
    monkeypatch.setattr(pipeline.graph.crawl_delay, "_PENDING_LIMIT", pending_limit)
    fn = PackRequestsFn()
    fn.start_bundle()
    verdicts = [verdict(KEYS[n % 3], n, 10.0) for n in range(1600)]  # one pack fills, the rest wait
    batches = [verdict_block(verdicts[at : at + 7]) for at in range(0, len(verdicts), 7)]
    packed = [out for batch in batches for out in fn.process(batch)] + [wv.value for wv in fn.finish_bundle()]
    unpacked = defaultdict(list)
    for key, value in packed:
        unpacked[key] += unpack_requests([value])
    assert {key: sorted(requests) for key, requests in unpacked.items()} == {
        key: [crawl_delay.request_of(v) for v in verdicts if crawl_delay.key_of(v) == key] for key in KEYS[:3]
    }
    assert len(packed) < len(verdicts) / (100 if pending_limit > len(verdicts) else 10)


def test_only_bounded_input_takes_a_grouping():
    with pytest.raises(ValueError, match="only bounded input"):
        CrawlDelayAudit(timedelta(hours=1), timedelta(0), bounded=False, grouping=beam.GroupByKey())


# ---- The batch pipeline against the brute force


# How a test pipeline audits: bounded input grouped by the runner's GroupByKey or by GroupOnDisk, or a
# stream's release per window.
AUDIT_MODES = ("Grouped", "Spilled", "PerWindow")


def _run_audits(scenarios: dict[timedelta, list[dict]], modes=AUDIT_MODES) -> dict:
    """One pipeline, one audit per window size and mode, all checked against the brute force at
    once (each assertion adds stages, and stages are what a local pipeline spends its time on)."""
    expected = {size: brute_force(verdicts, size) for size, verdicts in scenarios.items()}
    with tempfile.TemporaryDirectory() as folder, TestPipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
        results, wanted = [], []
        for size, verdicts in scenarios.items():
            for mode in modes:
                name = f"{size.total_seconds():g}s{mode}"
                bounded = mode != "PerWindow"
                # bounded input comes in blocks, as a batch run's audit makes them
                batches = [(verdict_block if bounded else list)(verdicts[at : at + 7]) for at in range(0, len(verdicts), 7)]
                grouping = GroupOnDisk(folder) if mode == "Spilled" else None
                audit = CrawlDelayAudit(size, timedelta(minutes=15), bounded=bounded, grouping=grouping)
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


@pytest.mark.slow
@settings(max_examples=4, deadline=None)
@given(st.lists(scenario_strategy, min_size=1, max_size=4))
def test_pipeline_violations_equal_the_brute_force(scenarios):
    by_size = defaultdict(list)
    for number, (size, requests) in enumerate(scenarios):
        for n, (key, seconds, delay) in enumerate(requests):
            scenario_key = (f"s{number}.{key[0]}", *key[1:])
            by_size[size].append(verdict(scenario_key, seconds, delay, f"log{number}:{n}"))
    _run_audits(dict(by_size))


@pytest.mark.slow
def test_pairs_across_window_boundaries_are_compared_in_batch():
    key = KEYS[0]
    # 10:59:58 -> 11:00:03 straddles the hour; 11:00:03 -> 11:00:06 is inside it.
    verdicts = [verdict(key, 3598, 10.0), verdict(key, 3603, 10.0), verdict(key, 3606, 10.0), verdict(key, 10, 10.0)]
    violations, _ = _run_audits({timedelta(hours=1): verdicts}, modes=("PerWindow",))[timedelta(hours=1)]
    assert [gap for *_, gap, _ in violations] == [5.0, 3.0]


@pytest.mark.slow
def test_the_bundled_sample_has_48_bingbot_violations(sample_run_parquet):
    """samples/README.md: bingbot keeps under its delay 38 times on www (10 s) and 10 on the shop (5 s)."""
    violations = pq.read_table(sample_run_parquet / "crawl_delay_violations").to_pylist()
    by_host = defaultdict(int)
    for row in violations:
        assert (row["crawler"], row["identity"], row["honours_crawl_delay"]) == ("bingbot", "verified", True)
        by_host[(row["host"], row["crawl_delay_s"])] += 1
    assert dict(by_host) == {("www.example.com", 10.0): 38, ("shop.example.net", 5.0): 10}
    assert min(row["gap_s"] for row in violations) == 1.0
    verdicts = pq.read_table(sample_run_parquet / "verdicts").to_pylist()
    expected_violations, expected_windows = brute_force(verdicts, timedelta(hours=1))
    assert sorted(map(violation_tuple, violations)) == sorted(expected_violations)
    windows = pq.read_table(sample_run_parquet / "crawl_delay_windows").to_pylist()
    assert sorted(map(window_tuple, windows), key=repr) == sorted(expected_windows, key=repr)
    printed = printed_by(sample_run_parquet)
    section = printed[printed.index("crawl-delay:"):]
    assert "promised to honour Crawl-delay" in section and "never promised" not in section
    assert "bingbot    verified  www.example.com   10s" in section
    assert report.load(str(sample_run_parquet)).crawl_delay_windows  # the report reads Parquet back
