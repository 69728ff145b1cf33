"""DNS answers into the batch audit: one dict side input, or a join by address?

    python bench/dns_join_bench.py                       # 10k, 100k and 1M distinct addresses
    python bench/dns_join_bench.py --addresses 10000 --lines-per-address 4

The batch audit resolves each distinct client address once and hands the answers to the per-line
audit as `AsDict` (`pipeline/graph/line_audit.py` `AuditLogLines`): every worker holds them all. The
alternative moves each line to its address's answer instead: key the lines needing DNS by
address, `CoGroupByKey` with the answers, and group the answered lines back into their batches.

Both variants run here on the same synthetic input, each in a fresh process on the DirectRunner
(as `crawl-audit run` does), so its peak RSS is its own: N distinct addresses, each with a real
`DnsAnswer` (a PTR name and its forward confirmation, as `LiveResolver` returns them), and
N x L log lines in batches of 2,000, every line naming one address, the addresses shuffled over
the batches. Each line is decided with `matcher.identity`'s forward-confirmed check (`confirm_reverse_dns`)
against its answer; both variants must decide every line, to the same totals. It prints wall seconds and peak
RSS per variant and size, best of --repeat runs.
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(_HERE.parent)]

_BATCH = 2000
VARIANTS = ("side-input-dict", "keyed-join")


def addresses(count: int) -> list[str]:
    """Distinct IPv4 addresses from 10.0.0.0/8 (enough for 16M)."""
    return [f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}" for n in range(count)]


def answer(address: str):
    from matcher.reverse_dns import DnsAnswer, Lookup

    name = f"crawl-{address.replace('.', '-')}.googlebot.com"
    return DnsAnswer(address, Lookup((name,)), ((name, Lookup((address,))),), "2026-11-02T10:00:00Z")


def line_batches(count: int, per_address: int, seed: int = 17):
    """(batch id, [address per line]) batches; every address appears `per_address` times."""
    names = addresses(count) * per_address
    random.Random(seed).shuffle(names)
    for start in range(0, len(names), _BATCH):
        yield start // _BATCH, names[start : start + _BATCH]


def decide(address: str, found) -> str:
    from matcher.addresses import parse_ip
    from matcher.reverse_dns import confirm_reverse_dns

    if found is None:
        return "unanswered"
    return confirm_reverse_dns(found, parse_ip(address), ("googlebot.com",))[0]


def run_variant(variant: str, count: int, per_address: int) -> dict:
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    out = Path(f"/tmp/dns-join-{variant}-{count}-{time.time_ns()}")
    started = time.monotonic()
    with beam.Pipeline(options=PipelineOptions(["--runner=DirectRunner"])) as pipeline:
        answers = (
            pipeline
            | "Addresses" >> beam.Create(addresses(count))
            | "Reshuffle" >> beam.Reshuffle()
            | "Answers" >> beam.Map(lambda a: (a, answer(a)))
        )
        batches = pipeline | "Batches" >> beam.Create(list(line_batches(count, per_address)))
        if variant == "side-input-dict":
            decided = batches | "Decide" >> beam.FlatMap(
                lambda batch, by_address: [decide(a, by_address.get(a)) for a in batch[1]],
                beam.pvalue.AsDict(answers),
            )
        else:
            keyed = batches | "KeyLines" >> beam.FlatMap(
                lambda batch: [(a, (batch[0], n)) for n, a in enumerate(batch[1])]
            )
            joined = (
                {"lines": keyed, "answers": answers}
                | "JoinByAddress" >> beam.CoGroupByKey()
                | "AnswerLines" >> beam.FlatMap(
                    lambda item: [
                        (batch, (item[0], next(iter(item[1]["answers"]), None))) for batch, _ in item[1]["lines"]
                    ]
                )
                | "RegroupBatches" >> beam.GroupByKey()
            )
            decided = joined | "Decide" >> beam.FlatMap(
                lambda batch: [decide(address, found) for address, found in batch[1]]
            )
        (
            decided
            | "Count" >> beam.combiners.Count.PerElement()
            | "Encode" >> beam.Map(json.dumps)
            | "Write" >> beam.io.WriteToText(str(out), shard_name_template="")
        )
    elapsed = time.monotonic() - started
    totals = dict(json.loads(line) for line in out.read_text().splitlines())
    out.unlink()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"variant": variant, "addresses": count, "seconds": elapsed, "peak_rss_mib": peak_kib / 1024, "totals": totals}


def measure(variant: str, count: int, per_address: int) -> dict:
    child = subprocess.run(
        [sys.executable, __file__, "--child", variant, "--addresses", str(count), "--lines-per-address", str(per_address)],
        capture_output=True, text=True, check=False,
    )
    if child.returncode != 0:
        raise SystemExit(f"{variant} at {count}: failed\n{child.stderr[-3000:]}")
    return json.loads(child.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addresses", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--lines-per-address", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_variant(args.child, args.addresses[0], args.lines_per_address)))
        return 0
    print(f"{'addresses':>10} {'variant':>16} {'seconds':>9} {'peak RSS MiB':>13}")
    failed = False
    for count in args.addresses:
        best: dict[str, dict] = {}
        for round_ in range(args.repeat):
            for variant in VARIANTS if round_ % 2 == 0 else reversed(VARIANTS):
                result = measure(variant, count, args.lines_per_address)
                if variant not in best or result["seconds"] < best[variant]["seconds"]:
                    best[variant] = result
        expected = {"verified": count * args.lines_per_address}
        for variant in VARIANTS:
            result = best[variant]
            if result["totals"] != expected:
                print(f"{variant} at {count}: decided {result['totals']}, expected {expected}")
                failed = True
            print(f"{count:>10,} {variant:>16} {result['seconds']:>9.1f} {result['peak_rss_mib']:>13.0f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
