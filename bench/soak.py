"""Soak test of the continuous audit: the folder source fed for ten minutes or more.

    python bench/soak.py                     # 10 minutes of feeding, then the checks
    python bench/soak.py --minutes 30 --lines-per-file 1000
    python bench/soak.py --runner prism --minutes 3   # on Prism (~/go/bin/prism, or --prism-location)

A streaming `crawl-audit` graph runs on the embedded portable runner (the local streaming runner;
it runs in this process, so this process's RSS is the job's), or with `--runner prism` on Beam's
Prism runner: a Go process of its own that runs the job, with the Python SDK worker in this
process (LOOPBACK), so the job's RSS is this process's plus Prism's, sampled apart. Log files of `--hosts` hosts arrive
in its watched folder every `--interval` seconds, the hosts interleaved, each file `--file-span`
seconds of event time (by default one crawl-delay window). The robots table has a new version per
host every five minutes of event time (rules and Crawl-delay change, now and then a 503), read
once at launch (the local runners cannot deliver a `--robots-refresh`), so verdicts move from
version to version as the stream goes on. The lines: verified and spoofed Googlebots, bingbots,
GPTBots, browsers, junk.

With `--late-every N` one file in N is held back and delivered two rounds later, behind the
watermark but within the allowed lateness. That is for runners that hold the watermark while a
source waits for its next poll (Dataflow, Flink): the local runner does not (Beam 2.77), so
between two polls every window with data is released, and a file arriving after its window's
release is late however small the delay; its requests then go to the dead letters
(`late-beyond-allowed-lateness`) and the crawl-delay tables differ from a batch run's. Locally
the default is 0, and each file holds whole windows; the in-order placement of requests late
within the allowed lateness is proven by the TestStream tests of `tests/pipeline/graph/test_streaming.py`.

The local runner's own memory grows while a streaming job runs, whatever the job: a bare `Watch`
of an empty folder grows by megabytes a second (measured with Beam 2.77; mostly native memory, not
Python objects, growing with the runner's loop iterations). So a baseline process runs the same
graph on the same runner, watching an empty folder, side by side for the same time, and the job
is judged by its growth beyond the baseline's. The Python heap (`sys.getallocatedblocks`) is
sampled too.

Checks, each failing the run (exit 1):

- memory: RSS sampled every few seconds; from the end of the warm-up (the first quarter of the
  feeding) to the end of the feeding, the job's RSS may grow by at most the baseline's growth over
  the same span plus 10% of the job's RSS at the end of the warm-up (at least 40 MiB);
- every line accounted for: streaming verdicts + dead letters + the lines the batch run skipped
  as non-crawlers = the lines written, and the batch run's own counts say the same;
- the streaming tables (verdicts, dead letters, violations, windows: their union over all the
  bundle files) equal those of a batch run over the same files.

It prints the RSS samples, lines and files fed, and the table sizes.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

_HERE = Path(__file__).resolve().parent
REPO = _HERE.parent
sys.path[:0] = [str(REPO)]

import apache_beam as beam  # noqa: E402

from pipeline.graph import build as graph  # noqa: E402
from pipeline.cli.parser import settings_of  # noqa: E402

START = datetime(2026, 11, 2, tzinfo=timezone.utc)
VERSION_EVERY = timedelta(minutes=5)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"
# (user agent, address maker, share of lines); the addresses are in samples/ranges unless spoofed
TRAFFIC = (
    (GOOGLEBOT, lambda rng: f"66.249.64.{rng.randrange(1, 31)}", 0.15),
    (GOOGLEBOT, lambda rng: f"203.0.113.{rng.randrange(1, 255)}", 0.05),  # spoofed
    (BINGBOT, lambda rng: f"157.55.39.{rng.randrange(1, 255)}", 0.15),
    (GPTBOT, lambda rng: f"198.51.100.{rng.randrange(1, 255)}", 0.05),
    (BROWSER, lambda rng: f"100.64.{rng.randrange(256)}.{rng.randrange(1, 255)}", 0.58),
)
JUNK_SHARE = 0.02
PATHS = ("/", "/products/", "/private/a", "/search?q=x", "/blog/post-1", "/cart", "/api/v1/items", "/private3/b")


def robots_table(hosts: list[str], span: timedelta, path: Path) -> None:
    rows = []
    for host in hosts:
        for n in range(int(span / VERSION_EVERY) + 2):
            when = (START + n * VERSION_EVERY - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
            if n % 5 == 3:
                rows.append({"host": host, "effective_from": when, "status": 503})
                continue
            body = f"User-agent: *\nCrawl-delay: {1 + n % 4}\nDisallow: /private{n % 4 or ''}/\n\nUser-agent: GPTBot\nDisallow: /\n"
            rows.append({"host": host, "effective_from": when, "status": 200, "body": body})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def log_file(host: str, start: datetime, span: timedelta, lines: int, rng: random.Random) -> tuple[bytes, int]:
    """A file of `lines` lines over `span` from `start`, in time order; returns it and how many
    of its lines are browsers (no verdict)."""
    weights = [share for *_, share in TRAFFIC] + [JUNK_SHARE]
    offsets = sorted(rng.uniform(0, span.total_seconds()) for _ in range(lines))
    out, browsers = [], 0
    for offset in offsets:
        kind = rng.choices(range(len(weights)), weights)[0]
        if kind == len(TRAFFIC):
            out.append(f"-- truncated line {rng.randrange(10**6)} --")
            continue
        agent, address, _ = TRAFFIC[kind]
        browsers += agent == BROWSER
        moment = (start + timedelta(seconds=int(offset))).strftime("%d/%b/%Y:%H:%M:%S +0000")
        out.append(f'{host} {address(rng)} - - [{moment}] "GET {rng.choice(PATHS)} HTTP/1.1" 200 512 "-" "{agent}"')
    return gzip.compress(("\n".join(out) + "\n").encode(), mtime=0), browsers


class RssSampler(threading.Thread):
    def __init__(self, every: float):
        super().__init__(daemon=True)
        self.every = every
        # (seconds since start, RSS MiB of this process and its Prism, Python blocks, Prism's RSS MiB)
        self.samples: list[tuple[float, float, int, float]] = []
        self._stop_event = threading.Event()
        self._start_time = time.monotonic()

    def run(self) -> None:
        while not self._stop_event.is_set():
            own, prism = rss_mib(), prism_rss_mib()
            self.samples.append((time.monotonic() - self._start_time, own + prism, sys.getallocatedblocks(), prism))
            self._stop_event.wait(self.every)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def rss_mib(status: Path = Path("/proc/self/status")) -> float:
    for line in status.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS in {status}")


def prism_rss_mib() -> float:
    """RSS of the Prism processes this process started (none on the embedded runner)."""
    own = str(os.getpid())
    total = 0.0
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "comm").read_text().strip() == "prism":
                parent = next(line.split()[1] for line in (proc / "status").read_text().splitlines() if line.startswith("PPid:"))
                if parent == own:
                    total += rss_mib(proc / "status")
        except (OSError, StopIteration, RuntimeError):
            continue  # a process that ended while being read
    return total


def runner_argv(runner: str, prism_location: str | None) -> list[str]:
    if runner == "prism":
        return ["--runner=PrismRunner", f"--prism_location={prism_location}"]
    return ["--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK"]


def run_argv(logs: str, out: Path, robots: Path) -> list[str]:
    return [
        f"--logs={logs}", f"--out={out}", "--log-format=host_combined", f"--robots={robots}",
        f"--ranges={REPO / 'samples' / 'ranges'}", "--window=5m", "--allowed-lateness=15m",
    ]


def idle_baseline(seconds: float, poll_interval: float, robots: Path, every: float, runner: list[str]) -> list[tuple]:
    """RSS samples of the same graph on the same runner watching an empty folder for `seconds`:
    the runner's own growth."""
    folder = Path(tempfile.mkdtemp(prefix="crawl-audit-idle-"))
    pipeline = graph.streaming_pipeline(*settings_of([
        "--streaming", *runner,
        f"--poll-interval={poll_interval}s", f"--watch-for={int(seconds)}s", "--robots-refresh=0",
        *run_argv(str(folder / "incoming" / "*.log.gz"), folder / "out", robots),
    ]))
    sampler = RssSampler(every)
    sampler.start()
    pipeline.run().wait_until_finish()
    sampler.stop()
    shutil.rmtree(folder)
    return sampler.samples


def table_rows(folder: Path) -> list[str]:
    """A table's rows as sorted JSON texts, sources cut to the file name; of the change audit, the
    final rows (a stream's early panes are its counts so far)."""
    rows = []
    for part in folder.rglob("*.jsonl"):
        for line in part.read_text().splitlines():
            row = json.loads(line)
            if row.get("final") is False:
                continue
            for key in ("source", "prev_source"):
                if row.get(key):
                    row[key] = Path(row[key]).name
            rows.append(json.dumps(row, sort_keys=True))
    return sorted(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long files are fed")
    parser.add_argument("--interval", type=float, default=2.5, help="seconds between files")
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--lines-per-file", type=int, default=300)
    parser.add_argument("--file-span", type=float, default=300.0, help="seconds of event time per file")
    parser.add_argument("--poll-interval", type=float, default=1.0, help="seconds between listings of the folder")
    parser.add_argument("--late-every", type=int, default=0, help="one file in N arrives late (default 0: none)")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between RSS samples")
    parser.add_argument("--runner", choices=["embedded", "prism"], default="embedded", help="the streaming runner")
    parser.add_argument("--prism-location", default=str(Path.home() / "go" / "bin" / "prism"), help="the prism binary")
    parser.add_argument("--keep", action="store_true", help="keep the working folder")
    parser.add_argument("--idle-baseline", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--robots", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    runner = runner_argv(args.runner, args.prism_location)
    if args.idle_baseline:
        samples = idle_baseline(args.idle_baseline, args.poll_interval, Path(args.robots), args.sample_every, runner)
        print(json.dumps(samples))
        return 0

    work = Path(tempfile.mkdtemp(prefix="crawl-audit-soak-"))
    incoming, staging = work / "incoming", work / "staging"
    incoming.mkdir()
    staging.mkdir()
    hosts = [f"site{n}.example.org" for n in range(args.hosts)]
    files = int(args.minutes * 60 / args.interval)
    rounds = -(-files // args.hosts)
    span = timedelta(seconds=args.file_span)
    robots_table(hosts, rounds * span, work / "robots.jsonl")
    logs = str(incoming / "*.log.gz")
    watch_for = args.minutes * 60 + 60  # the feeding, then a minute to drain the last files
    pipeline = graph.streaming_pipeline(*settings_of([
        "--streaming", *runner,
        f"--poll-interval={args.poll_interval}s", f"--watch-for={int(watch_for)}s", "--robots-refresh=0",
        *run_argv(logs, work / "stream", work / "robots.jsonl"),
    ]))

    rng = random.Random(20261102)
    baseline = subprocess.Popen(
        [
            sys.executable, __file__, "--idle-baseline", str(watch_for), "--sample-every", str(args.sample_every),
            "--poll-interval", str(args.poll_interval), "--robots", str(work / "robots.jsonl"),
            "--runner", args.runner, "--prism-location", args.prism_location,
        ],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    sampler = RssSampler(args.sample_every)
    sampler.start()
    result = pipeline.run()
    fed_lines = browsers = late_files = 0
    held: list[tuple[int, str, bytes]] = []  # (round to deliver in, name, content)
    started = time.monotonic()
    for n in range(files):
        round_, host = divmod(n, args.hosts)
        content, browsing = log_file(hosts[host], START + round_ * span, span, args.lines_per_file, rng)
        fed_lines += args.lines_per_file
        browsers += browsing
        name = f"{hosts[host]}.{round_:05d}.log.gz"
        if args.late_every and n % args.late_every == args.late_every - 3:
            held.append((round_ + 2, name, content))  # two files' spans of event time late
            late_files += 1
        else:
            deliver(staging, incoming, name, content)
        for item in [item for item in held if item[0] <= round_]:
            held.remove(item)
            deliver(staging, incoming, item[1], item[2])
        time.sleep(max(0.0, started + (n + 1) * args.interval - time.monotonic()))
    for _, name, content in held:
        deliver(staging, incoming, name, content)
    fed_seconds = time.monotonic() - started
    result.wait_until_finish()
    sampler.stop()
    idle = json.loads(baseline.communicate()[0].splitlines()[-1])

    settings, batch = settings_of(["--runner=FnApiRunner", *run_argv(logs, work / "batch", work / "robots.jsonl")])
    with beam.Pipeline(options=batch) as batch_pipeline:
        outputs = graph.build(batch_pipeline, settings)
        graph.write_stream_outputs(outputs, settings.outputs)
        (
            outputs["counts"]
            | beam.Map(json.dumps, sort_keys=True)
            | beam.io.WriteToText(str(work / "batch-counts"), ".json", shard_name_template="")
        )
    counts = json.loads((work / "batch-counts.json").read_text())

    streamed = {table: table_rows(work / "stream" / table) for table in graph.RECORD_TABLES}
    batched = {table: table_rows(work / "batch" / table) for table in graph.RECORD_TABLES}
    problems = []
    print(f"fed {files} files ({late_files} late), {fed_lines:,} lines in {fed_seconds / 60:.1f} min; work folder {work}")
    print(f"runner: {args.runner}")
    print("job RSS MiB over time (s):", ", ".join(f"{t:.0f}:{mib:.0f}" for t, mib, *_ in sampler.samples))
    print("idle runner RSS MiB (s):  ", ", ".join(f"{t:.0f}:{mib:.0f}" for t, mib, *_ in idle))
    print("job Python blocks (k) (s):", ", ".join(f"{t:.0f}:{blocks / 1000:.0f}" for t, _, blocks, _ in sampler.samples))
    if args.runner == "prism":
        print("job's Prism RSS MiB (s):  ", ", ".join(f"{t:.0f}:{prism:.0f}" for t, *_, prism in sampler.samples))
        steady = [sample for sample in sampler.samples if fed_seconds / 4 <= sample[0] <= fed_seconds]
        prism_slope = _slope([(t, prism) for t, *_, prism in steady]) * 60
        python_slope = _slope([(t, mib - prism) for t, mib, _, prism in steady]) * 60
        print(f"after warm-up: Prism {prism_slope:+.1f} MiB/min, the Python side {python_slope:+.1f} MiB/min")
    problems += memory_problems(sampler.samples, idle, warm_up=fed_seconds / 4, end=fed_seconds)
    accounted = len(streamed["verdicts"]) + len(streamed["dead_letters"]) + counts["skipped"]
    print(
        f"lines: fed {fed_lines:,}; batch read {counts['lines']:,}; streaming verdicts {len(streamed['verdicts']):,}"
        f" + dead letters {len(streamed['dead_letters']):,} + skipped {counts['skipped']:,} = {accounted:,}"
        f" (browsers written: {browsers:,})"
    )
    if not fed_lines == counts["lines"] == accounted:
        problems.append("lines not all accounted for")
    if counts["skipped"] != browsers:
        problems.append(f"batch skipped {counts['skipped']} lines, {browsers} browsers were written")
    for table in graph.RECORD_TABLES:
        same = streamed[table] == batched[table]
        print(f"{table}: streaming {len(streamed[table]):,} rows, batch {len(batched[table]):,}, {'equal' if same else 'DIFFERENT'}")
        if not same:
            problems.append(f"{table} differs from the batch run")
    for problem in problems:
        print("FAILED:", problem)
    if not args.keep and not problems:
        shutil.rmtree(work)
    return 1 if problems else 0


def deliver(staging: Path, incoming: Path, name: str, content: bytes) -> None:
    """A file appears complete, as log rotation moves it in."""
    (staging / name).write_bytes(content)
    (staging / name).rename(incoming / name)


def memory_problems(job: list, idle: list, warm_up: float, end: float) -> list[str]:
    start_rss, end_rss = _rss_at(job, warm_up), _rss_at(job, end)
    idle_growth = _rss_at(idle, end) - _rss_at(idle, warm_up)
    allowance = max(0.10 * start_rss, 40.0)
    steady = [(t, mib) for t, mib, *_ in job if warm_up <= t <= end]
    print(
        f"after warm-up ({warm_up:.0f}-{end:.0f} s): job RSS {start_rss:.0f} -> {end_rss:.0f} MiB"
        f" ({_slope(steady) * 60:+.1f} MiB/min); idle runner grew {idle_growth:.0f} MiB over the same span;"
        f" allowed beyond it: {allowance:.0f} MiB"
    )
    if end_rss - start_rss > idle_growth + allowance:
        return [f"the job's RSS grew {end_rss - start_rss:.0f} MiB after the warm-up, the idle runner's {idle_growth:.0f}"]
    return []


def _rss_at(samples: list, moment: float) -> float:
    """RSS of the sample nearest `moment`."""
    return min(samples, key=lambda sample: abs(sample[0] - moment))[1]


def _slope(points: list[tuple[float, float]]) -> float:
    n = len(points)
    if n < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    return sum((t - mean_t) * (y - mean_y) for t, y in points) / spread if spread else 0.0


if __name__ == "__main__":
    sys.exit(main())
