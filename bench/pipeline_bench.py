"""Throughput of `crawl-audit run` against GoAccess, a bare regex loop and a plain audit loop, in one run.

    python bench/pipeline_bench.py                                   # 1M lines, in 8 files and in one
    python bench/pipeline_bench.py --lines 1000000 10000000 --keep   # the full run
    python bench/pipeline_bench.py --shapes 1 --only goaccess pipeline
    python bench/pipeline_bench.py --lines 1000000 --baseline ../crawl-audit-before
    python bench/pipeline_bench.py loop --logs 'W/logs/web-*' --robots W/robots/history.jsonl \
        --ranges W/ranges --log-format vhost_combined --out OUT       # the plain loop alone

Run it from the checkout with the package installed (`pip install -e .`, as run_local.sh does) or
with PYTHONPATH=. . For each size and each shape (`--shapes`, log files per workload: 8, as many
front-end servers leave them, and 1, the single `access.log` most servers leave) a workload is
written by `bench/workload.py` under --work (or reused when a previous `--keep` run left one with the
same parameters): by default the standard workload, 200 hosts, 3 robots.txt versions each, 30%
crawler traffic, Apache `vhost_combined`, uncompressed, so that every contestant reads the very same
plain files. The shapes of one size hold the same lines: they are dealt over as many servers as the
largest shape has files and written into each shape's number of files (`--write-files`), one file
being every line in time order. Then, on each workload, one after the other, each in its own process:

- `goaccess`: `goaccess FILES --log-format=VCOMBINED -o OUT.json --no-global-config` (the JSON
  report is written once at the end; its `total_requests` shows that every line was parsed).
  Skipped with a message when `goaccess` is not installed (Debian package `goaccess`).
- `regex-loop`: `bench/regex_loop.py`, a bare Python loop matching one compiled vhost_combined
  regex against every line, the floor of any audit that reads the lines in Python.
- `loop`: one process that reads the same files, hands batches of the pipeline's batch size to the
  same `LineAuditor.audit_lines` with the same robots mapping (built with
  `matcher.line_auditor.host_versions`), and writes every table a batch run writes, with the same
  record functions: verdicts and dead letters as they come; crawl-delay violations and windows
  (`matcher.crawl_delay.release` once per key), indexing findings, referrals, summary, counts.json,
  report_counts.json, the robots versions and report.html at the end.
- `columnar`: the same reading, fetches and auditor as `loop`, but each block of 65,536 lines of a
  file audited by `pipeline.columnar.verdicts.BlockAuditor` (RE2 columns, each rule once per
  distinct key), its verdicts written as one Parquet row group per block, dead letters as JSON Lines,
  the referrals, the summary (`pipeline.columnar.summary`) and counts.json; no other table yet. Its
  counts, summary rows and verdict, dead-letter and referral records must equal `loop`'s.
- `pipeline`: the `crawl-audit` script of this interpreter's environment run as README's local run
  runs it (`--runner=FnApiRunner`; `--runner direct` or `multi_processing` for the DirectRunner's
  modes), with `--log-format vhost_combined`.
- `baseline` (with `--baseline DIR`): the same command from another checkout's own environment,
  `DIR/.venv/bin/crawl-audit`, so that before and after come from one run on one machine.

With `--repeat N` the contestants run N rounds, one after the other in each, and each contestant
reports its run of median wall time (the slower middle one of an even count): one run's wall clock
moves by up to 15% on a shared machine. The disk is synced before each contestant.

Time is the child's wall clock, start-up included. Memory is polled every 0.1 s over the child's
process tree (what matters when a runner spawns workers). Peak PSS, the headline, is the peak of the
tree's summed `Pss:` from /proc/PID/smaps_rollup, which divides a page shared by workers and the
fork server they came from among them; where a process's smaps_rollup cannot be read its RSS is
counted instead and the figure is starred. Peak RSS is the peak of the summed RSS, or the child's
`ru_maxrss` (from wait4, exact for one process) when larger and above this process's own, which a
forked child's `ru_maxrss` starts from. cpu is the child's user + system time (workers included
when the runner waits for them). On each workload `loop`, `pipeline` and `baseline` must produce the
same counts, the same summary rows and the same number of records in every table any of them wrote,
and GoAccess and the regex loop must have read every line; the pipeline's counts, summary rows and
records per table must also be the same on every shape of a size (not its FILE:LINE sources, which
name other files). A mismatch fails the benchmark (exit 1; a missed target does not). Targets, on
every shape: pipeline >= 1.5x GoAccess's lines/s at 1M lines and >= 2.0x at 10M; the pipeline's
peak PSS at 1M <= 768 MiB, and at 10M <= 1.15x that at 1M.
"""
from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Sequence

import pyarrow.parquet as parquet
from apache_beam.io.filesystems import FileSystems

from matcher import crawl_delay, records
from matcher.robots_fetches import FetchHistory
from matcher.report_counts import ReportCounts, disallowed_keys, top_disallowed
from matcher.records import (
    BETWEEN_CAPTURES_TABLE,
    DEAD_LETTERS_TABLE,
    INDEXING_FINDINGS_TABLE,
    REFERRALS_TABLE,
    ROBOTS_FETCHES_TABLE,
    ROBOTS_VERSIONS_TABLE,
    SIGNATURE_REUSE_TABLE,
    VERDICTS_TABLE,
    VIOLATIONS_TABLE,
    WINDOWS_TABLE,
)
from pipeline.columnar.summary import summary_counts
from pipeline.columnar.verdicts import BlockAuditor
from pipeline.graph import build as graph
from pipeline.report import html as html_report
from pipeline.tables import run_folder
from pipeline.graph.between_captures import between_captures_row, change_straddled
from pipeline.graph.indexing import finding_row, request_findings
from pipeline.graph.referrals import referral_row
from matcher.line_auditor import DEAD_LETTER, NOT_REQUEST, SKIPPED, VERDICT, LineAuditor, robots_by_host
from pipeline.graph.read_logs import LINES_PER_BATCH
from pipeline.evidence.robots_table import read_robots_table
from pipeline.cli.parser import settings_of
from pipeline.tables.json_rows import JsonRows
from pipeline.graph.robots_fetches import fetch_rows as robots_fetch_rows
from pipeline.graph.signature_reuse import combine_seen, signature_reuse_row, signatures_seen
from matcher.summary import count_verdict, summary_key, summary_row
from pipeline.tables.schema import arrow_schema

REPO = Path(__file__).resolve().parents[1]
WORKLOAD_SCRIPT = REPO / "bench" / "workload.py"
REGEX_SCRIPT = REPO / "bench" / "regex_loop.py"
RUNNER_FLAGS = {
    "local": ["--runner=FnApiRunner"],  # README's local run (run_local.sh)
    "direct": ["--runner=DirectRunner"],
    "multi_processing": ["--runner=DirectRunner", "--direct_running_mode=multi_processing",
                         "--direct_num_workers=2"],
}
CONTESTANTS = ("goaccess", "regex-loop", "loop", "columnar", "pipeline", "baseline")
# The runs whose tables and counts must agree, each compared with the pipeline.
AUDITS = ("loop", "baseline")
# Targets: the pipeline's lines/s over GoAccess's at a size, on every shape; its peak tree PSS at
# MEMORY_LINES; and that peak at GROWTH_LINES over the one at MEMORY_LINES.
SPEED_TARGETS = {1_000_000: 1.5, 10_000_000: 2.0}
MEMORY_LINES, MEMORY_TARGET = 1_000_000, 768 * 2**20
GROWTH_LINES, GROWTH_TARGET = 10_000_000, 1.15
POLL_SECONDS = 0.1
# Lines the columnar contestant audits at a time: Arrow's cost per call is paid per block.
COLUMNAR_BLOCK = 65_536
VERDICT_SCHEMA = arrow_schema(records.VERDICTS)

# --------------------------------------------------------------------------- the plain loop


def plain_loop(logs: str, robots: str, ranges: str, log_format: str, out: Path) -> dict:
    """Audit every line of `logs` without Beam, writing the tables `crawl-audit run` writes."""
    auditor, robots_by_host = loop_auditor(robots, ranges, log_format)
    fetches = loop_fetches(auditor, robots_by_host, sorted(glob.glob(logs)))
    with LoopOutputs(out, loop_settings(robots, ranges, log_format).crawl_delay.window) as outputs:
        for path in sorted(glob.glob(logs)):
            for first, batch in file_batches(path, LINES_PER_BATCH):
                outputs.counts["lines"] += len(batch)
                for kind, record in auditor.audit_lines(path, first, batch, robots_by_host, None, fetches):
                    outputs.take(kind, record)
    # The history the verdicts were judged by, the manifest and the HTML report, as a batch run ends.
    versions = TableWriter(out, ROBOTS_VERSIONS_TABLE)
    for version in read_robots_table(robots):
        versions.write(records.robots_version_record(version))
    versions.close()
    fetch_rows = TableWriter(out, ROBOTS_FETCHES_TABLE)
    for keyed in fetches.items():
        for row in robots_fetch_rows(keyed, robots_by_host, auditor.error_limit):
            fetch_rows.write(row)
    fetch_rows.close()
    write_manifest(out, ["--logs", logs, "--robots", robots, "--ranges", ranges, "--log-format", log_format])
    html_report.write(str(out))
    return dict(outputs.counts)


def columnar_loop(logs: str, robots: str, ranges: str, log_format: str, out: Path) -> dict:
    """Audit every line of `logs` a block at a time, column by column, writing the verdicts (Parquet),
    the dead letters, the referrals, the summary and counts.json."""
    auditor, robots_by_host = loop_auditor(robots, ranges, log_format)
    fetches = loop_fetches(auditor, robots_by_host, sorted(glob.glob(logs)))
    columnar = BlockAuditor(auditor)
    counts = Counter(lines=0, verdicts=0, skipped=0, dead_letters=0, not_requests=0)
    reasons: Counter = Counter()
    referrals: Counter = Counter()
    summary: dict[tuple, Counter] = {}
    (out / VERDICTS_TABLE).mkdir(parents=True)
    dead = TableWriter(out, DEAD_LETTERS_TABLE)
    with parquet.ParquetWriter(out / VERDICTS_TABLE / "part-00000-of-00001.parquet", VERDICT_SCHEMA) as verdicts:
        for path in sorted(glob.glob(logs)):
            for first, block in file_batches(path, COLUMNAR_BLOCK):
                audited = columnar.audit_block(path, first, block, robots_by_host, None, fetches)
                verdicts.write_table(audited.verdicts)
                for letter in audited.dead_letters:
                    dead.write(letter)
                reasons.update(audited.not_requests)
                referrals.update(audited.referrals)
                for key, of_key in summary_counts(audited.verdicts).items():
                    summary.setdefault(key, Counter()).update(of_key)
                counts.update(lines=len(block), verdicts=audited.verdicts.num_rows, skipped=audited.skipped,
                              dead_letters=len(audited.dead_letters), not_requests=len(audited.not_requests))
    dead.close()
    rows = TableWriter(out, REFERRALS_TABLE)
    for key, visits in referrals.items():
        rows.write(referral_row(key, visits))
    rows.close()
    rows = TableWriter(out, "summary")
    for key, of_key in summary.items():
        rows.write(summary_row(key, of_key))
    rows.close()
    counts_json = {**counts, "not_request_reasons": dict(sorted(reasons.items()))}
    (out / "counts.json").write_text(json.dumps(counts_json, sort_keys=True) + "\n", "utf-8")
    return dict(counts)


def loop_fetches(auditor: LineAuditor, robots_by_host: dict, paths: list[str]) -> dict:
    """The run's robots.txt fetches by key, read before the audit as a batch run reads them."""
    found: dict = {}
    for path in paths:
        for first, batch in file_batches(path, LINES_PER_BATCH):
            for key, fetch in auditor.robots_fetches((path, first, batch)):
                found.setdefault(key, []).append(fetch)
    return {key: FetchHistory(fetches) for key, fetches in found.items()}


def write_manifest(out: Path, flags: list[str]) -> None:
    """The manifest a batch run commits last, which the HTML report reads."""
    settings, _ = settings_of([*flags, "--out", str(out)])
    matched = FileSystems.match([settings.inputs.logs])[0].metadata_list
    log_files = [run_folder.LogFile(m.path, m.size_in_bytes) for m in matched]
    formats = {path.stem: "json" if path.is_file() else "jsonl" for path in out.iterdir()}
    manifest = run_folder.manifest(out, settings, log_files, formats, worker_processes=1)
    (out / run_folder.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def loop_settings(robots: str, ranges: str, log_format: str):
    """The settings of `crawl-audit run` with these inputs and every other flag at its default."""
    flags = [f"--robots={robots}", f"--ranges={ranges}", f"--log-format={log_format}", "--logs=-", "--out=-"]
    return settings_of(flags)[0]


def loop_auditor(robots: str, ranges: str, log_format: str) -> tuple[LineAuditor, dict]:
    """The LineAuditor and robots mapping `pipeline.graph.build` makes, with the CLI's defaults."""
    settings = loop_settings(robots, ranges, log_format)
    return graph.line_auditor(settings), robots_by_host(read_robots_table(robots))


def file_batches(path: str, size: int):
    """(first line number, lines) of one log file, decoded as `pipeline.graph.read_logs.line_batches` does."""
    first, batch = 1, []
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as handle:
        for raw in handle:
            batch.append(raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace"))
            if len(batch) == size:
                yield first, batch
                first, batch = first + size, []
    if batch:
        yield first, batch


class TableWriter:
    """One JSON Lines part file of a table, encoded as the pipeline's sinks encode it."""

    def __init__(self, out: Path, table: str):
        self._encode = JsonRows(records.TABLES[table]).line
        folder = out / table
        folder.mkdir(parents=True, exist_ok=True)
        self._handle = (folder / "part-00000-of-00001.jsonl").open("wb")

    def write(self, record: dict) -> None:
        self._handle.write(self._encode(record) + b"\n")

    def close(self) -> None:
        self._handle.close()


class LoopOutputs:
    """Where the loop's records go: verdicts and dead letters as they come; the summary, counts,
    the report's counts, indexing findings, between-captures changes, reused signatures, referrals
    and crawl-delay tables when the input is done, as a batch run does."""

    _TALLIES = {VERDICT: "verdicts", DEAD_LETTER: "dead_letters", SKIPPED: "skipped", NOT_REQUEST: "not_requests"}

    def __init__(self, out: Path, window: timedelta):
        self.out = out
        self._window = window
        self.counts = Counter(lines=0, verdicts=0, skipped=0, dead_letters=0, not_requests=0)
        self._not_requests: Counter = Counter()  # reason -> lines
        self._referrals: Counter = Counter()  # Referral -> visits
        self._verdicts, self._dead = TableWriter(out, VERDICTS_TABLE), TableWriter(out, DEAD_LETTERS_TABLE)
        self._decisions: dict[tuple, Counter] = {}
        self._findings: Counter = Counter()
        self._straddled: Counter = Counter()
        self._signatures: dict[tuple, tuple] = {}
        self._delays: dict[tuple, list] = {}
        self._report = ReportCounts()
        self._disallowed: Counter = Counter()

    def take(self, kind: str, record: dict | None) -> None:
        self.counts[self._TALLIES[kind]] += 1
        if kind == NOT_REQUEST:
            self._not_requests[record] += 1
        elif kind == SKIPPED:
            if record is not None:
                self._referrals[record] += 1
        elif kind == DEAD_LETTER:
            self._dead.write(record)
        elif kind == VERDICT:
            self._verdicts.write(record)
            key = summary_key(record)
            decisions = self._decisions.get(key)
            if decisions is None:
                decisions = self._decisions[key] = Counter()
            count_verdict(decisions, record)
            self._findings.update(request_findings(record))
            self._straddled.update(change_straddled(record))
            for key, seen in signatures_seen((record,)):
                before = self._signatures.get(key)
                self._signatures[key] = seen if before is None else combine_seen((before, seen))
            self._delays.setdefault(crawl_delay.key_of(record), []).append(crawl_delay.request_of(record))
            self._report.add((record,))
            self._disallowed.update(disallowed_keys((record,)))

    def __enter__(self) -> "LoopOutputs":
        return self

    def __exit__(self, error_type, *_) -> None:
        self._verdicts.close()
        self._dead.close()
        if error_type is None:
            self._write_crawl_delay(self._window)
            self._write_rows(INDEXING_FINDINGS_TABLE, (finding_row(k, n) for k, n in self._findings.items()))
            self._write_rows(BETWEEN_CAPTURES_TABLE, (between_captures_row(k, n) for k, n in self._straddled.items()))
            self._write_rows(SIGNATURE_REUSE_TABLE, (signature_reuse_row(k, seen)
                                                     for k, seen in self._signatures.items() if seen[0] > 1))
            self._write_rows(REFERRALS_TABLE, (referral_row(k, n) for k, n in self._referrals.items()))
            self._write_rows("summary", (summary_row(k, tally) for k, tally in self._decisions.items()))
            counts = {**self.counts, "not_request_reasons": dict(sorted(self._not_requests.items()))}
            (self.out / "counts.json").write_text(json.dumps(counts, sort_keys=True) + "\n", "utf-8")
            self._report.disallowed = top_disallowed(self._disallowed)
            report_counts = json.dumps(self._report.to_json(), sort_keys=True)
            (self.out / "report_counts.json").write_text(report_counts + "\n", "utf-8")

    def _write_crawl_delay(self, window: timedelta) -> None:
        """Each key's requests released once, in order, as the batch crawl-delay step does."""
        violations, windows = TableWriter(self.out, VIOLATIONS_TABLE), TableWriter(self.out, WINDOWS_TABLE)
        for key, requests in self._delays.items():
            key_violations, key_windows = crawl_delay.rows(key, None, crawl_delay.in_order(requests), window)
            for row in key_violations:
                violations.write(row)
            for row in key_windows:
                windows.write(row)
        violations.close()
        windows.close()

    def _write_rows(self, table: str, rows) -> None:
        writer = TableWriter(self.out, table)
        for row in rows:
            writer.write(row)
        writer.close()


# --------------------------------------------------------------------------- measuring a child


@dataclass(frozen=True)
class Measurement:
    seconds: float
    cpu_seconds: float  # user + system of the child and the workers it waited for
    peak_rss: int  # bytes
    peak_pss: int  # bytes
    pss_read: bool  # False: some process's smaps_rollup was unreadable and its RSS was counted instead


class RunFailed(Exception):
    """A measured command exited with an error."""


def process_pss(pid: int) -> int:
    """Proportional set size of one process from /proc/PID/smaps_rollup; 0 for a zombie, which maps nothing."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def tree_memory(pid: int) -> tuple[int, int, bool]:
    """Summed RSS and PSS of `pid` and all its descendants, and whether every PSS could be read
    (where not, that process's RSS stands in); (0, 0, True) once it is gone."""
    rss, pss, read, pending, page = 0, 0, True, [pid], os.sysconf("SC_PAGE_SIZE")
    while pending:
        current = pending.pop()
        try:
            resident = int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page
            children = [int(child) for task in Path(f"/proc/{current}/task").iterdir()
                        for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue  # the process ended between two reads
        try:
            proportional = process_pss(current)
        except OSError:
            if not Path(f"/proc/{current}").exists():
                continue
            proportional, read = resident, False
        rss, pss = rss + resident, pss + proportional
        pending.extend(children)
    return rss, pss, read


class TreeSampler(threading.Thread):
    """Polls the child's process tree and keeps the highest summed RSS and PSS seen. PSS divides each
    page among the processes that share it, so workers forked from one server are not counted twice."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak_rss, self.peak_pss, self.pss_read = pid, 0, 0, True
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(POLL_SECONDS):
            rss, pss, read = tree_memory(self.pid)
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.pss_read = self.pss_read and read


def measure(command: Sequence[str], log: Path, checkout: Path = REPO) -> Measurement:
    """Run `command` in `checkout` (first on its import path) to completion; its wall time, cpu time
    and peak memory. A failure raises RunFailed with the end of its log."""
    path = os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    # What an earlier contestant wrote (a run's tables are hundreds of megabytes) goes to disk now,
    # not on this one's clock.
    os.sync()
    started = time.perf_counter()
    with log.open("wb") as output:
        child = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=checkout)
        sampler = TreeSampler(child.pid)
        sampler.start()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    if child.returncode != 0:
        tail = log.read_text("utf-8", "replace")[-2000:]
        raise RunFailed(f"{' '.join(command[:3])} ... exited {child.returncode}; log {log}:\n{tail}")
    # A child's ru_maxrss starts from the high-water mark of the process it was forked from (this
    # one, with Beam imported): only above that mark is it the child's own peak.
    own = usage.ru_maxrss if usage.ru_maxrss > resource.getrusage(resource.RUSAGE_SELF).ru_maxrss else 0
    return Measurement(seconds, usage.ru_utime + usage.ru_stime, max(own * 1024, sampler.peak_rss),
                       sampler.peak_pss, sampler.pss_read)


# --------------------------------------------------------------------------- what a run produced


@dataclass(frozen=True)
class Outcome:
    counts: dict
    summary: tuple
    records: dict  # table folder -> records written


def count_lines(pattern: str) -> int:
    """The records of a table's part files: lines of JSON Lines, rows of Parquet."""
    total = 0
    for path in glob.glob(pattern):
        if path.endswith(".parquet"):
            total += parquet.ParquetFile(path).metadata.num_rows
            continue
        with open(path, "rb") as handle:
            total += sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    return total


def read_outcome(out: Path) -> Outcome:
    counts = json.loads((out / "counts.json").read_text("utf-8"))
    rows = []
    for path in sorted(glob.glob(str(out / "summary" / "part*"))):
        rows += [json.loads(line) for line in Path(path).read_text("utf-8").splitlines() if line]
    summary = tuple(sorted(json.dumps(row, sort_keys=True) for row in rows))
    tables = sorted(p.name for p in out.iterdir() if p.is_dir() and p.name != "summary"
                    and not p.name.startswith("beam-temp"))
    return Outcome(counts, summary, {table: count_lines(str(out / table / "part*")) for table in tables})


def differences(first: Outcome, other: Outcome, names: tuple[str, str], lines: int) -> list[str]:
    """What differs between two runs' outputs, named `names`; a table only one of them wrote counts
    too. Sources (FILE:LINE) are not compared: they differ between shapes of one workload."""
    ours, theirs = names
    found = [f"{run} read {outcome.counts.get('lines')} of {lines} lines"
             for run, outcome in zip(names, (first, other)) if outcome.counts.get("lines") != lines]
    if first.counts != other.counts:
        found.append(f"counts: {ours} {first.counts} != {theirs} {other.counts}")
    if first.summary != other.summary:
        found.append(f"summary rows: {ours} and {theirs} differ")
    for table in sorted(set(first.records) | set(other.records)):
        if first.records.get(table) != other.records.get(table):
            found.append(f"{table} records: {ours} {first.records.get(table)} != {theirs} {other.records.get(table)}")
    return found


# --------------------------------------------------------------------------- one size


@dataclass(frozen=True)
class Workload:
    folder: Path
    lines: int
    log_format: str

    @property
    def logs(self) -> str:
        return str(self.folder / "logs" / "web-*")

    @property
    def robots(self) -> str:
        return str(self.folder / "robots" / "history.jsonl")

    @property
    def ranges(self) -> str:
        return str(self.folder / "ranges")

    def files(self) -> list[str]:
        return sorted(glob.glob(self.logs))

    def inputs(self) -> list[str]:
        return ["--logs", self.logs, "--robots", self.robots, "--ranges", self.ranges, "--log-format", self.log_format]


# workload.py's flag for each workload parameter the benchmark sets
WORKLOAD_FLAGS = {"lines": "--lines", "hosts": "--hosts", "versions": "--versions", "seed": "--seed",
                  "log_format": "--format", "crawler_share": "--crawler-share", "compress": "--compress",
                  "files": "--files", "log_files": "--write-files"}


def workload_params(lines: int, files: int, args: argparse.Namespace) -> dict:
    """Every shape deals its lines over as many servers as the largest shape has files, so that all
    shapes of a size hold the same lines."""
    return {"lines": lines, "hosts": args.hosts, "versions": args.versions, "seed": args.seed,
            "log_format": args.format, "crawler_share": args.crawler_share, "compress": args.compress,
            "files": max(args.shapes), "log_files": files}


def ensure_workload(lines: int, files: int, args: argparse.Namespace, work: Path) -> tuple[Workload, bool]:
    """The workload of `lines` in `files` files, reused when its manifest matches; (workload, generated here)."""
    wanted = workload_params(lines, files, args)
    folder = work / ("workload-" + "-".join(str(value) for value in wanted.values()))
    manifest = folder / "workload.json"
    if manifest.is_file() and wanted.items() <= json.loads(manifest.read_text("utf-8")).items():
        return Workload(folder, lines, args.format), False
    shutil.rmtree(folder, ignore_errors=True)
    print(f"generating {lines:,} lines in {shape(files)} in {folder} ...", flush=True)
    flags = [part for key, value in wanted.items() for part in (WORKLOAD_FLAGS[key], str(value))]
    command = [sys.executable, str(WORKLOAD_SCRIPT), *flags, "--shared", args.shared, "--out", str(folder)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=REPO)
    return Workload(folder, lines, args.format), True


def crawl_audit_command() -> list[str]:
    script = Path(sys.executable).parent / "crawl-audit"
    found = str(script) if script.exists() else shutil.which("crawl-audit")
    if found is None:
        raise SystemExit("pipeline_bench.py: no crawl-audit script; run `pip install -e .` in this environment")
    return [found, "run"]


# GoAccess's predefined VCOMBINED; nginx host_combined spelled out in its format specifiers.
GOACCESS_FORMATS = {
    "vhost_combined": ["--log-format=VCOMBINED"],
    "host_combined": ['--log-format=%v %h %^[%d:%t %^] "%r" %s %b "%R" "%u"', "--date-format=%d/%b/%Y",
                      "--time-format=%T"],
}


@dataclass(frozen=True)
class Run:
    """One contestant on one workload: what it cost, or why it was not measured."""

    name: str
    measurement: Measurement | None = None
    skipped: str = ""


def goaccess(workload: Workload, out: Path, problems: list[str]) -> Run:
    binary = shutil.which("goaccess")
    if binary is None:
        return Run("goaccess", skipped="goaccess is not installed (Debian package `goaccess`)")
    if any(path.endswith(".gz") for path in workload.files()):
        return Run("goaccess", skipped="GoAccess reads plain files only: use --compress none")
    report = out.with_suffix(".json")
    command = [binary, *workload.files(), *GOACCESS_FORMATS[workload.log_format], "-o", str(report),
               "--no-global-config"]
    measured = measure(command, out.with_suffix(".log"))
    parsed = json.loads(report.read_text("utf-8"))["general"]["total_requests"]
    if parsed != workload.lines:
        problems.append(f"goaccess read {parsed:,} of {workload.lines:,} lines")
    report.unlink()
    return Run("goaccess", measured)


def regex(workload: Workload, out: Path, problems: list[str]) -> Run:
    log = out.with_suffix(".log")
    measured = measure([sys.executable, str(REGEX_SCRIPT), workload.logs], log)
    read = json.loads(log.read_text("utf-8"))["lines"]
    if read != workload.lines:
        problems.append(f"regex-loop read {read:,} of {workload.lines:,} lines")
    return Run("regex-loop", measured)


def audit_commands(workload: Workload, args: argparse.Namespace, out: Path) -> dict[str, tuple[list[str], Path]]:
    """The command of each audit contestant writing into `out`-NAME, and the checkout it runs in."""
    runner = RUNNER_FLAGS[args.runner]
    commands = {
        "loop": ([sys.executable, str(Path(__file__).resolve()), "loop", *workload.inputs()], REPO),
        "columnar": ([sys.executable, str(Path(__file__).resolve()), "columnar", *workload.inputs()], REPO),
        "pipeline": ([*crawl_audit_command(), *workload.inputs(), *runner], REPO),
    }
    if args.baseline:
        baseline = Path(args.baseline).resolve()
        commands["baseline"] = ([str(baseline / ".venv" / "bin" / "crawl-audit"), "run", *workload.inputs(), *runner],
                                baseline)
    return {name: ([*command, "--out", f"{out}-{name}"], checkout) for name, (command, checkout) in commands.items()}


@dataclass(frozen=True)
class Size:
    lines: int
    files: int
    runs: dict  # contestant -> Run
    outcome: Outcome | None  # the pipeline's
    problems: tuple[str, ...]

    def rate(self, name: str) -> float | None:
        run = self.runs.get(name)
        return self.lines / run.measurement.seconds if run and run.measurement else None

    def ratio(self, name: str, to: str) -> float | None:
        ours, theirs = self.rate(name), self.rate(to)
        return ours / theirs if ours and theirs else None


def bench_size(workload: Workload, args: argparse.Namespace, work: Path) -> Size:
    """Every chosen contestant on one workload, one after the other, in `--repeat` rounds; each
    contestant's run of median wall time is the one reported."""
    files = len(workload.files())
    base, problems = work / f"out-{workload.lines}-{files}", []
    rounds: dict[str, list[Run]] = {}
    outcomes = {}
    for _ in range(args.repeat):
        if "goaccess" in args.only:
            rounds.setdefault("goaccess", []).append(
                goaccess(workload, base.with_name(base.name + "-goaccess"), problems)
            )
        if "regex-loop" in args.only:
            rounds.setdefault("regex-loop", []).append(
                regex(workload, base.with_name(base.name + "-regex-loop"), problems)
            )
        for name, (command, checkout) in audit_commands(workload, args, base).items():
            if name not in args.only:
                continue
            out = Path(f"{base}-{name}")
            shutil.rmtree(out, ignore_errors=True)  # what a --keep run or the round before left
            rounds.setdefault(name, []).append(Run(name, measure(command, out.with_suffix(".log"), checkout)))
            outcomes[name] = read_outcome(out)
            if not args.keep:
                shutil.rmtree(out, ignore_errors=True)
    for name, runs in rounds.items():
        rates = [f"{workload.lines / run.measurement.seconds:,.0f}" if run.measurement else run.skipped for run in runs]
        unit = " lines/s" if runs[0].measurement else ""
        print(f"  {workload.lines:,} lines in {shape(files)}, {name}: {', '.join(rates)}{unit}", flush=True)
    runs = {name: median_run(name_runs) for name, name_runs in rounds.items()}
    if "loop" in outcomes and "columnar" in outcomes:
        problems += columnar_differences(outcomes["loop"], outcomes["columnar"], workload.lines)
    pipeline = outcomes.get("pipeline")
    if pipeline is not None:
        for name in AUDITS:
            if name in outcomes:
                problems += differences(pipeline, outcomes[name], ("pipeline", name), workload.lines)
    return Size(workload.lines, files, runs, pipeline, tuple(dict.fromkeys(problems)))


def columnar_differences(loop: Outcome, columnar: Outcome, lines: int) -> list[str]:
    """What differs between the loop's and the columnar audit's counts and the tables both write."""
    found = [f"columnar read {columnar.counts.get('lines')} of {lines} lines"] if columnar.counts.get("lines") != lines else []
    if loop.counts != columnar.counts:
        found.append(f"counts: loop {loop.counts} != columnar {columnar.counts}")
    if loop.summary != columnar.summary:
        found.append("summary rows: loop and columnar differ")
    for table in (VERDICTS_TABLE, DEAD_LETTERS_TABLE, REFERRALS_TABLE):
        if loop.records.get(table) != columnar.records.get(table):
            found.append(f"{table} records: loop {loop.records.get(table)} != columnar {columnar.records.get(table)}")
    return found


def shape_differences(sizes: Sequence[Size]) -> list[str]:
    """What differs between the pipeline's outputs on the shapes of one size, each compared with the first."""
    found, first = [], {}
    for size in sizes:
        if size.outcome is None:
            continue
        reference = first.setdefault(size.lines, size)
        if reference is not size:
            names = (f"{shape(reference.files)}", f"{shape(size.files)}")
            found += [f"{size.lines:,} lines: {problem}"
                      for problem in differences(reference.outcome, size.outcome, names, size.lines)]
    return found


def median_run(runs: Sequence[Run]) -> Run:
    """The run of median wall time (the later of the two middle ones for an even count)."""
    measured = sorted((run for run in runs if run.measurement), key=lambda run: run.measurement.seconds)
    return measured[len(measured) // 2] if measured else runs[0]


# --------------------------------------------------------------------------- report


def mib(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB"


def shape(files: int) -> str:
    return "1 file" if files == 1 else f"{files} files"


def times(ratio: float | None, digits: int = 2) -> str:
    return "-" if ratio is None else f"{ratio:.{digits}f}x"


def pss(measurement: Measurement) -> str:
    """Peak summed PSS, starred where RSS stood in for an unreadable smaps_rollup."""
    return mib(measurement.peak_pss) + ("" if measurement.pss_read else "*")


def table(sizes: Sequence[Size]) -> str:
    header = ("lines", "files", "contestant", "lines/s", "vs goaccess", "vs regex-loop", "peak PSS", "peak RSS",
              "cpu s", "wall s")
    cells = [header]
    for size in sizes:
        for name, run in size.runs.items():
            if run.measurement is None:
                cells.append((f"{size.lines:,}", str(size.files), name, "skipped", "", "", "", "", "", ""))
                continue
            m = run.measurement
            cells.append((f"{size.lines:,}", str(size.files), name, f"{size.rate(name):,.0f}",
                          times(size.ratio(name, "goaccess")), times(size.ratio(name, "regex-loop"), 3), pss(m),
                          mib(m.peak_rss), f"{m.cpu_seconds:.1f}", f"{m.seconds:.1f}"))
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)).rstrip() for line in cells)


def target(value: float | None, goal: float, at_least: bool = True) -> str:
    if value is None:
        return "not measured"
    return "met" if (value >= goal if at_least else value <= goal) else "MISSED"


def size_lines(sizes: Sequence[Size]) -> list[str]:
    """The pipeline's (and the baseline's) ratios to GoAccess on every shape of one size, then each
    shape's skipped contestants, records and mismatches."""
    lines = []
    for name in ("pipeline", "baseline"):
        ratios = [f"{times(size.ratio(name, 'goaccess'))} on {shape(size.files)}" for size in sizes if name in size.runs]
        if ratios:
            lines.append(f"{sizes[0].lines:,} lines, {name} vs GoAccess: {', '.join(ratios)}")
    for size in sizes:
        if size.ratio("pipeline", "baseline") is not None:
            lines.append(f"  {shape(size.files)}: pipeline vs baseline {times(size.ratio('pipeline', 'baseline'))} the lines/s")
        lines += [f"  {shape(size.files)}: {name} skipped: {run.skipped}" for name, run in size.runs.items() if run.skipped]
        if size.outcome is not None:
            written = ", ".join(f"{name} {count:,}" for name, count in size.outcome.records.items())
            lines.append(f"  {shape(size.files)}: records: {written}")
        lines += [f"  {shape(size.files)}: MISMATCH {problem}" for problem in size.problems]
    return lines


def pipeline_memory(size: Size | None) -> Measurement | None:
    run = size.runs.get("pipeline") if size else None
    return run.measurement if run else None


def target_lines(sizes: Sequence[Size]) -> list[str]:
    """Every target on every shape measured; `not measured` where its size did not run."""
    shapes = list(dict.fromkeys(size.files for size in sizes))
    by_run = {(size.lines, size.files): size for size in sizes}
    lines = ["targets:"]
    for count, goal in SPEED_TARGETS.items():
        for files in shapes:
            size = by_run.get((count, files))
            ratio = size.ratio("pipeline", "goaccess") if size else None
            lines.append(f"  {count // 1_000_000}M lines, {shape(files)}: pipeline >= {goal}x GoAccess's lines/s: "
                         f"{times(ratio)} {target(ratio, goal)}")
    for files in shapes:
        m = pipeline_memory(by_run.get((MEMORY_LINES, files)))
        lines.append(f"  {MEMORY_LINES // 1_000_000}M lines, {shape(files)}: pipeline peak PSS <= {mib(MEMORY_TARGET)}: "
                     f"{pss(m) if m else '-'} {target(m and m.peak_pss, MEMORY_TARGET, at_least=False)}")
    for files in shapes:
        small, large = (pipeline_memory(by_run.get((count, files))) for count in (MEMORY_LINES, GROWTH_LINES))
        growth = large.peak_pss / small.peak_pss if small and large and small.peak_pss else None
        figures = f"{pss(large)} / {pss(small)} = {times(growth)}" if growth else "-"
        lines.append(f"  {GROWTH_LINES // 1_000_000}M over {MEMORY_LINES // 1_000_000}M lines, {shape(files)}: "
                     f"pipeline peak PSS <= {GROWTH_TARGET}x: {figures} {target(growth, GROWTH_TARGET, at_least=False)}")
    return lines


def report(sizes: Sequence[Size], across_shapes: Sequence[str]) -> str:
    lines = [table(sizes)]
    if not all(run.measurement.pss_read for size in sizes for run in size.runs.values() if run.measurement):
        lines.append("* /proc/PID/smaps_rollup unreadable for part of the process tree: its RSS counted as PSS")
    lines.append("")
    for count in dict.fromkeys(size.lines for size in sizes):
        lines += size_lines([size for size in sizes if size.lines == count])
    lines += [f"MISMATCH between shapes, {problem}" for problem in across_shapes]
    return "\n".join(lines + [""] + target_lines(sizes))


# --------------------------------------------------------------------------- command line


def bench(args: argparse.Namespace) -> int:
    try:
        sizes = measure_sizes(args)
    except (RunFailed, subprocess.CalledProcessError) as error:
        print(f"pipeline_bench.py: {error}", file=sys.stderr)
        return 2
    across_shapes = shape_differences(sizes)
    print(report(sizes, across_shapes))
    return 1 if across_shapes or any(size.problems for size in sizes) else 0


def measure_sizes(args: argparse.Namespace) -> list[Size]:
    """Every size in every shape; workloads generated here are removed afterwards unless --keep."""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    sizes, generated = [], []
    for lines in args.lines:
        for files in args.shapes:
            workload, fresh = ensure_workload(lines, files, args, work)
            if fresh:
                generated.append(workload.folder)
            sizes.append(bench_size(workload, args, work))
    if not args.keep:
        for folder in generated:
            shutil.rmtree(folder, ignore_errors=True)
    return sizes


def loop_command(args: argparse.Namespace) -> int:
    audit_all = plain_loop if args.command == "loop" else columnar_loop
    counts = audit_all(args.logs, args.robots, args.ranges, args.log_format, Path(args.out))
    print(json.dumps(counts, sort_keys=True))
    return 0


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000],
                        help="workload sizes (1000000 10000000 for the full run)")
    parser.add_argument("--shapes", type=int, nargs="+", default=[8, 1], metavar="FILES",
                        help="log files each size is written as, the same lines in each (default: 8 and 1)")
    parser.add_argument("--only", nargs="+", choices=CONTESTANTS, default=list(CONTESTANTS),
                        help="contestants to measure (baseline only with --baseline)")
    parser.add_argument("--baseline", metavar="DIR", help="another checkout with its own .venv, measured alike")
    parser.add_argument("--runner", choices=sorted(RUNNER_FLAGS), default="local",
                        help="the pipeline's runner: local = --runner=FnApiRunner, as README's local run")
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--crawler-share", type=float, default=0.3)
    parser.add_argument("--format", choices=sorted(GOACCESS_FORMATS), default="vhost_combined")
    parser.add_argument("--compress", choices=("gzip", "none"), default="none")
    parser.add_argument("--seed", type=int, default=20261102)
    parser.add_argument("--shared", default=str(REPO.parent / "shared"), help="shared folder with corpus/")
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "crawl-audit-bench"),
                        help="where workloads and outputs go")
    parser.add_argument("--keep", action="store_true", help="keep workloads (reused next time) and outputs")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="rounds of every contestant in turn; each reports its run of median wall time")
    commands = parser.add_subparsers(dest="command")
    for name, what in (("loop", "the plain loop"), ("columnar", "the columnar audit")):
        loop = commands.add_parser(name, help=f"run only {what} over one workload")
        for flag in ("--logs", "--robots", "--ranges", "--out"):
            loop.add_argument(flag, required=True)
        loop.add_argument("--log-format", default="vhost_combined")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    if args.command in ("loop", "columnar"):
        return loop_command(args)
    if min(args.shapes) < 1:
        raise SystemExit("pipeline_bench.py: --shapes must be positive")
    args.shapes = list(dict.fromkeys(args.shapes))
    if args.baseline and not (Path(args.baseline) / ".venv" / "bin" / "crawl-audit").exists():
        raise SystemExit(f"pipeline_bench.py: no {args.baseline}/.venv/bin/crawl-audit; "
                         "make a venv there and `pip install -e .` into it")
    return bench(args)


if __name__ == "__main__":
    raise SystemExit(main())
