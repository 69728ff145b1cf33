"""Lines per second and peak memory of `crawl-audit run` against a plain Python loop, in one run.

    python bench/pipeline_bench.py --lines 1000000 4000000
    python bench/pipeline_bench.py --lines 1000000 4000000 --runner direct multi_processing --keep
    python bench/pipeline_bench.py loop --logs 'W/logs/*.log.gz' --robots W/robots/history.jsonl \
        --ranges W/ranges --out OUT            # the plain loop alone

Run it from the checkout with the package installed (`pip install -e .`, as run_local.sh does) or
with PYTHONPATH=. . For each size a workload is written by `bench/workload.py` under --work (or reused when a
previous `--keep` run left one with the same parameters), then measured, each in its own process:

- `pipeline/<runner>`: the `crawl-audit` script of this interpreter's environment, exactly as a
  user runs it, with `--log-format host_combined` and one of these runner modes:
  `direct` = `--runner=DirectRunner` (in this offline setup Beam's DirectRunner first tries Prism,
  cannot fetch it, and runs on the in-process FnApiRunner, one core); `multi_processing` = the same
  plus `--direct_running_mode=multi_processing --direct_num_workers=2` (SDK worker processes).
- `loop`: one process that reads the same gzip files line by line, hands batches of the pipeline's
  batch size to the same `LineAuditor.audit_lines` with the same robots mapping (built with
  `pipeline.auditing.host_versions`), and writes every table a batch run writes, with the same
  record functions: verdicts and dead letters as they come; crawl-delay violations and windows
  (`matcher.crawl_delay.release` once per key), indexing findings, summary, counts.json, the robots
  versions and report.html at the end.

Time is the child's wall clock, start-up included. Peak RSS is the larger of the child's
`ru_maxrss` (from wait4, exact for one process) and the peak of the summed RSS of the child's
process tree polled from /proc every 0.1 s (what matters when a runner spawns workers); cpu is the
child's user + system time (workers included when the runner waits for them). Both runs must
produce the same counts, the same summary rows and the same number of records in every table
either of them wrote; a mismatch fails the benchmark (exit 1), and so does a table the pipeline
gained that the loop does not write yet. Targets: pipeline >= 0.5x the loop's lines/s;
peak RSS at the largest size <= 1.5x that at the smallest.
"""
from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
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

from apache_beam.options.pipeline_options import PipelineOptions

from config.registry import load_registry
from config.snapshots import load_ranges
from matcher import crawl_delay, records
from matcher.records import (
    DEAD_LETTERS_TABLE,
    INDEXING_FINDINGS_TABLE,
    ROBOTS_VERSIONS_TABLE,
    VERDICTS_TABLE,
    VIOLATIONS_TABLE,
    WINDOWS_TABLE,
)
from pipeline import html_report
from pipeline.auditing import DEAD_LETTER, SKIPPED, VERDICT, LineAuditor, host_versions
from pipeline.indexing import finding_row, request_findings
from pipeline.options import CrawlAuditOptions, duration
from pipeline.robots_table import read_robots_table
from pipeline.read_logs import LINES_PER_BATCH
from pipeline.summaries import summary_row

REPO = Path(__file__).resolve().parents[1]
WORKLOAD_SCRIPT = REPO / "bench" / "workload.py"
RUNNER_FLAGS = {
    "direct": ["--runner=DirectRunner"],
    "multi_processing": ["--runner=DirectRunner", "--direct_running_mode=multi_processing",
                         "--direct_num_workers=2"],
}
THROUGHPUT_TARGET = 0.5
MEMORY_TARGET = 1.5
POLL_SECONDS = 0.1

# --------------------------------------------------------------------------- the plain loop


def plain_loop(logs: str, robots: str, ranges: str, out: Path) -> dict:
    """Audit every line of `logs` without Beam, writing the tables `crawl-audit run` writes."""
    auditor, robots_by_host = loop_auditor(robots, ranges)
    with LoopOutputs(out) as outputs:
        for path in sorted(glob.glob(logs)):
            for first, batch in file_batches(path, LINES_PER_BATCH):
                outputs.counts["lines"] += len(batch)
                for kind, record in auditor.audit_lines(path, first, batch, robots_by_host):
                    outputs.take(kind, record)
    # The history the verdicts were judged by, and the HTML report, as a batch run ends.
    versions = TableWriter(out, ROBOTS_VERSIONS_TABLE)
    for version in read_robots_table(robots):
        versions.write(records.robots_version_record(version))
    versions.close()
    html_report.write(str(out))
    return dict(outputs.counts)


def cli_defaults() -> CrawlAuditOptions:
    """The option values `crawl-audit run` uses when none are given."""
    return PipelineOptions([]).view_as(CrawlAuditOptions)


def loop_auditor(robots: str, ranges: str) -> tuple[LineAuditor, dict]:
    """The LineAuditor and robots mapping `pipeline.graph.build` makes, with the CLI's defaults."""
    registry, defaults = load_registry(), cli_defaults()
    auditor = LineAuditor(
        log_format="host_combined", registry=registry, ranges=load_ranges(ranges, registry),
        error_limit=duration(defaults.error_limit), grace=duration(defaults.cache_grace),
    )
    by_host: dict[str, list] = {}
    for version in read_robots_table(robots):
        by_host.setdefault(version.host, []).append(version)
    return auditor, {host: host_versions(versions) for host, versions in by_host.items()}


def file_batches(path: str, size: int):
    """(first line number, lines) of one log file, decoded as `pipeline.read_logs.line_batches` does."""
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
    """One JSON Lines part file of a table, encoded as `pipeline.graph` encodes it."""

    def __init__(self, out: Path, table: str):
        self._columns = records.TABLES[table]
        folder = out / table
        folder.mkdir(parents=True, exist_ok=True)
        self._handle = (folder / "part-00000-of-00001.jsonl").open("w", encoding="utf-8")

    def write(self, record: dict) -> None:
        self._handle.write(json.dumps(records.to_json_ready(record, self._columns), ensure_ascii=False) + "\n")

    def close(self) -> None:
        self._handle.close()


class LoopOutputs:
    """Where the loop's records go: verdicts and dead letters as they come; the summary, counts,
    indexing findings and crawl-delay tables when the input is done, as a batch run does."""

    _TALLIES = {VERDICT: "verdicts", DEAD_LETTER: "dead_letters", SKIPPED: "skipped"}

    def __init__(self, out: Path):
        self.out = out
        self.counts = Counter(lines=0, verdicts=0, skipped=0, dead_letters=0)
        self._verdicts, self._dead = TableWriter(out, VERDICTS_TABLE), TableWriter(out, DEAD_LETTERS_TABLE)
        self._decisions: dict[tuple, Counter] = {}
        self._findings: Counter = Counter()
        self._delays: dict[tuple, list] = {}

    def take(self, kind: str, record: dict | None) -> None:
        self.counts[self._TALLIES[kind]] += 1
        if kind == DEAD_LETTER:
            self._dead.write(record)
        elif kind == VERDICT:
            self._verdicts.write(record)
            key = (record["crawler"] or record["operator"], record["identity"])
            self._decisions.setdefault(key, Counter())[record["decision"]] += 1
            self._findings.update(request_findings(record))
            self._delays.setdefault(crawl_delay.key_of(record), []).append(crawl_delay.request_of(record))

    def __enter__(self) -> "LoopOutputs":
        return self

    def __exit__(self, error_type, *_) -> None:
        self._verdicts.close()
        self._dead.close()
        if error_type is None:
            self._write_crawl_delay(duration(cli_defaults().window))
            self._write_rows(INDEXING_FINDINGS_TABLE, (finding_row(k, n) for k, n in self._findings.items()))
            self._write_rows("summary", (summary_row(k, tally) for k, tally in self._decisions.items()))
            (self.out / "counts.json").write_text(json.dumps(dict(self.counts), sort_keys=True) + "\n", "utf-8")

    def _write_crawl_delay(self, window: timedelta) -> None:
        """Each key's requests released once, in order, as the batch crawl-delay step does."""
        violations, windows = TableWriter(self.out, VIOLATIONS_TABLE), TableWriter(self.out, WINDOWS_TABLE)
        for key, requests in self._delays.items():
            steps = crawl_delay.release(None, requests, None).steps
            for step in steps:
                if step.violation:
                    violations.write(crawl_delay.violation_record(key, step))
            for row in crawl_delay.window_records(key, steps, window):
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


class RunFailed(Exception):
    """A measured command exited with an error."""


def tree_rss(pid: int) -> int:
    """Summed resident memory of `pid` and all its descendants; 0 once it is gone."""
    total, pending, page = 0, [pid], os.sysconf("SC_PAGE_SIZE")
    while pending:
        current = pending.pop()
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue  # the process ended between two reads
    return total


class TreeSampler(threading.Thread):
    """Polls the child's process tree and keeps the highest summed RSS seen."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak = pid, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(POLL_SECONDS):
            self.peak = max(self.peak, tree_rss(self.pid))


def measure(command: Sequence[str], log: Path) -> Measurement:
    """Run `command` to completion; its wall time, cpu time and peak memory. A failure raises
    RunFailed with the end of its log."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    with log.open("wb") as output:
        child = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=REPO)
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
    return Measurement(seconds, usage.ru_utime + usage.ru_stime, max(usage.ru_maxrss * 1024, sampler.peak))


# --------------------------------------------------------------------------- what a run produced


@dataclass(frozen=True)
class Outcome:
    counts: dict
    summary: tuple
    records: dict  # table folder -> records written


def count_lines(pattern: str) -> int:
    total = 0
    for path in glob.glob(pattern):
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


def differences(pipeline: Outcome, loop: Outcome, lines: int) -> list[str]:
    """What differs between the two runs' outputs; a table only one of them wrote counts too."""
    found = [] if loop.counts.get("lines") == lines else [f"loop read {loop.counts.get('lines')} of {lines} lines"]
    if pipeline.counts != loop.counts:
        found.append(f"counts: pipeline {pipeline.counts} != loop {loop.counts}")
    if pipeline.summary != loop.summary:
        found.append("summary rows differ")
    for table in sorted(set(pipeline.records) | set(loop.records)):
        ours, theirs = pipeline.records.get(table), loop.records.get(table)
        if ours != theirs:
            found.append(f"{table} records: pipeline {ours} != loop {theirs}")
    return found


# --------------------------------------------------------------------------- one size


@dataclass(frozen=True)
class Workload:
    folder: Path
    lines: int

    @property
    def logs(self) -> str:
        return str(self.folder / "logs" / "*.log.gz")

    @property
    def robots(self) -> str:
        return str(self.folder / "robots" / "history.jsonl")

    @property
    def ranges(self) -> str:
        return str(self.folder / "ranges")

    def inputs(self) -> list[str]:
        return ["--logs", self.logs, "--robots", self.robots, "--ranges", self.ranges]


@dataclass(frozen=True)
class Row:
    lines: int
    runner: str
    pipeline: Measurement
    loop: Measurement
    records: dict
    problems: tuple[str, ...]

    @property
    def ratio(self) -> float:
        return self.loop.seconds / self.pipeline.seconds


def workload_args(lines: int, args: argparse.Namespace) -> list[str]:
    return ["--lines", str(lines), "--hosts", str(args.hosts), "--versions", str(args.versions),
            "--seed", str(args.seed), "--shared", args.shared]


def ensure_workload(lines: int, args: argparse.Namespace, work: Path) -> tuple[Workload, bool]:
    """The workload for `lines`, reused when its manifest matches; (workload, generated here)."""
    folder = work / f"workload-{lines}-h{args.hosts}-v{args.versions}-s{args.seed}"
    manifest = folder / "workload.json"
    wanted = {"lines": lines, "hosts": args.hosts, "versions": args.versions, "seed": args.seed}
    if manifest.is_file() and wanted.items() <= json.loads(manifest.read_text("utf-8")).items():
        return Workload(folder, lines), False
    shutil.rmtree(folder, ignore_errors=True)
    print(f"generating {lines:,} lines in {folder} ...", flush=True)
    command = [sys.executable, str(WORKLOAD_SCRIPT), *workload_args(lines, args), "--out", str(folder)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=REPO)
    return Workload(folder, lines), True


def crawl_audit_command() -> list[str]:
    script = Path(sys.executable).parent / "crawl-audit"
    found = str(script) if script.exists() else shutil.which("crawl-audit")
    if found is None:
        raise SystemExit("pipeline_bench.py: no crawl-audit script; run `pip install -e .` in this environment")
    return [found, "run"]


def run_pipeline(workload: Workload, runner: str, out: Path) -> Measurement:
    command = [*crawl_audit_command(), *workload.inputs(), "--log-format", "host_combined", "--out", str(out),
               *RUNNER_FLAGS[runner]]
    return measure(command, out.with_suffix(".log"))


def run_loop(workload: Workload, out: Path) -> Measurement:
    command = [sys.executable, str(Path(__file__).resolve()), "loop", *workload.inputs(), "--out", str(out)]
    return measure(command, out.with_suffix(".log"))


def bench_size(workload: Workload, runners: Sequence[str], work: Path, keep: bool) -> list[Row]:
    loop_out = work / f"out-{workload.lines}-loop"
    loop = run_loop(workload, loop_out)
    loop_outcome = read_outcome(loop_out)
    rows = []
    for runner in runners:
        out = work / f"out-{workload.lines}-{runner}"
        measured = run_pipeline(workload, runner, out)
        outcome = read_outcome(out)
        rows.append(Row(workload.lines, runner, measured, loop, outcome.records,
                        tuple(differences(outcome, loop_outcome, workload.lines))))
        print(f"  {workload.lines:,} lines, pipeline/{runner}: {measured.seconds:.1f} s; loop {loop.seconds:.1f} s",
              flush=True)
        if not keep:
            shutil.rmtree(out, ignore_errors=True)
    if not keep:
        shutil.rmtree(loop_out, ignore_errors=True)
    return rows


# --------------------------------------------------------------------------- report


def mib(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB"


def table(rows: Sequence[Row]) -> str:
    header = ("lines", "runner", "pipeline lines/s", "loop lines/s", "pipeline/loop", "peak RSS pipeline",
              "peak RSS loop", "verdicts", "dead letters", "same output")
    cells = [header] + [
        (f"{r.lines:,}", r.runner, f"{r.lines / r.pipeline.seconds:,.0f}", f"{r.lines / r.loop.seconds:,.0f}",
         f"{r.ratio:.2f}", mib(r.pipeline.peak_rss), mib(r.loop.peak_rss), f"{r.records.get('verdicts', 0):,}",
         f"{r.records.get('dead_letters', 0):,}",
         "yes" if not r.problems else "NO")
        for r in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in cells)


def memory_lines(rows: Sequence[Row]) -> list[str]:
    """Peak RSS at the largest size over the smallest, per runner, for pipeline and loop."""
    out = []
    for runner in dict.fromkeys(r.runner for r in rows):
        sized = sorted((r for r in rows if r.runner == runner), key=lambda r: r.lines)
        if len(sized) < 2:
            continue
        small, large = sized[0], sized[-1]
        scale = f"{large.lines // 1000:,}k/{small.lines // 1000:,}k"
        pipeline = large.pipeline.peak_rss / small.pipeline.peak_rss
        loop = large.loop.peak_rss / small.loop.peak_rss
        verdict = "met" if pipeline <= MEMORY_TARGET else "MISSED"
        out.append(f"peak RSS {scale}, {runner}: pipeline {pipeline:.2f}x, loop {loop:.2f}x "
                   f"(target <= {MEMORY_TARGET}x: {verdict})")
    return out


def report(rows: Sequence[Row]) -> str:
    lines = [table(rows), ""]
    for row in rows:
        verdict = "met" if row.ratio >= THROUGHPUT_TARGET else "MISSED"
        lines.append(f"{row.lines:,} lines, {row.runner}: pipeline/loop {row.ratio:.2f} "
                     f"(target >= {THROUGHPUT_TARGET}: {verdict}); "
                     f"wall s pipeline {row.pipeline.seconds:.1f}, loop {row.loop.seconds:.1f}; "
                     f"cpu s pipeline {row.pipeline.cpu_seconds:.1f}, loop {row.loop.cpu_seconds:.1f}")
        lines.append("  records: " + ", ".join(f"{table} {count:,}" for table, count in row.records.items()))
        lines += [f"  MISMATCH {problem}" for problem in row.problems]
    return "\n".join(lines + memory_lines(rows))


# --------------------------------------------------------------------------- command line


def bench(args: argparse.Namespace) -> int:
    try:
        rows = measure_sizes(args)
    except (RunFailed, subprocess.CalledProcessError) as error:
        print(f"pipeline_bench.py: {error}", file=sys.stderr)
        return 2
    print(report(rows))
    return 1 if any(row.problems for row in rows) else 0


def measure_sizes(args: argparse.Namespace) -> list[Row]:
    """Every size and runner mode; workloads generated here are removed afterwards unless --keep."""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows, generated = [], []
    for lines in args.lines:
        workload, fresh = ensure_workload(lines, args, work)
        if fresh:
            generated.append(workload.folder)
        rows += bench_size(workload, args.runner, work, args.keep)
    if not args.keep:
        for folder in generated:
            shutil.rmtree(folder, ignore_errors=True)
    return rows


def loop_command(args: argparse.Namespace) -> int:
    counts = plain_loop(args.logs, args.robots, args.ranges, Path(args.out))
    print(json.dumps(counts, sort_keys=True))
    return 0


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 4_000_000], help="workload sizes")
    parser.add_argument("--runner", nargs="+", choices=sorted(RUNNER_FLAGS), default=["direct"],
                        help="runner modes of the pipeline to measure")
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--versions", type=int, default=4)
    parser.add_argument("--seed", type=int, default=20261102)
    parser.add_argument("--shared", default=str(REPO.parent / "shared"), help="shared folder with corpus/")
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "crawl-audit-bench"),
                        help="where workloads and outputs go")
    parser.add_argument("--keep", action="store_true", help="keep workloads (reused next time) and outputs")
    commands = parser.add_subparsers(dest="command")
    loop = commands.add_parser("loop", help="run only the plain loop over one workload")
    for flag in ("--logs", "--robots", "--ranges", "--out"):
        loop.add_argument(flag, required=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    return loop_command(args) if args.command == "loop" else bench(args)


if __name__ == "__main__":
    raise SystemExit(main())
