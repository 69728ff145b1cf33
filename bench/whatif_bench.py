"""Seconds for `crawl-audit whatif` to decide a run's verdicts again, on a generated verdicts table.

    python bench/whatif_bench.py [--verdicts 1000000] [--paths 50000] [--format parquet jsonl]

Writes N verdict rows of one host (registry crawlers with their token chains, a Zipf-like mix of
distinct paths, mixed decisions) in the schema a run writes, under a temporary folder, then times
`pipeline.report.whatif.answer` (read the table, count, decide, collect the flips) against a proposal
that flips part of the traffic each way: wall clock and the process's cpu time (Arrow's reader
may use more than one thread, so cpu can exceed wall). The target: 1M verdicts in well under a
minute.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from config.registry import load_registry
from matcher import records
from pipeline.report import whatif
from pipeline.tables.schema import arrow_schema

HOST = "www.example.com"
PROPOSAL = b"""User-agent: *
Disallow: /search
Disallow: /private/
Allow: /private/press/

User-agent: Googlebot
Disallow: /docs/internal/
Disallow: /*?sessionid=

User-agent: GPTBot
Disallow: /blog/
"""
CRAWLERS = ("Googlebot", "Googlebot-Image", "bingbot", "GPTBot", "ClaudeBot", "Applebot", "AdsBot-Google")
SECTIONS = ("blog", "docs", "docs/internal", "search", "private", "private/press", "products", "static")
DECISIONS = ("allowed",) * 8 + ("disallowed", "disallowed-within-grace", "unknown")


def verdict_rows(count: int, paths: int, seed: int = 7):
    registry = load_registry()
    rng = random.Random(seed)
    crawlers = [registry.get(name) for name in CRAWLERS]
    pool = [f"/{rng.choice(SECTIONS)}/page-{i}" + ("?sessionid=1" if i % 17 == 0 else "") for i in range(paths)]
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    for i in range(count):
        crawler = crawlers[i % len(crawlers)]
        yield {
            "ts": start + timedelta(seconds=i), "host": HOST, "client_ip": "66.249.66.1", "method": "GET",
            "path": pool[min(int(rng.paretovariate(1.2)) - 1, paths - 1) if i % 3 else rng.randrange(paths)],
            "status": 200, "user_agent": crawler.name, "source": f"bench.log:{i + 1}", "crawler": crawler.name,
            "operator": crawler.operator, "tokens": crawler.robots_tokens, "identity": "verified",
            "decision": rng.choice(DECISIONS), "reason": "rule",
        }


def write_table(folder: Path, rows, output_format: str, batch: int = 100_000) -> None:
    folder.mkdir(parents=True)
    columns = records.VERDICTS
    if output_format == "jsonl":
        with (folder / "part-00000-of-00001.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(records.to_json_ready(row, columns)) + "\n")
        return
    schema = arrow_schema(columns)
    with pq.ParquetWriter(folder / "part-00000-of-00001.parquet", schema, compression="snappy") as writer:
        chunk = []
        for row in rows:
            chunk.append(records.shaped(row, columns))
            if len(chunk) == batch:
                writer.write_table(pa.Table.from_pylist(chunk, schema))
                chunk = []
        if chunk:
            writer.write_table(pa.Table.from_pylist(chunk, schema))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, default=1_000_000)
    parser.add_argument("--paths", type=int, default=50_000)
    parser.add_argument("--format", nargs="+", default=["parquet", "jsonl"], choices=["parquet", "jsonl"])
    args = parser.parse_args(argv)
    registry = load_registry()
    with tempfile.TemporaryDirectory(prefix="whatif-bench-") as work:
        for output_format in args.format:
            out = Path(work) / output_format
            write_table(out / "verdicts", verdict_rows(args.verdicts, args.paths), output_format)
            question = whatif.Question(str(out), HOST, "proposal.txt", PROPOSAL)
            started, cpu = time.perf_counter(), time.process_time()
            outcome = whatif.answer(question, registry)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            flipped = sum(flip.requests for flip in outcome.flips)
            print(
                f"{output_format:8} {outcome.requests:>10,} verdicts in {seconds:6.1f} s, cpu {cpu:6.1f} s"
                f" ({outcome.requests / seconds:,.0f}/s); {flipped:,} flip, {len(outcome.flips):,} distinct flips"
            )
            if outcome.requests != args.verdicts:
                print(f"read {outcome.requests:,} of {args.verdicts:,} verdicts", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
