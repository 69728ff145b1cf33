"""The audit streaming: crawl-delay under out-of-order arrival and late data (TestStream on the
BundleBasedDirectRunner, the only local runner for it), the folder source run for real, the
refreshing robots table, and the deployment graphs built without cloud access."""
from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.pipeline import PipelineVisitor
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms.window import TimestampedValue
from apache_beam.utils.timestamp import Timestamp

from config.registry import load_registry
from config.snapshots import load_ranges
from matcher import backoff, crawl_delay, records
from pipeline.graph import build as graph
from pipeline.graph import robots_refresh
from pipeline.graph import sinks
from pipeline.graph import stream_sources
from pipeline.graph.read_logs import LONG_LINE_PREFIX_BYTES, MAX_LINE_BYTES, LongLine
from pipeline.graph.crawl_delay import LATE_REASON, CrawlDelayAudit, ReleaseInOrderFn
from matcher.line_auditor import VERDICT, LineAuditor
from pipeline.tables.schema import bigquery_schema
from crawl_delay_reference import KEYS, T0, brute_force, verdict, violation_tuple, window_tuple
from helpers import REPO, run_audit, run_settings, sample_slice, stream_graph, verdict_block

MINUTE = timedelta(minutes=1)
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
ROBOTS_V1 = "User-agent: bingbot\nCrawl-delay: 5\nDisallow: /private/\n"
ROBOTS_V2 = "User-agent: bingbot\nCrawl-delay: 20\nDisallow: /\n"


def streaming_options(*flags: str) -> PipelineOptions:
    options = PipelineOptions(["--runner=BundleBasedDirectRunner", *flags])
    options.view_as(StandardOptions).streaming = True
    return options


def stamped(v: dict) -> TimestampedValue:
    """A verdict as the audit emits it on a stream: in a batch of its own, at its log time."""
    return TimestampedValue([v], Timestamp(micros=crawl_delay.micros(v["ts"])))


def watermark(seconds: float) -> Timestamp:
    return Timestamp(micros=crawl_delay.micros(T0 + timedelta(seconds=seconds)))


def run_stream(stream: TestStream, size: timedelta, lateness: timedelta, expected: list) -> None:
    """Runs the crawl-delay audit on `stream` and checks every output row at once."""
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | CrawlDelayAudit(size, lateness, bounded=False)
        rows = (
            out["crawl_delay_violations"] | "V" >> beam.Map(lambda r: ("violation", violation_tuple(r))),
            out["crawl_delay_windows"] | "W" >> beam.Map(lambda r: ("window", window_tuple(r))),
            out["dead_letters"] | "D" >> beam.Map(lambda d: ("dead", d["source"], d["reason"], json.loads(d["raw"])["ts"])),
        ) | beam.Flatten()
        assert_that(rows, equal_to(expected))


def expected_rows(verdicts: list[dict], size: timedelta) -> list:
    violations, windows = brute_force(verdicts, size)
    return [("violation", v) for v in violations] + [("window", w) for w in windows]


# ---- Crawl-delay in event time, arriving out of order

KEY = KEYS[0]
ARRIVALS = [0, 55, 50, 63, 58, 125]  # seconds after 10:00, in arrival order


@pytest.mark.slow
def test_out_of_order_arrival_and_pairs_across_windows_match_the_sorted_order():
    v = {s: verdict(KEY, s, 10.0) for s in ARRIVALS}
    stream = (
        TestStream()
        .add_elements([stamped(v[0]), stamped(v[55])])
        .add_elements([stamped(v[50])])  # earlier than one already seen
        .advance_watermark_to(watermark(61))  # window 10:00 is over, but within the lateness
        .add_elements([stamped(v[63]), stamped(v[58])])  # 58 s: behind the watermark, still placed
        .advance_watermark_to(watermark(95))  # 10:01:00 + 30 s: window 10:00 released
        .add_elements([stamped(v[125])])
        # Timers that first fire on the jump to infinity are not seen by assert_that on this
        # runner; a finite step past the last one first.
        .advance_watermark_to(watermark(3600))
        .advance_watermark_to_infinity()
    )
    expected = expected_rows(list(v.values()), MINUTE)
    # 58 -> 63 straddles 10:01:00; 50 -> 55 -> 58 arrived as 55, 50, 58.
    assert [row[3] for kind, row in expected if kind == "violation"] == [5.0, 3.0, 5.0]
    run_stream(stream, MINUTE, timedelta(seconds=30), expected)


@pytest.mark.slow
def test_late_data_beyond_the_allowed_lateness_is_dead_lettered_not_dropped():
    v = {s: verdict(KEY, s, 10.0) for s in (*ARRIVALS, 59)}
    stream = (
        TestStream()
        .add_elements([stamped(v[s]) for s in (0, 55, 50)])
        .advance_watermark_to(watermark(61))
        .add_elements([stamped(v[63]), stamped(v[58])])
        .advance_watermark_to(watermark(95))
        .add_elements([stamped(v[59])])  # its window was released at 95 s: too late to place
        .add_elements([stamped(v[125])])
        .advance_watermark_to(watermark(3600))
        .advance_watermark_to_infinity()
    )
    on_time = [v[s] for s in ARRIVALS]
    late = ("dead", v[59]["source"], LATE_REASON, "2026-11-02T10:00:59Z")
    run_stream(stream, MINUTE, timedelta(seconds=30), expected_rows(on_time, MINUTE) + [late])


class _Value:
    def __init__(self):
        self.value = None

    def read(self):
        return self.value

    def write(self, value):
        self.value = value

    def clear(self):
        self.value = None


class _Bag(_Value):
    def add(self, item):
        self.value = (self.value or []) + [item]

    def read(self):
        return list(self.value or [])


class _Timer:
    def set(self, at):
        self.at = at


class _Counter:
    value = 0

    def inc(self, n=1):
        self.value += n


def test_a_late_request_is_counted():
    # The BundleBasedDirectRunner reports only the first bundle's metrics, so the counter is
    # checked on the DoFn itself, with its state held in plain objects.
    fn = ReleaseInOrderFn(MINUTE, timedelta(seconds=30))
    fn.late, fn.requests = _Counter(), _Counter()
    pending, previous, closed, armed, timer = _Bag(), _Value(), _Value(), _Value(), _Timer()
    assert list(fn.process((KEY, verdict(KEY, 10, 10.0)), pending, closed, armed, timer)) == []
    assert timer.at == watermark(90)  # end of window 10:00 + the allowed lateness
    released = list(fn.on_release(KEY, timer.at, pending, previous, closed, armed, timer, _Value()))
    assert [row.tag for row in released] == ["crawl_delay_windows"]
    (letter,) = fn.process((KEY, verdict(KEY, 59, 10.0)), pending, closed, armed, timer)
    assert (letter.tag, letter.value["reason"], fn.late.value) == ("dead_letters", LATE_REASON, 1)
    assert list(fn.process((KEY, verdict(KEY, 61, 10.0)), pending, closed, armed, timer)) == []
    assert (fn.requests.value, fn.late.value) == (2, 1)


def _arriving_late(verdicts: list[dict], rng: random.Random, until_s: int) -> TestStream:
    """Arrival in ten-minute chunks of event time up to `until_s`, shuffled inside; a third of each
    chunk held back and delivered after the watermark has passed the chunk, so up to ten minutes late."""
    chunk = 600
    stream, held = TestStream(), []
    for start in range(0, until_s, chunk):
        batch = [v for v in verdicts if start <= (v["ts"] - T0).total_seconds() < start + chunk]
        rng.shuffle(batch)
        cut = len(batch) // 3
        stream = stream.add_elements([stamped(v) for v in held + batch[cut:]])
        held = batch[:cut]
        stream = stream.advance_watermark_to(watermark(start + chunk))
    return stream.add_elements([stamped(v) for v in held]).advance_watermark_to(watermark(6 * 3600))


@pytest.mark.slow
def test_streaming_and_batch_give_the_same_result_on_the_same_input():
    rng = random.Random(20261102)
    verdicts = [
        verdict(rng.choice(KEYS[:3]), rng.randrange(3 * 3600), rng.choice([None, 5.0, 10.0, 60.0]), f"log:{n}")
        for n in range(80)
    ]
    size = timedelta(minutes=30)
    stream = _arriving_late(verdicts, rng, 3 * 3600)
    expected = expected_rows(verdicts, size)
    run_stream(stream.advance_watermark_to_infinity(), size, timedelta(minutes=20), expected)
    with TestPipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
        batches = [verdict_block(verdicts[at : at + 7]) for at in range(0, len(verdicts), 7)]
        out = p | beam.Create(batches) | CrawlDelayAudit(size, timedelta(minutes=20), bounded=True)
        rows = (
            out["crawl_delay_violations"] | "V" >> beam.Map(lambda r: ("violation", violation_tuple(r))),
            out["crawl_delay_windows"] | "W" >> beam.Map(lambda r: ("window", window_tuple(r))),
        ) | beam.Flatten()
        assert_that(rows, equal_to(expected))


def backoff_tuple(row: dict) -> tuple:
    """A back-off row as written (JSON-ready), as a tuple."""
    row = records.to_json_ready(row, records.BACKOFF) if isinstance(row["at"], datetime) else row
    key = (row["host"], row["crawler"], row["operator"], row["identity"])
    return key, row["at"], row["status"], row["retry_after_s"], row["next_request_after_s"], row["backed_off"], row["source"]


def backoff_reference(verdicts: list[dict]) -> list[tuple]:
    """Each key's crawler requests sorted by time and judged whole by the rule."""
    by_key = {}
    for v in sorted(verdicts, key=lambda v: (v["ts"], v["source"])):
        if v["client_kind"] == "crawler":
            by_key.setdefault(crawl_delay.key_of(v), []).append(
                backoff.Request(v["ts"], v["status"], v["retry_after"], v["source"])
            )
    return [backoff_tuple(row) for key, ordered in by_key.items() for row in backoff.rows(key, backoff.findings(ordered))]


@pytest.mark.slow
def test_backoff_on_a_stream_equals_backoff_in_batch_across_windows_and_late_arrivals(tmp_path):
    """429s and 503s, with and without Retry-After, to crawlers whose requests arrive out of order
    and across window boundaries (an automated client among them, which does not count): the
    stream judges each answer as the batch run does, the last answers of a key, which no request
    follows, when the stream ends."""
    rng = random.Random(20261207)
    verdicts = []
    for n in range(90):
        v = verdict(rng.choice(KEYS[:3]), rng.randrange(2 * 3600), 10.0, f"log:{n}")
        v["status"] = rng.choice([200, 200, 200, 429, 503])
        v["retry_after"] = rng.choice([None, None, "30", "600"]) if v["status"] in (429, 503) else None
        v["client_kind"] = "automated" if n % 10 == 0 else "crawler"
        verdicts.append(v)
    # Each key's last request asked to slow down: judged only when the stream ends.
    for key in KEYS[:3]:
        last = verdict(key, 2 * 3600 + 5, 10.0, f"last:{key[3]}:{key[0]}")
        verdicts.append({**last, "status": 503, "retry_after": None, "client_kind": "crawler"})
    expected = backoff_reference(verdicts)
    assert {row[5] for row in expected} == {True, False, None} and len(expected) > 20
    size = timedelta(minutes=30)
    stream = _arriving_late(verdicts, rng, 2 * 3600 + 600)
    # Rows a timer emits on the jump to infinity escape assert_that on this runner: the stream's
    # rows are written as a stream writes them and read back once it has ended.
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream.advance_watermark_to_infinity() | CrawlDelayAudit(size, timedelta(minutes=20), bounded=False)
        out[records.BACKOFF_TABLE] | sinks.WriteBundleFiles(str(tmp_path), records.BACKOFF, "jsonl")
    streamed = [backoff_tuple(row) for row in _rows(tmp_path)]
    assert sorted(streamed) == sorted(expected)
    with TestPipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
        batches = [verdict_block(verdicts[at : at + 7]) for at in range(0, len(verdicts), 7)]
        out = p | beam.Create(batches) | CrawlDelayAudit(size, timedelta(minutes=20), bounded=True)
        assert_that(out[records.BACKOFF_TABLE] | beam.Map(backoff_tuple), equal_to(expected))


# ---- The folder source


def _log_line(moment: datetime, path: str, host: str = "example.com", ip: str = "157.55.39.10") -> str:
    stamp = moment.strftime("%d/%b/%Y:%H:%M:%S +0000")
    return f'{host} {ip} - - [{stamp}] "GET {path} HTTP/1.1" 200 512 "-" "{BINGBOT}"'


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A robots table, a bingbot range and an empty folder the logs will appear in."""
    (tmp_path / "robots.jsonl").write_text(
        json.dumps({"host": "example.com", "effective_from": "2026-11-01T00:00:00Z", "status": 200, "body": ROBOTS_V1})
        + "\n"
    )
    ranges = tmp_path / "ranges" / "bingbot"
    ranges.mkdir(parents=True)
    (ranges / "2026-10-30.json").write_text(json.dumps({"prefixes": [{"ipv4Prefix": "157.55.39.0/24"}]}))
    (tmp_path / "incoming").mkdir()
    return tmp_path


def test_a_poll_lists_the_files_stamped_with_their_first_request(site):
    folder = site / "incoming"
    poll = stream_sources.LogFolderPoll("host_combined", None, None)
    assert poll(str(folder / "*.log.gz")).outputs == ()
    assert poll(str(site / "missing" / "*.log.gz")).outputs == ()
    first = T0 + timedelta(minutes=3)
    (folder / "a.log.gz").write_bytes(gzip.compress(f"junk\n{_log_line(first, '/')}\n".encode()))
    (folder / "b.log.gz").write_bytes(gzip.compress(b"nothing that parses\n"))
    os.utime(folder / "b.log.gz", (1_700_000_000, 1_700_000_000))
    (folder / "c.tmp").write_text("not matched")
    found = {Path(out.value).name: out.timestamp for out in poll(str(folder / "*.log.gz")).outputs}
    assert found == {"a.log.gz": Timestamp(micros=crawl_delay.micros(first)), "b.log.gz": Timestamp(1_700_000_000)}


def test_a_poll_passes_over_fifos_and_devices_without_opening_them(site):
    folder = site / "incoming"
    (folder / "a.log").write_text(_log_line(T0, "/") + "\n")
    os.mkfifo(folder / "b.log")  # opening it for reading would wait for a writer forever
    (folder / "c.log").symlink_to("/dev/zero")
    (folder / "d.log").symlink_to(folder / "a.log")  # a link to a regular file is a log like any
    poll = stream_sources.LogFolderPoll("host_combined", None, None)
    assert sorted(Path(out.value).name for out in poll(str(folder / "*.log")).outputs) == ["a.log", "d.log"]


@pytest.mark.slow
def test_a_fifo_among_the_logs_never_blocks_a_streaming_run_and_watch_for_ends_it(site):
    """For real, from the command line: `--watch-for` ends the job though a FIFO sits among the files."""
    folder = site / "incoming"
    (folder / "example.com.log").write_text(_log_line(T0, "/a") + "\n" + _log_line(T0 + timedelta(seconds=9), "/b") + "\n")
    os.mkfifo(folder / "stuck.log")
    out = site / "out"
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from pipeline.cli.main import main; sys.exit(main(sys.argv[1:]))",
         "run", "--streaming", "--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK",
         f"--logs={folder / '*.log'}", "--log-format=host_combined", f"--robots={site / 'robots.jsonl'}",
         f"--ranges={site / 'ranges'}", f"--out={out}", "--poll-interval=0.2s", "--watch-for=3s",
         "--robots-refresh=0", "--window=1h"],
        capture_output=True, text=True, timeout=240, cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(row["path"] for row in _rows(out / "verdicts")) == ["/a", "/b"]


def _hour_file(hour: int, seconds: list[int], junk: bool = False) -> bytes:
    start = T0.replace(hour=hour)
    lines = [_log_line(start + timedelta(seconds=s), f"/p{s}") for s in seconds]
    return gzip.compress(("\n".join(lines + (["-- junk --"] if junk else [])) + "\n").encode())


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for part in folder.glob("part-*.jsonl") for line in part.read_text().splitlines()]


@pytest.mark.slow
def test_the_folder_source_audits_files_that_appear_while_it_runs(site):
    """Runs for real on the embedded portable runner (FnApiRunner underneath, started without
    blocking): files are added after the start and their results appear while it runs. Its
    cancel() only marks the job cancelled (the runner thread keeps polling), so the source is
    stopped by `--watch-for` instead, and the pipeline then finishes on its own. (This runner
    holds a Flatten of two stages' outputs, the dead letters, until its inputs finish; the
    other tables are written as the files come in.)"""
    out = site / "out"
    argv = [
        "--streaming", "--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK",
        f"--logs={site / 'incoming' / '*.log.gz'}", "--log-format=host_combined",
        f"--robots={site / 'robots.jsonl'}", f"--ranges={site / 'ranges'}", f"--out={out}",
        "--poll-interval=0.2s", "--watch-for=10s", "--robots-refresh=0", "--window=1h", "--allowed-lateness=5m",
    ]
    pipeline = stream_graph(argv)
    files = {  # hour -> seconds of bingbot requests; the delay is 5 s
        10: [0, 2, 100, 3598],  # 0 -> 2 too soon
        11: [2, 9, 10, 3000],  # 3598 -> 11:00:02 too soon across the files; 9 -> 10 too soon
        12: [30],
    }
    result = pipeline.run()
    for hour, seconds in files.items():
        time.sleep(0.5)
        staged = site / f".{hour}.part"
        staged.write_bytes(_hour_file(hour, seconds, junk=hour == 11))
        staged.rename(site / "incoming" / f"example.com.{hour}.log.gz")  # appears complete
    # A next-day file moves the watermark past every hour above, on any runner.
    (site / "incoming" / "example.com.next.log.gz").write_bytes(
        gzip.compress((_log_line(T0 + timedelta(days=1), "/") + "\n").encode())
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_rows(out / "crawl_delay_violations")) < 3:
        time.sleep(0.2)
    seen_while_running = result.state == "RUNNING"
    result.wait_until_finish()
    assert seen_while_running, "the results should appear before the source stops"
    gaps = sorted(row["gap_s"] for row in _rows(out / "crawl_delay_violations"))
    assert gaps == [1.0, 2.0, 4.0]
    assert len(_rows(out / "verdicts")) == sum(map(len, files.values())) + 1
    assert [row["reason"] for row in _rows(out / "dead_letters")] == ["no-match"]
    windows = {row["window_start"]: (row["requests"], row["violations"]) for row in _rows(out / "crawl_delay_windows")}
    assert windows == {
        "2026-11-02T10:00:00Z": (4, 1),
        "2026-11-02T11:00:00Z": (4, 2),
        "2026-11-02T12:00:00Z": (1, 0),
        "2026-11-03T10:00:00Z": (1, 0),  # released when the source stopped
    }


# ---- The robots table, refreshed while the pipeline runs


def _write_table(path: Path, *bodies: tuple[str, str]) -> None:
    path.write_text(
        "".join(
            json.dumps({"host": "example.com", "effective_from": when, "status": 200, "body": body}) + "\n"
            for when, body in bodies
        )
    )


def test_a_version_added_to_the_table_is_picked_up_by_the_next_reload(site):
    table = site / "robots.jsonl"
    registry = load_registry(None)
    ranges = load_ranges(str(site / "ranges"), registry)
    auditor = LineAuditor(
        log_format="host_combined", registry=registry, ranges=ranges, error_limit=timedelta(days=30), grace=timedelta(0)
    )
    line = _log_line(datetime(2026, 11, 5, 12, tzinfo=timezone.utc), "/page")

    def judged(snapshot) -> dict:
        ((kind, verdict_),) = auditor.audit_lines("log", 1, [line], snapshot)
        assert kind == VERDICT
        return verdict_

    before = judged(robots_refresh.robots_snapshot(str(table)))
    assert (before["decision"], before["crawl_delay"]) == ("allowed", 5.0)
    _write_table(table, ("2026-11-01T00:00:00Z", ROBOTS_V1), ("2026-11-05T00:00:00Z", ROBOTS_V2))
    after = judged(robots_refresh.robots_snapshot(str(table)))
    assert (after["decision"], after["crawl_delay"]) == ("disallowed", 20.0)
    assert after["robots_version"]["effective_from"] == datetime(2026, 11, 5, tzinfo=timezone.utc)


def test_a_broken_table_keeps_the_previous_one_in_force(site):
    reload = robots_refresh.ReloadRobotsTableFn(str(site / "robots.jsonl"))
    reload.reloads, reload.failures = _Counter(), _Counter()
    (snapshot,) = reload.process(0)
    assert list(snapshot) == ["example.com"]
    (site / "robots.jsonl").write_text('{"host": "example.com", "status": 200}\n')  # no effective_from
    assert list(reload.process(1)) == []
    assert (reload.reloads.value, reload.failures.value) == (1, 1)


def _labels(pipeline: beam.Pipeline) -> set[str]:
    """Every transform's label, read back from the portable graph (so it also serializes)."""
    proto = pipeline.to_runner_api()
    return {transform.unique_name for transform in proto.components.transforms.values()}


def _transform(pipeline: beam.Pipeline, label: str) -> beam.PTransform:
    found = []

    class Find(PipelineVisitor):
        def enter_composite_transform(self, node):
            self.visit_transform(node)

        def visit_transform(self, node):
            if node.full_label == label:
                found.append(node.transform)

    pipeline.visit(Find())
    (transform,) = found
    return transform


def _stream_argv(site: Path, *flags: str) -> list[str]:
    return [
        "--streaming", f"--robots={site / 'robots.jsonl'}", f"--ranges={site / 'ranges'}",
        "--log-format=host_combined", *flags,
    ]


@pytest.mark.slow
def test_the_refreshing_graph_builds(site):
    # PeriodicImpulse does not run on the local runners, so the refresh is checked by construction.
    pipeline = stream_graph(
        _stream_argv(site, f"--logs={site / 'incoming' / '*'}", f"--out={site / 'out'}", "--runner=FlinkRunner")
    )
    labels = _labels(pipeline)
    for label in (
        "RefreshRobotsTable/RobotsRefreshTicks",
        "RefreshRobotsTable/ReloadRobotsTable",
        "RefreshRobotsTable/LatestRobotsTable",
        "ReadLogStream/WatchForNewFiles",
        "AuditLogLines/AuditLineBatches",
        "CrawlDelayAudit/StampAndKeyByCrawler",
        "CrawlDelayAudit/ReleaseInEventTimeOrder",
        "UnbatchVerdicts",
        "WriteCrawlDelayWindows/WriteBundles",
    ):
        assert label in labels
    audit = next(
        t for t in pipeline.to_runner_api().components.transforms.values()
        if t.unique_name == "AuditLogLines/AuditLineBatches/ParDo(AuditLineBatchFn)"
    )
    assert len(audit.inputs) == 2  # the batches and the robots snapshot


# ---- Deployment graphs, built offline


@pytest.mark.slow
def test_the_pubsub_to_bigquery_graph_builds_offline(site):
    pytest.importorskip("google.cloud.bigquery", reason="needs the [gcp] extra")
    pipeline = stream_graph(
        _stream_argv(
            site,
            "--pubsub-subscription=projects/my-project/subscriptions/access-logs",
            "--pubsub-timestamp-attribute=ts",
            "--bigquery-dataset=my-project:crawl_audit",
            # STORAGE_WRITE_API, the production choice, needs a Java expansion service to build.
            "--bigquery-method=STREAMING_INSERTS",
            "--runner=FlinkRunner",
        )
    )
    labels = _labels(pipeline)
    assert "ReadLogStream/ReadPubSub" in labels
    for table in graph.RECORD_TABLES:
        assert f"Write{table.title().replace('_', '')}/WriteToBigQuery" in labels
    write = _transform(pipeline, "WriteCrawlDelayViolations/WriteToBigQuery")
    reference = write.table_reference
    assert (reference.projectId, reference.datasetId, reference.tableId) == ("my-project", "crawl_audit", "crawl_delay_violations")
    assert write.schema == bigquery_schema(records.CRAWL_DELAY_VIOLATIONS)


def test_the_kafka_graph_builds_with_an_expansion_service(site):
    address = os.environ.get("CRAWL_AUDIT_EXPANSION_SERVICE")
    if not address:
        pytest.skip(
            "ReadFromKafka is expanded by Beam's Java expansion service: set CRAWL_AUDIT_EXPANSION_SERVICE=host:port"
            " (java -jar beam-sdks-java-io-expansion-service-2.77.0.jar PORT) to build the Kafka graph"
        )
    pipeline = stream_graph(
        _stream_argv(
            site, "--kafka-bootstrap=kafka:9092", "--kafka-topic=access-logs",
            f"--kafka-expansion-service={address}", f"--out={site / 'out'}", "--runner=FlinkRunner",
        )
    )
    assert "ReadLogStream/ReadKafka" in _labels(pipeline)


# ---- Pieces of the sources and sinks


def test_pubsub_and_kafka_messages_become_named_line_batches():
    from apache_beam.io.gcp.pubsub import PubsubMessage

    message = PubsubMessage(b"line one\r\nline two\n", {}, message_id="17")
    assert list(stream_sources.pubsub_batches(message)) == [("pubsub:17", 1, ["line one", "line two"])]
    record = beam.Row(topic="logs", partition=3, offset=42, value=b"\xffline")
    assert list(stream_sources.kafka_batches(record)) == [("kafka:logs/3@42", 1, ["\\xffline"])]


def test_a_message_line_over_the_maximum_is_one_long_line_between_batches():
    from apache_beam.io.gcp.pubsub import PubsubMessage

    data = b"one\n" + b"\0" * (MAX_LINE_BYTES + 1) + b"\nthree\n"
    assert list(stream_sources.pubsub_batches(PubsubMessage(data, {}, message_id="9"))) == [
        ("pubsub:9", 1, ["one"]),
        LongLine("pubsub:9", 2, MAX_LINE_BYTES + 1, "\0" * LONG_LINE_PREFIX_BYTES),
        ("pubsub:9", 3, ["three"]),
    ]


def test_bigquery_rows_follow_the_derived_schema():
    requests = [crawl_delay.request_of(verdict(KEY, s, 10.0)) for s in (0, 4)]
    ((row,), _) = crawl_delay.rows(KEY, None, requests, timedelta(hours=1))
    inserted = sinks.bigquery_row(row, records.CRAWL_DELAY_VIOLATIONS, beam_timestamps=False)
    assert inserted["ts"] == "2026-11-02T10:00:04Z"
    assert inserted["robots_version"]["effective_from"] == "2026-11-01T00:00:00Z"
    storage = sinks.bigquery_row(row, records.CRAWL_DELAY_VIOLATIONS, beam_timestamps=True)
    assert storage["ts"] == Timestamp(micros=crawl_delay.micros(row["ts"]))
    fields = [field["name"] for field in bigquery_schema(records.CRAWL_DELAY_VIOLATIONS)["fields"]]
    assert list(inserted) == fields
    assert sinks.bigquery_row({"tokens": None}, records.VERDICTS, False)["tokens"] == []


def test_bundle_files_are_named_by_content_so_a_retry_does_not_duplicate(tmp_path):
    requests = [crawl_delay.request_of(verdict(KEY, s, 10.0)) for s in (0, 4, 4000)]
    _, rows = crawl_delay.rows(KEY, None, requests, timedelta(hours=1))
    columns = records.CRAWL_DELAY_WINDOWS
    first = sinks.write_records_file(str(tmp_path), rows, columns, "jsonl")
    again = sinks.write_records_file(str(tmp_path), rows, columns, "jsonl")
    assert first == again and [p.name for p in tmp_path.iterdir()] == [Path(first).name]
    assert [json.loads(line)["window_start"] for line in Path(first).read_text().splitlines()] == [
        "2026-11-02T10:00:00Z", "2026-11-02T11:00:00Z",
    ]
    parquet = sinks.write_records_file(str(tmp_path / "p"), rows, columns, "parquet")
    assert [row["violations"] for row in pq.read_table(parquet).to_pylist()] == [1, 0]


def test_a_streaming_run_needs_one_source_and_one_sink(capsys):
    def problems(*flags: str) -> str:
        with pytest.raises(ValueError) as raised:
            run_settings(["--streaming", "--runner=FlinkRunner", *flags])
        return str(raised.value)

    found = problems("--robots=t.jsonl", "--logs=a/*", "--pubsub-subscription=s")
    assert "give one source" in found and "give one sink" in found
    assert problems("--robots=t.jsonl", "--kafka-bootstrap=k:9092", "--out=o") == (
        "--kafka-topic is required with --kafka-bootstrap"
    )
    assert run_audit(["--streaming", "--robots=t", "--logs=a", "--out=o", "--allowed-lateness=soon"]) == 2
    assert capsys.readouterr().err == (
        "crawl-audit: --allowed-lateness: not a duration: 'soon' (try 24h, 90m, 30d)"
        " (see crawl-audit run --help)\n"
    )


def test_a_local_streaming_run_refuses_a_robots_refresh_it_could_never_deliver(site, capsys):
    argv = _stream_argv(site, f"--logs={site / 'incoming' / '*'}", f"--out={site / 'out'}", "--runner=FnApiRunner")
    assert run_audit(argv) == 2
    assert "use --robots-refresh 0" in capsys.readouterr().err


def test_early_change_panes_are_written_where_the_runner_keeps_a_clock(site, capsys):
    folder = (f"--logs={site / 'incoming' / '*'}", f"--out={site / 'out'}")
    flink, _ = run_settings(_stream_argv(site, *folder, "--runner=FlinkRunner"))
    local, _ = run_settings(_stream_argv(site, *folder, "--runner=FnApiRunner", "--robots-refresh=0"))
    assert (flink.stream.changes_every, local.stream.changes_every) == (timedelta(minutes=10), timedelta(0))
    asked, _ = run_settings(_stream_argv(site, *folder, "--runner=FlinkRunner", "--changes-every=1h"))
    assert asked.stream.changes_every == timedelta(hours=1)
    argv = _stream_argv(site, *folder, "--runner=FnApiRunner", "--robots-refresh=0", "--changes-every=5m")
    assert run_audit(argv) == 2
    assert "use --changes-every 0" in capsys.readouterr().err


def test_the_schema_command_prints_the_derived_schemas(capsys):
    from pipeline.cli.main import main

    assert main(["schema", "crawl_delay_windows", "--format", "bigquery"]) == 0
    assert json.loads(capsys.readouterr().out) == bigquery_schema(records.CRAWL_DELAY_WINDOWS)["fields"]
    assert main(["schema", "--format", "json"]) == 0
    schemas = json.loads(capsys.readouterr().out)
    assert set(schemas) == set(records.TABLES)
    gap = schemas["crawl_delay_windows"]["properties"]["min_gap_s"]
    assert gap["anyOf"] == [{"type": "number"}, {"type": "null"}]


# ---- Bounded worker state


@pytest.mark.slow
def test_a_long_stream_of_table_refreshes_keeps_the_worker_bounded():
    """Months of refreshes, each changing every host's current robots.txt: the worker keeps one
    parsed history per host, at most `max_histories` of them, and its memory stops growing."""
    import gc
    import tracemalloc

    from matcher.history import RobotsVersion
    from matcher.line_auditor import host_versions

    registry = load_registry(None)
    auditor = LineAuditor(
        log_format="host_combined", registry=registry, ranges=load_ranges(None, registry),
        error_limit=timedelta(days=30), grace=timedelta(0), max_histories=6,
    )
    hosts = [f"site{n}.example" for n in range(10)]
    first, current = datetime(2026, 11, 1, tzinfo=timezone.utc), datetime(2026, 11, 2, tzinfo=timezone.utc)
    moment = current + timedelta(hours=10)

    def refreshed(refresh: int) -> dict:
        def versions(host: str) -> list[RobotsVersion]:
            return [
                RobotsVersion(host, first, 200, b"User-agent: *\nAllow: /\n"),
                RobotsVersion(host, current, 200, f"User-agent: *\nDisallow: /r{refresh}/\n".encode()),
            ]
        return {host: host_versions(versions(host)) for host in hosts}

    def audit_refresh(refresh: int) -> None:
        lines = [_log_line(moment, f"/r{refresh}/x", host=host) for host in hosts[: 4 + refresh % 6]]
        decisions = [record["decision"] for _, record in auditor.audit_lines("log", 1, lines, refreshed(refresh))]
        assert decisions == ["disallowed"] * len(lines)  # each line judged by its refresh's table
        assert auditor.cached_histories <= 6

    for refresh in range(100):  # warm-up: parsers, the range index, interned strings
        audit_refresh(refresh)
    gc.collect()
    tracemalloc.start()
    try:
        audit_refresh(100)
        gc.collect()
        warm, _ = tracemalloc.get_traced_memory()
        for refresh in range(101, 1000):
            audit_refresh(refresh)
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Every history kept would be about 2 KB per host and refresh: megabytes here.
    assert after - warm < 32 * 1024, f"grew by {after - warm} bytes over 900 refreshes"


# ---- Streaming equals batch on the bundled sample


def _sample_run_argv(logs: str, out: Path) -> list[str]:
    samples = REPO / "samples"
    return [
        f"--logs={logs}", f"--out={out}", "--log-format=host_combined",
        f"--robots={samples / 'robots' / 'history.jsonl'}", f"--ranges={samples / 'ranges'}",
        "--window=1h", "--allowed-lateness=15m",
    ]


def _tables(out: Path) -> dict[str, list]:
    """Each record table as sorted JSON texts, the file part of sources cut to the file name."""
    tables = {}
    for table in graph.RECORD_TABLES:
        rows = []
        for row in _rows(out / table):
            for key in ("source", "prev_source"):
                if row.get(key):
                    row[key] = Path(row[key]).name
            fetched = row.get("robots_fetch")
            if fetched:
                fetched["source"] = Path(fetched["source"]).name
            rows.append(json.dumps(row, sort_keys=True))
        tables[table] = sorted(rows)
    return tables


@pytest.mark.slow
def test_streaming_equals_batch_on_the_sample_dropped_in_by_day(tmp_path):
    """The bundled sample's files (the first quarter of each, `helpers.sample_slice`) appear in the
    watched folder a day at a time while the stream runs; its verdicts (each judged by the robots.txt its crawler had fetched), dead letters,
    violations, windows, robots.txt fetches, change audit and back-off findings are a batch run's over the same files."""
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    logs = str(incoming / "*.log.gz")
    argv = [
        "--streaming", "--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK",
        "--poll-interval=0.3s", "--watch-for=15s", "--robots-refresh=0", "--changes-every=0",
        *_sample_run_argv(logs, tmp_path / "stream"),
    ]
    pipeline = stream_graph(argv)
    result = pipeline.run()
    sliced = sample_slice(tmp_path / "sample")
    for day in ("2026-11-02", "2026-11-03", "2026-11-04"):
        time.sleep(2)
        for sample in sorted(sliced.glob(f"*.{day}.log.gz")):
            staged = tmp_path / sample.name
            staged.write_bytes(sample.read_bytes())
            staged.rename(incoming / sample.name)
    result.wait_until_finish()

    stream_graph(["--runner=FnApiRunner", *_sample_run_argv(logs, tmp_path / "batch")]).run().wait_until_finish()

    streamed, batched = _tables(tmp_path / "stream"), _tables(tmp_path / "batch")
    assert len(batched["verdicts"]) > 1000 and batched["crawl_delay_violations"] and batched["crawl_delay_windows"]
    assert batched["robots_fetches"] and any('"robots_fetch": {' in row for row in batched["verdicts"])
    assert batched["changes"]
    assert batched["backoff"]  # the 503s the shop answered Googlebot
    for table in graph.RECORD_TABLES:
        assert streamed[table] == batched[table], table
