"""The change audit of an unbounded stream (TestStream on the BundleBasedDirectRunner): an early
pane writes the rows so far with `final` false, the pane once the input has ended the complete
rows with `final` true. (The bounded stream equals the batch on the change scenario:
tests/pipeline/report/test_robots_change_scenario.py.)"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import apache_beam as beam
import pytest
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
from pipeline.graph.changes import AuditChangesOnStream, HostParts, HostSoFar

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


def test_a_host_s_parts_add_up_whatever_their_grouping():
    key = (HOST, micros(T0 + 10 * HOUR), "restricts", "bingbot", "verified")
    fetch = (HOST, "bingbot", "verified")

    def part(ts_hours: float, requests=(), fetched=(), next_at=None) -> HostParts:
        parts = HostParts()
        parts.saw(micros(T0 + ts_hours * HOUR))
        parts.requests = {key: list(requests)} if requests else {}
        parts.fetches = {fetch: set(fetched)} if fetched else {}
        parts.next_at = {key[1]: next_at}
        return parts

    a = part(2, [(micros(T0 + 2 * HOUR), "allowed")], [1])
    b = part(12, [(micros(T0 + 12 * HOUR), "disallowed")], [5], next_at=micros(T0 + 40 * HOUR))
    c = part(30, fetched=[7])
    combine = HostSoFar()
    one = combine.extract_output(combine.merge_accumulators([
        combine.add_input(combine.create_accumulator(), a),
        combine.add_input(combine.add_input(combine.create_accumulator(), c), b),
    ]))
    assert one.span == (micros(T0 + 2 * HOUR), micros(T0 + 30 * HOUR))
    assert sorted(one.requests[key]) == [(micros(T0 + 2 * HOUR), "allowed"), (micros(T0 + 12 * HOUR), "disallowed")]
    assert one.fetches[fetch] == {1, 5, 7}
    # A next change known in any part is known in the whole; the inputs are left as they were.
    assert one.next_at == {key[1]: micros(T0 + 40 * HOUR)}
    assert a.span == (micros(T0 + 2 * HOUR),) * 2 and len(a.requests[key]) == 1
