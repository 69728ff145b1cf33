"""robots.txt engine benchmark: crawl-audit against Protego and urllib.robotparser.

Over the shared corpus, each engine parses every robots.txt file, then decides
every crawled URL of each host for a few crawlers. All engines get the same inputs
in the same order, in one process; parsing and deciding are timed apart, and the
best of --repeat runs is kept. Protego and urllib.robotparser parse text, so their
parse time includes decoding the bytes (as UTF-8, undecodable bytes replaced),
which our engine does itself.

    python bench/matcher_bench.py [--shared PATH] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import urllib.robotparser
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from protego import Protego

from config.registry import default_registry
from matcher import robots

REPO = Path(__file__).resolve().parent.parent
REGISTRY = default_registry()
AGENTS = ("googlebot", "bingbot", "gptbot")
DECISIONS_PER_PROTEGO = 5.0  # target: our decisions/s at least 5x Protego's
PARSE_PER_PROTEGO = 1.0  # target: our parse throughput at least Protego's


@dataclass(frozen=True)
class Corpus:
    bodies: tuple[bytes, ...]  # every robots.txt file
    links: tuple[tuple[int, tuple[str, ...]], ...]  # (index into bodies, URLs) per host with links

    @property
    def decisions(self) -> int:
        return len(AGENTS) * sum(len(urls) for _, urls in self.links)


@dataclass(frozen=True)
class Engine:
    name: str
    parse: Callable[[bytes], Any]
    allowed: Callable[[Any, str, str], bool]  # (parsed, agent, url)


@dataclass(frozen=True)
class Result:
    name: str
    parse_seconds: float
    decide_seconds: float
    verdicts: tuple[bool, ...]


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace")


def _urllib_parse(body: bytes) -> urllib.robotparser.RobotFileParser:
    parser = urllib.robotparser.RobotFileParser()
    parser.parse(_text(body).splitlines())
    return parser


def _protego_parse(body: bytes) -> Protego:
    return Protego.parse(_text(body))


ENGINES = (
    Engine("crawl-audit", robots.parse, lambda rf, agent, url: rf.decide(agent, url, REGISTRY).allowed),
    Engine("protego", _protego_parse, lambda rp, agent, url: rp.can_fetch(url, agent)),
    Engine("urllib.robotparser", _urllib_parse, lambda rp, agent, url: rp.can_fetch(agent, url)),
)


def load_corpus(shared: Path) -> Corpus:
    robots_dir, links_dir = shared / "corpus" / "robots", shared / "corpus" / "links"
    paths = sorted(robots_dir.iterdir())
    links = tuple(
        (index, tuple((links_dir / path.name).read_text("utf-8").splitlines()))
        for index, path in enumerate(paths)
        if (links_dir / path.name).exists()
    )
    return Corpus(tuple(path.read_bytes() for path in paths), links)


def run_once(engine: Engine, corpus: Corpus) -> Result:
    parse, allowed = engine.parse, engine.allowed
    start = time.perf_counter()
    parsed = [parse(body) for body in corpus.bodies]
    parsed_at = time.perf_counter()
    verdicts = [
        allowed(parsed[index], agent, url)
        for index, urls in corpus.links
        for agent in AGENTS
        for url in urls
    ]
    decided_at = time.perf_counter()
    return Result(engine.name, parsed_at - start, decided_at - parsed_at, tuple(verdicts))


def best_of(results: Sequence[Result]) -> Result:
    """Fastest parse and fastest decisions over the repeats (verdicts never vary)."""
    return Result(
        results[0].name,
        min(r.parse_seconds for r in results),
        min(r.decide_seconds for r in results),
        results[0].verdicts,
    )


def agreement(result: Result, reference: Result) -> float:
    same = sum(a == b for a, b in zip(result.verdicts, reference.verdicts))
    return 100.0 * same / len(reference.verdicts)


def report(corpus: Corpus, results: Sequence[Result], repeat: int) -> str:
    files, decisions = len(corpus.bodies), corpus.decisions
    megabytes = sum(map(len, corpus.bodies)) / 1e6
    by_name = {r.name: r for r in results}
    protego, ours = by_name["protego"], by_name["crawl-audit"]
    lines = [
        f"corpus: {files} robots.txt files ({megabytes:.1f} MB); {decisions // len(AGENTS)} URLs"
        f" x {len(AGENTS)} agents ({', '.join(AGENTS)}) = {decisions} decisions; best of {repeat}",
        "",
        f"{'engine':<20} {'files/s':>9} {'vs protego':>10} {'decisions/s':>12} {'vs protego':>10}"
        f" {'agrees with protego':>20}",
    ]
    for r in results:
        parse_ratio = protego.parse_seconds / r.parse_seconds
        decide_ratio = protego.decide_seconds / r.decide_seconds
        lines.append(
            f"{r.name:<20} {files / r.parse_seconds:>9,.0f} {parse_ratio:>9.2f}x"
            f" {decisions / r.decide_seconds:>12,.0f} {decide_ratio:>9.2f}x"
            f" {agreement(r, protego):>19.3f}%"
        )
    decide_ratio = protego.decide_seconds / ours.decide_seconds
    parse_ratio = protego.parse_seconds / ours.parse_seconds
    lines += [
        "",
        _target("decisions/s", decide_ratio, DECISIONS_PER_PROTEGO),
        _target("parse files/s", parse_ratio, PARSE_PER_PROTEGO),
    ]
    return "\n".join(lines)


def _target(what: str, ratio: float, goal: float) -> str:
    verdict = "met" if ratio >= goal else "MISSED"
    return f"target: crawl-audit {what} >= {goal:g}x protego: {verdict} ({ratio:.2f}x)"


def _default_shared() -> Path:
    configured = os.environ.get("CRAWL_AUDIT_SHARED")
    return Path(configured) if configured else REPO.parent / "shared"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shared", type=Path, default=_default_shared(),
        help="folder with corpus/robots and corpus/links (default: $CRAWL_AUDIT_SHARED, ../shared)",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per engine; the best is kept (default 3)"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if not (args.shared / "corpus" / "robots").is_dir():
        parser.error(f"no corpus under {args.shared} (pass --shared or set CRAWL_AUDIT_SHARED)")
    corpus = load_corpus(args.shared)
    runs: dict[str, list[Result]] = {engine.name: [] for engine in ENGINES}
    for _ in range(args.repeat):
        for engine in ENGINES:
            runs[engine.name].append(run_once(engine, corpus))
    print(report(corpus, [best_of(results) for results in runs.values()], args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
