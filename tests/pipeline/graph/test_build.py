"""The audit graph on real Beam runners, on a hand-written fixture whose every verdict is spelled out."""
from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.io import fileio
from apache_beam.io.filesystem import FileMetadata
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from helpers import (
    BINGBOT, GOOGLEBOT, log_line, read_jsonl, run_audit, run_settings, verdict_block, write_jsonl, write_range_snapshot,
)
from pipeline.graph import build as graph
from pipeline.report import text as report
from pipeline.graph.line_audit import VerdictBatch, VerdictBatchCoder, VerdictBlockCoder
from matcher.line_auditor import VERDICT, robots_by_host
from pipeline.graph.read_logs import line_batches
from pipeline.evidence.robots_table import read_robots_table

GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.3; +https://openai.com/gptbot"
CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
FOOBOT = "FooBot/1.0 (+http://foo.example/bot)"

ROBOTS_V1 = (
    "\ufeffUser-agent: Googlebot\r\nDisallow: /private/\r\n\r\n"
    "User-agent: *\r\nDisallow: /tmp/\r\nDisallow: /~user/\r\n"
)
ROBOTS_V2 = ROBOTS_V1.replace("\ufeff", "") + "\r\nUser-agent: GPTBot\r\nDisallow: /\r\n"
BING_ROBOTS = "User-agent: bingbot\nCrawl-delay: 5\nDisallow: /search\n"


# (log line, expected (crawler, identity, decision, reason, rule_line)) — None: no verdict
CASES = [
    (log_line("example.com", "02/Nov/2026:11:00:00 +0100", "/public", GOOGLEBOT, ip="66.249.66.1"),
     ("Googlebot", "verified", "allowed", "no-match", None)),
    (log_line("example.com", "02/Nov/2026:11:05:00 +0100", "/private/a", GOOGLEBOT, ip="66.249.66.1"),
     ("Googlebot", "verified", "disallowed", "rule", 2)),
    (log_line("example.com", "02/Nov/2026:11:06:00 +0100", "/private/a", GOOGLEBOT, ip="203.0.113.9"),
     ("Googlebot", "spoofed", "disallowed", "rule", 2)),
    # v2 blocks GPTBot from 2026-11-03T00:00Z; v1 allowed it until then, so for 24 h it may use its cache
    (log_line("example.com", "03/Nov/2026:06:00:00 +0100", "/page", GPTBOT, ip="20.171.206.5"),
     ("GPTBot", "verified", "disallowed-within-grace", "rule", 9)),
    (log_line("example.com", "04/Nov/2026:06:00:00 +0100", "/page", GPTBOT, ip="20.171.206.5"),
     ("GPTBot", "verified", "disallowed", "rule", 9)),
    # at the very second v2 takes effect, v2 applies
    (log_line("example.com", "03/Nov/2026:01:00:00 +0100", "/x", GPTBOT, ip="20.171.206.5"),
     ("GPTBot", "verified", "disallowed-within-grace", "rule", 9)),
    (log_line("example.com", "02/Nov/2026:12:00:00 +0100", "/tmp/x", CHROME, ip="20.171.206.7"),
     (None, "undeclared", "disallowed", "rule", 5)),
    (log_line("example.com", "02/Nov/2026:12:00:00 +0100", "/tmp/x", CHROME, ip="198.51.100.1"), None),
    (log_line("example.com", "02/Nov/2026:12:00:00 +0100", "/%7euser/cv", FOOBOT, ip="198.51.100.2"),
     ("foobot", "unverifiable", "disallowed", "rule", 6)),
    (log_line("example.com", "01/Nov/2026:23:00:00 +0000", "/early", GOOGLEBOT, ip="66.249.66.1"),
     ("Googlebot", "verified", "unknown", "no-robots-version", None)),
    # during the 503 everything is disallowed, but the cached version from before allowed /x
    (log_line("other.test", "02/Nov/2026:13:30:00 +0100", "/x", BINGBOT, ip="157.55.39.10"),
     ("bingbot", "verified", "disallowed-within-grace", "robots-server-error", None)),
    (log_line("other.test", "02/Nov/2026:13:31:00 +0100", "/robots.txt", BINGBOT, ip="157.55.39.10"),
     ("bingbot", "verified", "allowed", "robots-exempt", None)),
    (log_line("other.test", "02/Nov/2026:15:00:00 +0100", "/search?q=1", BINGBOT, ip="157.55.39.10"),
     ("bingbot", "verified", "disallowed", "rule", 3)),
    ("this is not a log line", None),
    ('example.com 198.51.100.3 - - [02/Nov/2026:12:00:00 +0100] "\\x16\\x03\\x01\\x00" 400 0 "-" "-"', None),
]
DEAD_LETTER_COUNT = 1


@pytest.fixture
def fixture_dir(tmp_path: Path) -> Path:
    (tmp_path / "bodies").mkdir()
    (tmp_path / "bodies" / "v1.txt").write_bytes(ROBOTS_V1.encode())
    (tmp_path / "bodies" / "v2.txt").write_bytes(ROBOTS_V2.encode())
    (tmp_path / "bodies" / "bing.txt").write_bytes(BING_ROBOTS.encode())
    rows = [
        {"host": "example.com", "effective_from": "2026-11-02T00:00:00Z", "status": 200, "body_file": "bodies/v1.txt"},
        {"host": "example.com", "effective_from": "2026-11-03T00:00:00Z", "status": 200, "body_file": "bodies/v2.txt"},
        {"host": "other.test", "effective_from": "2026-11-01T00:00:00Z", "status": 200, "body_file": "bodies/bing.txt"},
        {"host": "other.test", "effective_from": "2026-11-02T12:00:00Z", "status": 503},
        {"host": "other.test", "effective_from": "2026-11-02T13:00:00Z", "status": 200, "body_file": "bodies/bing.txt"},
    ]
    write_jsonl(tmp_path / "robots.jsonl", rows)
    for source, prefix in (
        ("google-common-crawlers", "66.249.64.0/19"),
        ("bingbot", "157.55.39.0/24"),
        ("openai-gptbot", "20.171.206.0/24"),
    ):
        write_range_snapshot(tmp_path / "ranges", source, "2026-10-30", prefix, creationTime="2026-10-30T00:00:00Z")
    log = "\n".join(line for line, _ in CASES) + "\n"
    (tmp_path / "access.log.gz").write_bytes(gzip.compress(log.encode()))
    return tmp_path


def _argv(folder: Path, *extra: str) -> list[str]:
    return [
        f"--logs={folder / 'access.log.gz'}",
        "--log-format=host_combined",
        f"--robots={folder / 'robots.jsonl'}",
        f"--ranges={folder / 'ranges'}",
        f"--out={folder / 'out'}",
        "--runner=FnApiRunner",
        *extra,
    ]


def _expected_verdicts(folder: Path) -> list[tuple]:
    log = folder / "access.log.gz"
    return [(f"{log}:{n}", *expected) for n, (_, expected) in enumerate(CASES, start=1) if expected]


@pytest.mark.slow
def test_every_verdict_of_the_fixture(fixture_dir):
    settings, options = run_settings(_argv(fixture_dir))
    with TestPipeline(options=options) as p:
        outputs = graph.build(p, settings)
        verdicts = outputs["verdict_batches"] | "Verdicts" >> beam.FlatMap(graph.verdict_rows) | "Essentials" >> beam.Map(
            lambda v: (v["source"], v["crawler"], v["identity"], v["decision"], v["reason"], v["rule_line"])
        )
        assert_that(verdicts, equal_to(_expected_verdicts(fixture_dir)), label="Verdicts")
        reasons = outputs["dead_letters"] | "Reasons" >> beam.Map(lambda d: d["reason"])
        assert_that(reasons, equal_to(["no-match"]), label="DeadLetters")
        assert_that(
            outputs["counts"],
            equal_to([{"lines": len(CASES), "verdicts": 12, "skipped": 1, "dead_letters": DEAD_LETTER_COUNT,
                       "not_requests": 1, "not_request_reasons": {"not-http": 1}}]),
            label="Counts",
        )


@pytest.mark.slow
def test_run_writes_parquet_that_reads_back(fixture_dir, capsys):
    assert run_audit(_argv(fixture_dir, "--format=parquet")) == 0
    table = pq.read_table(fixture_dir / "out" / "verdicts")
    rows = table.to_pylist()
    assert len(rows) == 12
    spoofed = next(r for r in rows if r["identity"] == "spoofed")
    assert spoofed["client_ip"] == "203.0.113.9"
    assert spoofed["ts"].isoformat() == "2026-11-02T10:06:00+00:00"
    assert spoofed["robots_version"]["status"] == "200"
    assert spoofed["rule_pattern"] == "/private/"
    assert spoofed["robots_group"] == ["Googlebot"]
    assert str(table.schema.field("ts").type) == "timestamp[us, tz=UTC]"
    dead = pq.read_table(fixture_dir / "out" / "dead_letters").to_pylist()
    assert {d["reason"] for d in dead} == {"no-match"}
    printed = capsys.readouterr().out
    assert "lines read" in printed and "Googlebot" in printed


def _fixture_verdicts(folder: Path) -> list[dict]:
    settings, _ = run_settings(_argv(folder))
    lines = [line for line, _ in CASES]
    robots = robots_by_host(read_robots_table(settings.inputs.robots))
    audited = graph.line_auditor(settings).audit_lines("access.log", 1, lines, robots)
    return [record for kind, record in audited if kind == VERDICT]


@pytest.mark.slow
def test_a_streams_verdict_batches_travel_whole_and_are_sized_from_a_few_verdicts(fixture_dir):
    verdicts = _fixture_verdicts(fixture_dir)
    coder = VerdictBatchCoder()
    batch = verdicts * 50  # as large as the batches of a busy log
    encoded = coder.encode(batch)
    assert coder.decode(encoded) == batch
    assert 0.7 * len(encoded) <= coder.estimate_size(batch) <= 1.3 * len(encoded)
    for small in ([], verdicts[:1], verdicts[:8]):  # sized from every verdict
        assert coder.estimate_size(small) == len(coder.encode(small))
    assert isinstance(beam.coders.registry.get_coder(VerdictBatch), VerdictBatchCoder)


@pytest.mark.slow
def test_a_batch_runs_verdicts_travel_as_arrow_blocks_that_round_trip_and_are_sized_by_their_buffers(fixture_dir):
    block = verdict_block(_fixture_verdicts(fixture_dir) * 50)
    coder = VerdictBlockCoder()
    assert coder.decode(coder.encode(block)).equals(block)
    assert coder.get_impl().estimate_size(block) == block.nbytes
    settings, options = run_settings(_argv(fixture_dir))
    with TestPipeline(options=options) as p:
        outputs = graph.build(p, settings)
        assert outputs["verdict_batches"].element_type is pa.Table
        assert isinstance(beam.coders.registry.get_coder(pa.Table), VerdictBlockCoder)


@pytest.mark.slow
def test_jsonl_output_and_summary_add_up(fixture_dir):
    run_audit(_argv(fixture_dir))
    verdicts = read_jsonl(fixture_dir / "out" / "verdicts")
    assert len(verdicts) == 12
    first = next(v for v in verdicts if v["source"].endswith(":1"))
    assert first["ts"] == "2026-11-02T10:00:00Z"
    assert first["tokens"] == ["googlebot"]
    summary = report.load(str(fixture_dir / "out"))
    assert summary.counts == {"lines": 15, "verdicts": 12, "skipped": 1, "dead_letters": 1,
                              "not_requests": 1, "not_request_reasons": {"not-http": 1}}
    gpt = next(r for r in summary.rows if r["crawler"] == "GPTBot")
    assert (gpt["requests"], gpt["disallowed"], gpt["within_grace"]) == (3, 1, 2)


@pytest.mark.parametrize(
    ("name", "compress"),
    [
        # Rotated logs are often concatenated as they are: every member is read.
        ("access.log.gz", lambda data: gzip.compress(data[:7]) + gzip.compress(data[7:])),
        ("access.log.bz2", lambda data: bz2.compress(data[:7]) + bz2.compress(data[7:])),
        ("access.log", lambda data: data),
    ],
)
def test_log_files_are_read_whole_and_in_order_whatever_the_compression(tmp_path, name, compress):
    lines = [f"line {n} caf\u00e9" for n in range(1, 6)] + ["bad byte \\xff"]
    data = ("\n".join(lines[:-1]) + "\nbad byte ").encode() + b"\xff\r\n"
    (tmp_path / name).write_bytes(compress(data))
    readable = fileio.ReadableFile(FileMetadata(str(tmp_path / name), 0))
    batches = list(line_batches(readable, 4))
    assert [(first, batch) for _, first, batch in batches] == [(1, lines[:4]), (5, lines[4:])]
