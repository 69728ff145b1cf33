"""The robots.txt each crawler fetched, end to end: `crawl-audit run` on logs whose crawlers ask
for /robots.txt in other files and out of order, in one process and in worker processes, against
the brute-force reference; a later run that starts from an earlier run's fetch table; and a
stream that follows them in event time, with data out of order and late."""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that
from apache_beam.transforms.window import TimestampedValue
from apache_beam.utils.timestamp import Timestamp
from hypothesis import given, settings
from hypothesis import strategies as st

from config.registry import load_registry
from config.snapshots import load_ranges
from helpers import BINGBOT, BINGBOT_IP, GOOGLEBOT, REPO, log_line, read_jsonl, run_audit, write_jsonl
from matcher.history import RobotsVersion
from matcher.line_auditor import VERDICT, LineAuditor, robots_by_host
from matcher.robots_fetches import RobotsFetch
from matcher.timerange import micros
from pipeline.graph.robots_fetches import FollowRobotsFetchesOnStream
from robots_fetches_reference import reference_decision

HOST = "www.example.com"
T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)
HOUR = timedelta(hours=1)
OPEN = "User-agent: *\nDisallow: /private\n"
CLOSED = "User-agent: *\nDisallow: /private\nDisallow: /new\n"
CHANGE = T0 + 10 * HOUR
CLAUDEBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
CLAUDEBOT_IP = "216.73.216.10"
GOOGLE_IP = "66.249.66.1"
ELSEWHERE = "203.0.113.9"  # in no crawler's range: a Googlebot from here is spoofed


def _robots(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "robots.jsonl", [
        {"host": HOST, "effective_from": "2026-11-02T00:00:00Z", "status": 200, "body": OPEN},
        {"host": HOST, "effective_from": "2026-11-02T10:00:00Z", "status": 200, "body": CLOSED},
    ])


def _write_logs(folder: Path, files: dict[str, list[str]]) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in files.items():
        (folder / name).write_text("".join(line + "\n" for line in lines))
    return str(folder / "*.log")


def _run(tmp_path: Path, logs: str, out: str, *extra: str) -> list[dict]:
    argv = [
        f"--logs={logs}", "--log-format=host_combined", f"--robots={_robots(tmp_path)}",
        f"--ranges={REPO / 'samples/ranges'}", f"--out={tmp_path / out}", "--runner=FnApiRunner", *extra,
    ]
    assert run_audit(argv) == 0
    return read_jsonl(tmp_path / out / "verdicts")


def _at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def _one(verdicts: list[dict], crawler: str, identity: str, path: str) -> dict:
    (found,) = [v for v in verdicts if (v["crawler"], v["identity"], v["path"]) == (crawler, identity, path)]
    return found


def _scenario_logs() -> dict[str, list[str]]:
    # The crawls are in the first file and the fetches in the second, so a fetch is read after
    # the request it must decide.
    return {
        "a-crawls.log": [
            log_line(HOST, _at(12), "/new", BINGBOT),
            log_line(HOST, _at(12), "/new", CLAUDEBOT, ip=CLAUDEBOT_IP),
            log_line(HOST, _at(12), "/new", GOOGLEBOT, ip=GOOGLE_IP),
            log_line(HOST, _at(12.5), "/new", GOOGLEBOT, ip=ELSEWHERE),
        ],
        "b-fetches.log": [
            log_line(HOST, _at(1), "/robots.txt", BINGBOT),
            log_line(HOST, _at(11), "/robots.txt", BINGBOT),  # an hour after the change
            log_line(HOST, _at(1), "/robots%2Etxt", CLAUDEBOT, ip=CLAUDEBOT_IP),  # never again
            log_line(HOST, _at(11), "/robots.txt", GOOGLEBOT, ip=ELSEWHERE),  # a spoofed Googlebot's fetch
        ],
    }


@pytest.mark.slow
@pytest.mark.parametrize("processes", [[], ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]])
def test_each_verdict_is_judged_by_what_its_crawler_had_fetched(tmp_path, processes):
    verdicts = _run(tmp_path, _write_logs(tmp_path / "logs", _scenario_logs()), "out", *processes)

    refetched = _one(verdicts, "bingbot", "verified", "/new")
    assert refetched["decision"] == "disallowed" and not refetched["grace_assumed"]
    assert refetched["robots_fetch"]["ts"] == "2026-11-02T11:00:00Z"
    assert refetched["robots_fetch"]["version"]["effective_from"] == "2026-11-02T10:00:00Z"

    stale = _one(verdicts, "ClaudeBot", "verified", "/new")
    assert stale["decision"] == "disallowed-before-refetch"
    assert (stale["unread_change"], stale["unread_for_s"]) == ("2026-11-02T10:00:00Z", 7200.0)
    assert stale["robots_fetch"]["ts"] == "2026-11-02T01:00:00Z" and stale["robots_fetch"]["status"] == 200

    # The real Googlebot never fetched: the spoofed one's fetch is not its own.
    real = _one(verdicts, "Googlebot", "verified", "/new")
    assert real["decision"] == "disallowed-within-grace" and real["grace_assumed"]
    assert real["robots_fetch"] is None and real["grace_from"] == "2026-11-02T00:00:00Z"
    spoofed = _one(verdicts, "Googlebot", "spoofed", "/new")
    assert spoofed["decision"] == "disallowed" and spoofed["robots_fetch"]["ts"] == "2026-11-02T11:00:00Z"

    fetches = read_jsonl(tmp_path / "out" / "robots_fetches")
    assert sorted((f["family"], f["identity"], f["ts"]) for f in fetches) == [
        ("ClaudeBot", "verified", "2026-11-02T01:00:00Z"),
        ("Google", "spoofed", "2026-11-02T11:00:00Z"),
        ("bingbot", "verified", "2026-11-02T01:00:00Z"),
        ("bingbot", "verified", "2026-11-02T11:00:00Z"),
    ]
    summary = {(row["crawler"], row["identity"]): row for row in read_jsonl(tmp_path / "out" / "summary")}
    assert summary["ClaudeBot", "verified"]["before_refetch"] == 1


@pytest.mark.slow
def test_past_the_grace_without_a_refetch_it_is_a_plain_violation(tmp_path):
    logs = _write_logs(tmp_path / "logs", {"one.log": [
        log_line(HOST, _at(1), "/robots.txt", CLAUDEBOT, ip=CLAUDEBOT_IP),
        log_line(HOST, _at(35), "/new", CLAUDEBOT, ip=CLAUDEBOT_IP),
    ]})
    stale = _one(_run(tmp_path, logs, "out"), "ClaudeBot", "verified", "/new")
    assert stale["decision"] == "disallowed" and stale["unread_for_s"] == 25 * 3600.0


@pytest.mark.slow
def test_a_later_run_starts_from_the_earlier_runs_fetches(tmp_path):
    first = _write_logs(tmp_path / "day1", {"day1.log": [
        log_line(HOST, _at(1), "/robots.txt", CLAUDEBOT, ip=CLAUDEBOT_IP),
        log_line(HOST, _at(2), "/robots.txt", BINGBOT),
    ]})
    _run(tmp_path, first, "out1")
    second = _write_logs(tmp_path / "day2", {"day2.log": [
        log_line(HOST, _at(12), "/new", CLAUDEBOT, ip=CLAUDEBOT_IP),
        log_line(HOST, _at(11), "/robots.txt", BINGBOT),
    ]})
    verdicts = _run(tmp_path, second, "out2", f"--prior-run={tmp_path / 'out1'}")
    stale = _one(verdicts, "ClaudeBot", "verified", "/new")
    assert stale["decision"] == "disallowed-before-refetch"
    assert stale["robots_fetch"]["source"].endswith("day1.log:1")
    carried = read_jsonl(tmp_path / "out2" / "robots_fetches")
    # bingbot's fetch of day 1 no longer decides what it holds; ClaudeBot's does
    assert sorted((f["family"], f["ts"], f["carried"]) for f in carried) == [
        ("ClaudeBot", "2026-11-02T01:00:00Z", True),
        ("bingbot", "2026-11-02T11:00:00Z", False),
    ]


def test_a_prior_run_without_a_fetch_table_is_one_line_error(tmp_path, capsys):
    logs = _write_logs(tmp_path / "logs", {"one.log": [log_line(HOST, _at(1), "/", BINGBOT)]})
    argv = [
        f"--logs={logs}", "--log-format=host_combined", f"--robots={_robots(tmp_path)}",
        f"--ranges={REPO / 'samples/ranges'}", f"--out={tmp_path / 'out'}", f"--prior-run={tmp_path}",
    ]
    assert run_audit(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("crawl-audit: ") and "no complete run" in line


@pytest.mark.slow
def test_the_pipeline_agrees_with_a_scan_of_every_earlier_fetch(tmp_path):
    rng = random.Random(28)
    crawlers = [(BINGBOT, BINGBOT_IP), (CLAUDEBOT, CLAUDEBOT_IP), (GOOGLEBOT, GOOGLE_IP), (GOOGLEBOT, ELSEWHERE)]
    files: dict[str, list[str]] = {f"part{n}.log": [] for n in range(3)}
    for _ in range(400):
        agent, ip = rng.choice(crawlers)
        when = _at(rng.uniform(0, 48)).replace(microsecond=0)
        if rng.random() < 0.25:
            path, status = "/robots.txt", rng.choice((200, 200, 304, 404, 503))
        else:
            path, status = rng.choice(("/new", "/new/x", "/private", "/open")), 200
        rng.choice(list(files.values())).append(log_line(HOST, when, path, agent, ip=ip, status=status))
    verdicts = _run(tmp_path, _write_logs(tmp_path / "logs", files), "out", "--cache-grace=6h")
    versions = [
        RobotsVersion(HOST, T0, 200, OPEN.encode()), RobotsVersion(HOST, CHANGE, 200, CLOSED.encode()),
    ]
    fetches_by_key: dict[tuple, list[RobotsFetch]] = {}
    for v in verdicts:
        if v["path"] == "/robots.txt":
            key = ("Google" if v["crawler"] == "Googlebot" else v["crawler"], v["identity"])
            fetches_by_key.setdefault(key, []).append(RobotsFetch(_moment(v["ts"]), v["status"], v["source"]))
    judged = 0
    for v in verdicts:
        key = ("Google" if v["crawler"] == "Googlebot" else v["crawler"], v["identity"])
        decision, unread_for = reference_decision(
            versions, timedelta(hours=6), timedelta(days=30), fetches_by_key.get(key, []), _moment(v["ts"]),
            tuple(v["tokens"]), v["path"],
        )
        assert (v["decision"], v["unread_for_s"]) == (
            decision, None if unread_for is None else unread_for.total_seconds()
        ), v["source"]
        judged += decision == "disallowed-before-refetch"
    assert judged  # the logs do hold requests the rule excuses


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# ---- On a stream: followed in event time, out of order and late (TestStream)

LATENESS = timedelta(minutes=30)
STREAM_CRAWLERS = ((BINGBOT, BINGBOT_IP), (CLAUDEBOT, CLAUDEBOT_IP), (GOOGLEBOT, GOOGLE_IP), (GOOGLEBOT, ELSEWHERE))


def _family(verdict: dict) -> tuple[str, str]:
    """(fetch family, identity), as the registry groups Google's crawlers' fetches."""
    return ("Google" if verdict["crawler"] == "Googlebot" else verdict["crawler"], verdict["identity"])


def _stream_auditor() -> LineAuditor:
    registry = load_registry(None)
    return LineAuditor(
        log_format="host_combined", registry=registry, ranges=load_ranges(str(REPO / "samples/ranges"), registry),
        error_limit=timedelta(days=30), grace=timedelta(hours=6),
    )


def _versions(host: str = HOST, shift: timedelta = timedelta(0)) -> list[RobotsVersion]:
    return [RobotsVersion(host, T0 + shift, 200, OPEN.encode()), RobotsVersion(host, CHANGE + shift, 200, CLOSED.encode())]


def _audited(auditor: LineAuditor, number: int, line: str, versions: list[RobotsVersion] | None = None) -> dict:
    """The verdict the stream's audit makes of one line: as when no fetch was seen."""
    ((kind, verdict),) = auditor.audit_lines("log", number, [line], robots_by_host(versions or _versions()))
    assert kind == VERDICT
    return verdict


def _stamp(moment: datetime) -> Timestamp:
    return Timestamp(micros=micros(moment))


def _followed_on_stream(auditor: LineAuditor, stream: TestStream, check, prior=(), versions=None) -> None:
    """Runs the stream's fetch following on `stream` (`prior`: fetches carried over) and hands
    every output to `check` at once: ("verdict", verdict), ("dead", source, reason), ("fetch",
    family, identity, ts)."""
    options = PipelineOptions(["--runner=BundleBasedDirectRunner"])
    options.view_as(StandardOptions).streaming = True
    with TestPipeline(options=options) as p:
        robots = p | "Robots" >> beam.Create([robots_by_host(versions or _versions())])
        out = p | stream | FollowRobotsFetchesOnStream(auditor, robots, LATENESS, prior)
        rows = (
            out["verdict_batches"] | "V" >> beam.FlatMap(lambda batch: [("verdict", v) for v in batch]),
            out["dead_letters"] | "D" >> beam.Map(lambda d: ("dead", d["source"], d["reason"])),
            out["robots_fetches"] | "F" >> beam.Map(lambda f: ("fetch", f["family"], f["identity"], f["ts"])),
        ) | beam.Flatten()
        assert_that(rows, check)


EVENTS = st.lists(
    st.tuples(
        st.integers(0, len(STREAM_CRAWLERS) - 1),
        st.integers(0, 40 * 60),  # minutes after T0
        st.sampled_from(("/robots.txt", "/robots.txt", "/new", "/new/x", "/private", "/open")),
        st.sampled_from((200, 200, 304, 404, 503)),  # a fetch's status
        st.integers(0, 29),  # minutes it arrives behind the watermark, within the lateness
        st.booleans(),  # or three hours behind, a request only: beyond the lateness
    ),
    min_size=1, max_size=40,
)
# Each drawn stream runs on its own host, this far after the one before, so that several of them
# share one pipeline: the watermark has passed a stream's last event before the next one starts.
SCENARIO_SPACING = timedelta(days=10)


@pytest.mark.slow
@settings(max_examples=4, deadline=None)
@given(scenarios=st.lists(EVENTS, min_size=1, max_size=3))
def test_a_stream_agrees_with_a_scan_of_every_earlier_fetch(scenarios):
    auditor = _stream_auditor()
    versions_of = {f"s{k}.example.com": _versions(f"s{k}.example.com", k * SCENARIO_SPACING) for k in range(len(scenarios))}
    versions = [v for listed in versions_of.values() for v in listed]
    verdicts, stream, front, number = [], TestStream(), T0, 0
    for k, events in enumerate(scenarios):
        host, start, arrivals = f"s{k}.example.com", T0 + k * SCENARIO_SPACING, []
        for crawler, minute, path, status, behind, very_late in events:
            number += 1
            agent, ip = STREAM_CRAWLERS[crawler]
            fetch = path == "/robots.txt"
            when = start + timedelta(minutes=minute)
            line = log_line(host, when, path, agent, ip=ip, status=status if fetch else 200)
            verdict = _audited(auditor, number, line, versions)
            verdicts.append(verdict)
            delay = timedelta(hours=3) if very_late and not fetch else timedelta(minutes=behind)
            arrivals.append((when + delay, number, verdict))
        for arrival, _, verdict in sorted(arrivals, key=lambda entry: entry[:2]):
            if arrival > front:
                stream, front = stream.advance_watermark_to(_stamp(arrival)), arrival
            stream = stream.add_elements([TimestampedValue([verdict], _stamp(verdict["ts"]))])
        front += timedelta(days=2)
        stream = stream.advance_watermark_to(_stamp(front))
    # Timers that first fire on the jump to infinity are not seen by assert_that on this runner.
    stream = stream.advance_watermark_to_infinity()

    fetches: dict[tuple, list[RobotsFetch]] = {}
    for v in verdicts:
        if v["path"] == "/robots.txt":
            fetches.setdefault((v["host"], *_family(v)), []).append(RobotsFetch(v["ts"], v["status"], v["source"]))

    def check(rows):
        late = {row[1] for row in rows if row[0] == "dead"}
        out = {row[1]["source"]: row[1] for row in rows if row[0] == "verdict"}
        assert sorted(out) == sorted(v["source"] for v in verdicts)
        for v in verdicts:
            got = out[v["source"]]
            if v["source"] in late:  # what its crawler held then was no longer kept
                expected = (v["decision"], None)
            else:
                decision, unread_for = reference_decision(
                    versions_of[v["host"]], timedelta(hours=6), timedelta(days=30),
                    fetches.get((v["host"], *_family(v)), []), v["ts"], tuple(v["tokens"]), v["path"],
                )
                expected = (decision, None if unread_for is None else unread_for.total_seconds())
            assert (got["decision"], got["unread_for_s"]) == expected, v["source"]
        rows_of_fetches = sorted(row[1:] for row in rows if row[0] == "fetch")
        assert rows_of_fetches == sorted((*key[1:], f.ts) for key, listed in fetches.items() for f in listed)

    _followed_on_stream(auditor, stream, check, versions=versions)


@pytest.mark.slow
def test_a_fetch_later_than_the_allowed_lateness_is_a_dead_letter_and_counts_from_then_on():
    auditor = _stream_auditor()
    before = _audited(auditor, 1, log_line(HOST, _at(12), "/new", BINGBOT))
    fetch = _audited(auditor, 2, log_line(HOST, _at(11), "/robots.txt", BINGBOT))
    after = _audited(auditor, 3, log_line(HOST, _at(15), "/new", BINGBOT))
    stream = (
        TestStream()
        .add_elements([TimestampedValue([before], _stamp(before["ts"]))])
        .advance_watermark_to(_stamp(_at(14)))  # 12:00 released: no fetch seen yet
        .add_elements([TimestampedValue([fetch], _stamp(fetch["ts"]))])
        .add_elements([TimestampedValue([after], _stamp(after["ts"]))])
        .advance_watermark_to(_stamp(_at(20)))
        .advance_watermark_to_infinity()
    )

    def check(rows):
        judged = {row[1]["source"]: row[1] for row in rows if row[0] == "verdict"}
        assert judged["log:1"]["grace_assumed"] and judged["log:1"]["robots_fetch"] is None
        assert judged["log:3"]["decision"] == "disallowed" and judged["log:3"]["robots_fetch"]["source"] == "log:2"
        assert [row[1:] for row in rows if row[0] == "dead"] == [("log:2", "late-beyond-allowed-lateness")]
        assert [row[1:] for row in rows if row[0] == "fetch"] == [("bingbot", "verified", _at(11))]

    _followed_on_stream(auditor, stream, check)


@pytest.mark.slow
def test_a_stream_starts_from_the_fetches_an_earlier_run_carried_over():
    auditor = _stream_auditor()
    request = _audited(auditor, 1, log_line(HOST, _at(12), "/new", CLAUDEBOT, ip=CLAUDEBOT_IP))
    carried = RobotsFetch(_at(1), 200, "day1.log:4", "ClaudeBot", carried=True)
    stream = (
        TestStream()
        .add_elements([TimestampedValue([request], _stamp(request["ts"]))])
        .advance_watermark_to(_stamp(_at(20)))
        .advance_watermark_to_infinity()
    )

    def check(rows):
        ((_, judged),) = rows
        assert judged["decision"] == "disallowed-before-refetch" and judged["robots_fetch"]["source"] == "day1.log:4"

    _followed_on_stream(auditor, stream, check, prior=[((HOST, "ClaudeBot", "verified"), carried)])
