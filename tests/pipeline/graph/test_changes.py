"""The change audit of an unbounded stream (TestStream on the BundleBasedDirectRunner): an early
pane writes the rows so far with `final` false, the pane once the input has ended the complete
rows with `final` true. (The bounded stream equals the batch on the change scenario:
tests/pipeline/report/test_robots_change_scenario.py.)"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import apache_beam as beam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms.window import TimestampedValue
from apache_beam.utils.timestamp import Timestamp

from config.registry import load_registry
from config.snapshots import load_ranges
from helpers import BINGBOT, BINGBOT_IP, REPO, log_line
from matcher.history import RobotsVersion
from matcher.line_auditor import VERDICT, LineAuditor, robots_by_host
from matcher.timerange import micros
from matcher.changes import change_row
from pipeline.graph.changes import AuditChangesOnStream, HostParts

HOST = "www.example.com"
T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)
HOUR = timedelta(hours=1)
VERSIONS = [
    RobotsVersion(HOST, T0, 200, b"User-agent: *\nDisallow: /private\n"),
    RobotsVersion(HOST, T0 + 10 * HOUR, 200, b"User-agent: *\nDisallow: /private\nDisallow: /new\n"),
]
EVERY = timedelta(minutes=10)


def _verdicts(*requests: tuple[float, str]) -> list[dict]:
    """bingbot's verdicts of requests at (hours after T0, path)."""
    registry = load_registry(None)
    auditor = LineAuditor(
        log_format="host_combined", registry=registry, ranges=load_ranges(str(REPO / "samples/ranges"), registry),
        error_limit=timedelta(days=30), grace=timedelta(hours=6),
    )
    lines = [log_line(HOST, T0 + hours * HOUR, path, BINGBOT, ip=BINGBOT_IP) for hours, path in requests]
    audited = list(auditor.audit_lines("access.log", 1, lines, robots_by_host(VERSIONS)))
    assert [kind for kind, _ in audited] == [VERDICT] * len(lines)
    return [verdict for _, verdict in audited]


def _stamped(verdicts: list[dict]) -> TimestampedValue:
    return TimestampedValue(verdicts, Timestamp(micros=micros(verdicts[-1]["ts"])))


def _moment(hours: float) -> datetime:
    return T0 + hours * HOUR


@pytest.mark.slow
def test_an_unbounded_stream_writes_the_rows_so_far_then_the_final_rows_once_its_input_ends():
    before, after, later = _verdicts((2, "/new"), (12, "/new"), (20, "/new"))
    stream = (
        TestStream()
        .add_elements([_stamped([before, after])])
        .advance_watermark_to(Timestamp(micros=micros(T0 + 13 * HOUR)))
        .advance_processing_time(EVERY.total_seconds() + 1)  # an early pane: the rows so far
        .add_elements([_stamped([later])])
        .advance_watermark_to(Timestamp(micros=micros(T0 + 30 * HOUR)))
        .advance_watermark_to_infinity()  # the input has ended: the last pane
    )
    options = PipelineOptions(["--runner=BundleBasedDirectRunner"])
    options.view_as(StandardOptions).streaming = True
    with TestPipeline(options=options) as p:
        robots = p | "Robots" >> beam.Create([robots_by_host(VERSIONS)])
        rows = p | stream | AuditChangesOnStream(robots, load_registry(None), EVERY)
        seen = rows | beam.Map(lambda row: (
            row["final"], row["direction"], row["crawler"], row["identity"], row["before_from"], row["after_until"],
            row["requests_before"], row["requests_after"], row["within_grace"], row["violations"],
            row["last_newly_disallowed_request"],
        ))
        assert_that(seen, equal_to([
            # So far the host's last request is at 12 h: the after-period ends there, and the
            # before-period, as long, starts at 8 h, after the request at 2 h.
            (False, "restricts", "bingbot", "verified", _moment(8), _moment(12), 0, 1, 1, 0, _moment(12)),
            # At the end the after-period reaches 20 h, the before-period back to the host's first
            # request (2 h); the request at 20 h is past the six hours' grace, a violation.
            (True, "restricts", "bingbot", "verified", _moment(2), _moment(20), 1, 2, 1, 1, _moment(20)),
        ]))


DECISIONS = ("allowed", "disallowed", "disallowed-within-grace", "disallowed-before-refetch", "disallowed-between-captures")
KEY = (HOST, micros(T0 + 10 * HOUR), "restricts", "bingbot", "verified")


@settings(max_examples=200, deadline=None)
@given(
    requests=st.lists(st.tuples(st.integers(0, 40 * 60), st.sampled_from(DECISIONS)), max_size=30),
    cuts=st.lists(st.integers(0, 30), max_size=4),
    fetched=st.lists(st.integers(0, 40 * 60), max_size=4),
    next_at=st.one_of(st.none(), st.integers(10 * 60 + 1, 40 * 60)),
)
def test_a_host_s_parts_give_the_row_of_its_requests_however_they_were_grouped(requests, cuts, fetched, next_at):
    """Split into parts as batches split them, added up in any grouping, the parts give the row
    `change_row` gives of the requests themselves."""
    def minute(m: int) -> int:
        return micros(T0 + timedelta(minutes=m))

    # Only requests a change's key takes: before it, or after it and before the next change.
    requests = [(minute(m), decision) for m, decision in requests if next_at is None or m < next_at]
    host_requests = [minute(0), minute(40 * 60)]
    span = (min(host_requests), max(host_requests))
    pieces = [requests[a:b] for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), len(requests)])]
    parts = []
    for n, piece in enumerate(pieces):
        part = HostParts()
        for ts, decision in piece:
            part.saw(ts)
            part.requested(KEY, ts, decision)
        part.next_at[KEY[1]] = None if next_at is None or n % 2 else minute(next_at)
        parts.append(part)
    ends = parts[0] if parts else HostParts()
    for ts in host_requests:
        ends.saw(ts)
    halves = [HostParts(), HostParts()]
    for n, part in enumerate(parts):
        halves[n % 2].add(part)
    whole = HostParts().add(halves[1]).add(halves[0])
    assert whole.span == span
    if not requests:
        assert KEY not in whole.requests
        return
    assert whole.next_at[KEY[1]] == (None if next_at is None else minute(next_at))
    times = [T0 + timedelta(minutes=m) for m in sorted(fetched)]
    end = None if next_at is None else T0 + timedelta(minutes=next_at)
    assert change_row(KEY, whole.requests[KEY].requests(), whole.span, end, times) == change_row(
        KEY, requests, span, end, times
    )
