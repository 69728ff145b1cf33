"""The log-format corpus against GoAccess: per writer, the requests each reads, the share of request
lines `--log-format auto` reads, and how long detecting the format of a 200-line sample takes.

    python bench/logformat_corpus_bench.py                      # every writer of tests/data/logformats
    python bench/logformat_corpus_bench.py nginx_main caddy     # some writers
    python bench/logformat_corpus_bench.py --write-goaccess     # record GoAccess's counts in expected.json
    python bench/logformat_corpus_bench.py --no-goaccess        # crawl-audit's side only

Each writer's folder holds `access.log` and `expected.json` (tests/data/logformats/SOURCES.md says
what they hold and where the lines come from). Per writer it prints:

- `auto chose`: the format the detector picks on the file's first lines, as a batch run does at
  launch (`(refused)`: none reads most of them, and the run would refuse the file);
- `req lines`: the lines that record a request, counted by hand;
- `goaccess`: GoAccess's `valid_requests` with the format expected.json names (0 where it reads none
  or no format is given), rerun unless `--no-goaccess`;
- `ours`: the request records the chosen format's parser makes of every line;
- `read`: ours and the lines it reads as written that hold no request (a 408 with `"-"`, a
  `CONNECT`), which GoAccess counts as requests too; W3C directives are not counted;
- `vs goaccess`: read / GoAccess; `parse rate`: ours / request lines;
- `fields`: annotated lines whose host, path, status, User-Agent, client and time are all right;
- `detect ms`: detecting the format of a 200-line sample (the file's lines repeated), the best of
  --repeat rounds in CPU time, so that a busy machine counts less;
- `lines/s`: the chosen parser on that sample, CPU time, best of --repeat;
- `goals`: read >= GoAccess, ours >= 95% of the request lines, and every annotated field right.

The tests (tests/matcher/logformats/test_corpus.py) check the same goals against the counts
`--write-goaccess` stored, without running GoAccess.
"""
from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# The checkout's root before its tests/, whose matcher/ folder would otherwise pass for the package.
sys.path += [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "tests")]
from logformat_corpus import (  # noqa: E402
    CORPUS, SHARE, expected, first_lines, goaccess_reads, raw_lines, read_like_auto, writers, wrong_fields,
)


@dataclass(frozen=True)
class Outcome:
    writer: str
    chosen: str | None
    request_lines: int
    goaccess: int
    ours: int
    read: int
    fields_right: int
    annotated: int
    detect_seconds: float
    lines_per_second: float | None

    @property
    def passes(self) -> bool:
        return (self.read >= self.goaccess and self.ours >= SHARE * self.request_lines
                and self.fields_right == self.annotated)


def best_cpu_seconds(action, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def measure(writer: str, with_goaccess: bool, repeat: int) -> Outcome:
    from matcher.logformats import LogParseError, parser_for
    from matcher.logformats.detect import SAMPLE_LINES
    from matcher.logformats.inference import detected_format

    facts = expected(writer)
    got = read_like_auto(writer)
    sample = list(itertools.islice(itertools.cycle(first_lines(raw_lines(writer))), SAMPLE_LINES))
    detect_seconds = best_cpu_seconds(lambda: detected_format(sample), repeat)
    lines_per_second = None
    if got.chosen is not None:
        texts = [line.decode("utf-8", "backslashreplace") for line in sample]

        def parse_sample():
            parse = parser_for(got.chosen, mapping=got.field_map)
            for text in texts:
                try:
                    parse(text)
                except LogParseError:
                    pass

        lines_per_second = len(texts) / max(best_cpu_seconds(parse_sample, repeat), 1e-9)
    goaccess = goaccess_reads(writer) if with_goaccess else facts["goaccess"]["requests"] or 0
    annotated = facts["annotated"]
    wrong_lines = {entry.split(":")[0] for entry in wrong_fields(writer, got)}
    # a layout inferred from the lines is too long for the table: said as inferred
    inferred = got.field_map is not None or (got.chosen or "").startswith(("apache:", "nginx:"))
    chosen = f"inferred {got.chosen.partition(':')[0]}" if inferred else got.chosen
    return Outcome(writer, chosen, facts["request_lines"], goaccess, len(got.records), got.lines_read,
                   len(annotated) - len(wrong_lines), len(annotated), detect_seconds, lines_per_second)


def record_goaccess(writer: str, count: int) -> None:
    path = CORPUS / writer / "expected.json"
    facts = expected(writer)
    facts["goaccess"]["requests"] = count
    path.write_text(json.dumps(facts, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("writers", nargs="*", help="writers to measure (default: every folder of the corpus)")
    parser.add_argument("--no-goaccess", action="store_true", help="use the GoAccess counts stored in expected.json")
    parser.add_argument("--write-goaccess", action="store_true", help="store GoAccess's counts in expected.json")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with_goaccess = not args.no_goaccess
    if with_goaccess and shutil.which("goaccess") is None:
        parser.error("goaccess is not installed (Debian package goaccess), or give --no-goaccess")
    if args.write_goaccess and not with_goaccess:
        parser.error("--write-goaccess needs GoAccess")
    chosen_writers = args.writers or writers()
    print(f"{'writer':<27} {'auto chose':<18} {'req lines':>9} {'goaccess':>8} {'ours':>5} {'read':>5} {'vs goaccess':>11} "
          f"{'parse rate':>10} {'fields':>6} {'detect ms':>9} {'lines/s':>9}  goals")
    outcomes = []
    for writer in chosen_writers:
        o = measure(writer, with_goaccess, args.repeat)
        outcomes.append(o)
        if args.write_goaccess:
            record_goaccess(writer, o.goaccess)
        versus = f"{o.read / o.goaccess:.2f}" if o.goaccess else "-"
        rate = f"{o.ours / o.request_lines:.0%}"
        speed = f"{o.lines_per_second:,.0f}" if o.lines_per_second else "-"
        print(f"{o.writer:<27} {o.chosen or '(refused)':<18} {o.request_lines:>9} {o.goaccess:>8} {o.ours:>5} {o.read:>5} {versus:>11} "
              f"{rate:>10} {o.fields_right:>3}/{o.annotated:<2} {o.detect_seconds * 1000:>9.1f} {speed:>9}  "
              f"{'pass' if o.passes else 'FAIL'}")
    passed = sum(o.passes for o in outcomes)
    print(f"{passed} of {len(outcomes)} writers meet the goals; {sum(o.ours for o in outcomes)} requests read of "
          f"{sum(o.request_lines for o in outcomes)} request lines, GoAccess {sum(o.goaccess for o in outcomes)}; "
          f"detection of a 200-line sample: median "
          f"{sorted(o.detect_seconds for o in outcomes)[len(outcomes) // 2] * 1000:.1f} ms")
    return 0 if passed == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
