"""Cost of reverse-DNS verification in `crawl-audit run`: --dns off, snapshot and live, in one run.

    python bench/dns_bench.py                                  # 1,000,000 lines, DirectRunner
    python bench/dns_bench.py --lines 200000 --runner multi_processing --keep

The workload is `bench/workload.py`'s, made or reused by `pipeline_bench.ensure_workload`. DNS is
asked about its crawler requests that no range snapshot proves and whose crawler has DNS
suffixes: the spoofed Googlebots, YandexBot, Baiduspider, Applebot, Amazonbot and CCBot. A dnsmasq
started here on a loopback port answers for them: every address of those crawlers' subnets has a
PTR name under its crawler's first suffix that resolves back, and every other reverse name is
NXDOMAIN, so the spoofed Googlebots are refuted. Three runs of the `crawl-audit` script, each
timed by `pipeline_bench.measure` (wall clock, start-up included):

- off: `--dns off`, ranges only;
- live: `--dns live --dns-server 127.0.0.1:PORT --dns-record FILE`;
- snapshot: `--dns snapshot:FILE`, replaying the answers the first live run recorded.

With --repeat N the three run N times, in reversed order every other round, and each mode keeps
its best wall time: on a shared machine that is the least disturbed measurement. CPU seconds
(the child's and its workers') are reported beside it, being less sensitive to other load, and
so is the plain-Python cost per line of the extra DNS-question pass against the audit pass. All runs must agree
on the counts (DNS changes identities, not where lines go), the first snapshot run must write the
same verdicts as the live run it replays, and dnsmasq must have seen exactly one PTR query per
distinct address in every live run; otherwise the benchmark fails (exit 1). Needs dnsmasq
(Debian: dnsmasq-base).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pipeline_bench as tools
import workload as traffic
from config.registry import load_registry
from matcher.agents import Registry

# The dnsmasq launcher lives with the tests, which start the same server.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from localdns import Dnsmasq, DnsmasqError, dnsmasq_binary, running_dnsmasq  # noqa: E402


@dataclass(frozen=True)
class Run:
    mode: str
    measured: tools.Measurement
    outcome: tools.Outcome
    identities: Counter
    queries: Counter  # (type, name) -> times dnsmasq was asked during the run


def zone_hosts(registry: Registry) -> list[tuple[str, str]]:
    """(address, name) for every address of the workload's crawler subnets that DNS can prove."""
    hosts = []
    for agent, prefix in traffic.OTHER_CRAWLERS:
        crawler = registry.identify(agent)
        if crawler is None or not crawler.rdns_suffixes:
            continue
        for last in range(1, 255):
            address = f"{prefix}.{last}"
            hosts.append((address, f"crawl-{address.replace('.', '-')}.{crawler.rdns_suffixes[0]}"))
    return hosts


def zone_records(hosts: Sequence[tuple[str, str]], folder: Path) -> list[str]:
    """dnsmasq options answering for `hosts` and NXDOMAIN for every other reverse name."""
    zone = folder / "hosts"
    zone.write_text("".join(f"{address} {name}\n" for address, name in hosts))
    domains = sorted({name.split(".", 1)[1] for _, name in hosts} | {"in-addr.arpa", "ip6.arpa"})
    return [f"--addn-hosts={zone}", *(f"--local=/{domain}/" for domain in domains)]


def audit(workload: tools.Workload, runner: str, out: Path, mode: str, flags: Sequence[str], server: Dnsmasq) -> Run:
    command = [*tools.crawl_audit_command(), *workload.inputs(), "--log-format", "host_combined",
               "--out", str(out), *tools.RUNNER_FLAGS[runner], *flags]
    mark = server.mark()
    measured = tools.measure(command, out.with_suffix(".log"))
    asked = Counter(server.queries_since(mark))
    outcome = tools.read_outcome(out)
    identities = Counter()
    for row in map(json.loads, outcome.summary):
        identities[row["identity"]] += row["requests"]
    return Run(mode, measured, outcome, identities, asked)


def verdict_digest(out: Path) -> list[bytes]:
    """Sorted hashes of the verdict lines: equal lists mean equal verdict tables."""
    digests = []
    for part in sorted((out / "verdicts").glob("part*")):
        with part.open("rb") as handle:
            digests += [hashlib.sha256(line).digest() for line in handle]
    return sorted(digests)


def pass_costs(workload: tools.Workload, repeat: int) -> tuple[float, float]:
    """Seconds per line of the audit pass and of the DNS-question pass, in plain Python over the
    same batches and with the same code as the pipeline's two DoFns, best of `repeat`: a measure
    of the extra work that other load on the machine disturbs far less than a whole run."""
    from pipeline.graph.read_logs import LINES_PER_BATCH

    auditor, robots_by_host = tools.loop_auditor(workload.robots, workload.ranges)
    batches = [(path, first, lines) for path in sorted(glob.glob(workload.logs))
               for first, lines in tools.file_batches(path, LINES_PER_BATCH)]
    count = sum(len(batch[2]) for batch in batches)
    audit_best = questions_best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for path, first, lines in batches:
            for _ in auditor.audit_lines(path, first, lines, robots_by_host):
                pass
        audit_best = min(audit_best, time.process_time() - started)
        started = time.process_time()
        for batch in batches:
            auditor.dns_questions(batch)
        questions_best = min(questions_best, time.process_time() - started)
    return audit_best / count, questions_best / count


def best(runs: Sequence[Run]) -> list[Run]:
    """The fastest run (wall clock) of each mode, in the order the modes first ran."""
    fastest: dict[str, Run] = {}
    for run in runs:
        if run.mode not in fastest or run.measured.seconds < fastest[run.mode].measured.seconds:
            fastest[run.mode] = run
    return list(fastest.values())


def report(lines: int, runner: str, runs: Sequence[Run], recorded: int) -> str:
    off, off_cpu = runs[0].measured.seconds, runs[0].measured.cpu_seconds
    header = ("mode", "wall s", "lines/s", "off/mode wall", "cpu s", "off/mode cpu", "peak RSS",
              "verified", "spoofed", "unverified", "other")
    cells = [header] + [
        (r.mode, f"{r.measured.seconds:.1f}", f"{lines / r.measured.seconds:,.0f}", f"{off / r.measured.seconds:.2f}",
         f"{r.measured.cpu_seconds:.1f}", f"{off_cpu / r.measured.cpu_seconds:.2f}", tools.mib(r.measured.peak_rss),
         *(f"{r.identities[k]:,}" for k in ("verified", "spoofed", "unverified")),
         f"{sum(r.identities.values()) - sum(r.identities[k] for k in ('verified', 'spoofed', 'unverified')):,}")
        for r in runs
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    table = "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells)
    live = next(r for r in runs if r.mode == "live").queries
    ptr = [n for (kind, _), n in live.items() if kind == "PTR"]
    forward = sum(n for (kind, _), n in live.items() if kind in ("A", "AAAA"))
    return "\n".join((
        f"{lines:,} lines, {runner}, best of each mode",
        table,
        f"live DNS: {sum(ptr):,} PTR queries for {len(ptr):,} distinct addresses, {forward:,} forward queries; "
        f"{recorded:,} answers recorded",
    ))


def check(runs: Sequence[Run], recorded: int, same_verdicts: bool) -> list[str]:
    problems = [f"{r.mode}: counts {r.outcome.counts} != off {runs[0].outcome.counts}"
                for r in runs[1:] if r.outcome.counts != runs[0].outcome.counts]
    if not same_verdicts:
        problems.append("live and snapshot verdicts differ")
    for run in runs:
        ptr = [n for (kind, _), n in run.queries.items() if kind == "PTR"]
        expected = recorded if run.mode == "live" else 0
        if any(n != 1 for n in ptr) or len(ptr) != expected:
            problems.append(f"{run.mode}: {sum(ptr)} PTR queries for {len(ptr)} names, expected {expected}")
    return problems


def run_modes(workload: tools.Workload, args: argparse.Namespace, folder: Path, server: Dnsmasq,
              record: Path) -> list[Run]:
    """Every mode, `--repeat` rounds, in reversed order every other round."""
    modes = {
        "off": ["--dns=off"],
        "live": ["--dns=live", f"--dns-server={server.address}"],
        "snapshot": [f"--dns=snapshot:{record}"],
    }
    runs: list[Run] = []
    for round_ in range(args.repeat):
        for mode in list(modes)[:: -1 if round_ % 2 else 1]:
            flags = modes[mode] + ([f"--dns-record={record}"] if mode == "live" and round_ == 0 else [])
            runs.append(audit(workload, args.runner, folder / f"out-{mode}-{round_}", mode, flags, server))
            measured = runs[-1].measured
            print(f"  round {round_ + 1}, {mode}: {measured.seconds:.1f} s, cpu {measured.cpu_seconds:.1f} s", flush=True)
    return runs


def bench(args: argparse.Namespace) -> int:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    workload, fresh = tools.ensure_workload(args.lines, args, work)
    folder = Path(tempfile.mkdtemp(prefix="dns-bench-", dir=work))
    record = folder / "dns-answers.jsonl"
    binary = dnsmasq_binary()
    if binary is None:
        raise SystemExit("dns_bench.py: dnsmasq not found (Debian: apt-get install dnsmasq-base)")
    hosts = zone_hosts(load_registry())
    try:
        with running_dnsmasq(binary, folder, zone_records(hosts, folder), probe=hosts[0][1]) as server:
            runs = run_modes(workload, args, folder, server, record)
    except DnsmasqError as error:
        raise SystemExit(f"dns_bench.py: {error}") from None
    recorded = sum(1 for line in record.read_text("utf-8").splitlines() if line.strip())
    same = verdict_digest(folder / "out-live-0") == verdict_digest(folder / "out-snapshot-0")
    print(report(args.lines, args.runner, best(runs), recorded))
    audit_cost, question_cost = pass_costs(workload, args.repeat + 2)
    print(f"plain-Python cpu per line: audit pass {audit_cost * 1e6:.1f} us, DNS-question pass "
          f"{question_cost * 1e6:.1f} us ({question_cost / audit_cost:.0%} of the audit pass)")
    problems = check(runs, recorded, same)
    for problem in problems:
        print(f"MISMATCH {problem}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
        if fresh:
            shutil.rmtree(workload.folder, ignore_errors=True)
    return 1 if problems else 0


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="workload size")
    parser.add_argument("--runner", choices=sorted(tools.RUNNER_FLAGS), default="direct")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the three runs; the best time counts")
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--versions", type=int, default=4)
    parser.add_argument("--seed", type=int, default=20261102)
    parser.add_argument("--shared", default=str(tools.REPO.parent / "shared"), help="shared folder with corpus/")
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "crawl-audit-bench"),
                        help="where workloads and outputs go")
    parser.add_argument("--keep", action="store_true", help="keep the workload (reused next time) and outputs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    if args.lines < 1 or args.repeat < 1:
        raise SystemExit("dns_bench.py: --lines and --repeat must be positive")
    return bench(args)


if __name__ == "__main__":
    raise SystemExit(main())
