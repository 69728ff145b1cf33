"""`crawl-audit whatif`: a finished run's verdicts of one host, decided again under a proposed
robots.txt (`matcher.whatif`), printed and written to OUT/whatif/.

OUT/whatif/ holds `flips.jsonl` (every flip, `records.WHATIF_FLIPS`), `summary.json` (totals and
the top paths per crawler, what the report's `whatif` section shows) and `proposed.txt` (the
proposal as given, so the report can be rebuilt from the folder alone).
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from config.registry import load_registry
from matcher import records, robots
from matcher.agents import Registry
from matcher.hosts import host_key
from matcher.whatif import CHANGES, Flip, Outcome, PastRequest, by_crawler, redecide
from pipeline.tables import reading as tables
from matcher.printable import printable
from matcher.timerange import parse_duration
from pipeline.report.robots_readers import readers
from pipeline.tables.run_folder import read_manifest, write_whole

FOLDER = "whatif"
SUMMARY = "summary.json"
_VERDICT_COLUMNS = ["ts", "host", "crawler", "identity", "tokens", "path", "decision"]
_CHANGE_WORDS = {"allowed-to-disallowed": "allowed -> disallowed", "disallowed-to-allowed": "disallowed -> allowed"}


@dataclass(frozen=True)
class Question:
    out: str
    host: str
    proposal_name: str
    proposal: bytes
    start: datetime | None = None
    end: datetime | None = None


def past_requests(question: Question, registry: Registry) -> Counter:
    """The host's verdicts in the time range, counted by what decides them."""
    host = host_key(question.host)
    timed = question.start is not None or question.end is not None
    # Timestamps are the costliest column to read back; only a time range needs them.
    columns = [c for c in records.VERDICTS if c.name in _VERDICT_COLUMNS and (timed or c.name != "ts")]
    counted: Counter = Counter()
    hosts: Counter = Counter()
    for table in tables.slices(question.out, records.VERDICTS_TABLE, columns):
        # Hosts compared as `host_key` compares them: lower-case, without the root's dot.
        keys = pc.utf8_rtrim(pc.utf8_lower(table["host"]), characters=".")
        mask = pc.fill_null(pc.equal(keys, host), False)
        if timed:
            if question.start is not None:
                mask = pc.and_(mask, pc.greater_equal(table["ts"], pa.scalar(question.start, table["ts"].type)))
            if question.end is not None:
                mask = pc.and_(mask, pc.less(table["ts"], pa.scalar(question.end, table["ts"].type)))
        values, counts = pc.value_counts(table["host"]).flatten()
        hosts.update(dict(zip(values.to_pylist(), counts.to_pylist())))
        chosen = table.filter(mask)
        chosen = chosen.append_column("chain", pc.binary_join(chosen["tokens"], "\n"))
        grouped = chosen.group_by(["crawler", "identity", "chain", "path", "decision"]).aggregate(
            [("identity", "count", pc.CountOptions(mode="all"))]
        )
        for crawler, identity, chain, path, decision, count in zip(*(c.to_pylist() for c in grouped.columns)):
            counted[(crawler, identity, chain, path, decision)] += count
    if not counted:
        # Most likely a mistyped host or range: say so rather than report that nothing changes.
        if timed:
            raise ValueError(f"no verdicts of {host} in that time range")
        known = ", ".join(str(name) for name, _ in hosts.most_common(5))
        raise ValueError(f"no verdicts of {host} in {question.out}; hosts with most: {known or 'none'}")
    catch_all = {crawler: _obeys_catch_all(crawler, registry) for crawler, *_ in counted}
    requests: Counter = Counter()
    for (crawler, identity, chain, path, decision), n in counted.items():
        tokens = tuple(chain.split("\n")) if chain else ()
        requests[PastRequest(crawler, identity, tokens, catch_all[crawler], path or "", decision)] += n
    return requests


def _obeys_catch_all(crawler: str | None, registry: Registry) -> bool:
    registered = registry.get(crawler) if crawler else None
    return not (registered is not None and registered.ignores_catch_all)


def answer(question: Question, registry: Registry) -> Outcome:
    return redecide(past_requests(question, registry), robots.parse(question.proposal))


def when_read(question: Question, outcome: Outcome) -> list[dict]:
    """How long after the proposal went live each crawler whose requests it flips would have read
    it, from the cadence of its robots.txt fetches on the host in this run: the same rule as the
    audit's (docs/semantics.md § The robots.txt the crawler fetched). Until it read the proposal, a
    request only the proposal disallows is `disallowed-before-refetch`, for at most the cache grace;
    a crawler with no fetch seen is granted the grace, assumed."""
    host = host_key(question.host)
    manifest = read_manifest(question.out)
    grace = parse_duration(manifest["options"]["cache_grace"])
    rows = list(tables.rows(question.out, records.ROBOTS_FETCHES_TABLE)) if records.ROBOTS_FETCHES_TABLE in manifest["tables"] else []
    by_reader = {(r.family, r.identity): r for r in readers([row for row in rows if row["host"] == host])}
    flipped = sorted({(f.crawler, f.identity) for f in outcome.flips if f.crawler is not None})
    answers = []
    for crawler, identity in flipped:
        # its own family's fetches, or those of the family it fetched under
        reader = by_reader.get((crawler, identity)) or next(
            (r for (_, ident), r in by_reader.items() if ident == identity and crawler in r.crawlers), None
        )
        typical = None if reader is None else reader.median_interval
        longest = None if reader is None else reader.longest_interval
        answers.append({
            "crawler": crawler,
            "identity": identity,
            "fetches": 0 if reader is None else len(reader.times),
            "typical_s": None if typical is None else typical.total_seconds(),
            "longest_s": None if longest is None else longest.total_seconds(),
            "grace_s": grace.total_seconds(),
            "grace_assumed": reader is None or typical is None,
        })
    return answers


def summary(question: Question, outcome: Outcome, top: int = 10) -> dict:
    """The JSON the report's `whatif` section is drawn from."""
    return {
        "when_read": when_read(question, outcome),
        "host": host_key(question.host),
        "proposal": question.proposal_name,
        "proposal_sha256": hashlib.sha256(question.proposal).hexdigest(),
        "from": None if question.start is None else records.rfc3339(question.start),
        "to": None if question.end is None else records.rfc3339(question.end),
        "requests": outcome.requests,
        "unchanged": outcome.unchanged,
        "flipped": {change: sum(f.requests for f in outcome.flips if f.change == change) for change in CHANGES},
        "unknown_now_allowed": outcome.unknown_now_allowed,
        "unknown_now_disallowed": outcome.unknown_now_disallowed,
        "crawlers": [
            {
                "crawler": change.crawler,
                "identity": change.identity,
                "requests": dict(change.requests),
                "top": {kind: [_flip_row(question.host, flip) for flip in flips] for kind, flips in change.top.items()},
            }
            for change in by_crawler(outcome.flips, top)
        ],
    }


def _flip_row(host: str, flip: Flip) -> dict:
    rule = flip.rule
    return {
        "host": host_key(host),
        "crawler": flip.crawler,
        "identity": flip.identity,
        "change": flip.change,
        "path": flip.path,
        "rule_kind": None if rule is None else rule.kind,
        "rule_pattern": None if rule is None else rule.pattern,
        "rule_line": None if rule is None else rule.line,
        "reason": flip.reason,
        "requests": flip.requests,
    }


def write(question: Question, outcome: Outcome, digest: dict) -> str:
    """OUT/whatif/ with the flips, the summary and the proposal; returns the folder."""
    folder = Path(question.out) / FOLDER
    folder.mkdir(exist_ok=True)
    lines = (
        json.dumps(records.to_json_ready(_flip_row(question.host, flip), records.WHATIF_FLIPS), ensure_ascii=False)
        for flip in outcome.flips
    )
    write_whole(folder / "flips.jsonl", "".join(line + "\n" for line in lines).encode("utf-8"))
    write_whole(folder / SUMMARY, json.dumps(digest, indent=2, ensure_ascii=False).encode("utf-8"))
    write_whole(folder / "proposed.txt", question.proposal)
    return str(folder)


def load_summary(out: str) -> dict | None:
    """The last what-if written under `out`, or None."""
    path = Path(out) / FOLDER / SUMMARY
    if not path.exists():
        return None
    return json.loads(path.read_bytes().decode("utf-8"))


def render(digest: dict) -> str:
    """The what-if as text: totals, then per crawler the flips and their top paths."""
    span = f" from {digest['from'] or 'the start'} to {digest['to'] or 'the end'}" if digest["from"] or digest["to"] else ""
    flipped = digest["flipped"]
    out = [
        f"what-if on {digest['host']}{span}: {digest['proposal']} (sha256 {digest['proposal_sha256'][:12]})",
        f"  requests decided again  {digest['requests']:>9,}",
        f"  unchanged               {digest['unchanged']:>9,}",
        f"  allowed -> disallowed   {flipped['allowed-to-disallowed']:>9,}",
        f"  disallowed -> allowed   {flipped['disallowed-to-allowed']:>9,}",
    ]
    unknown = digest["unknown_now_allowed"] + digest["unknown_now_disallowed"]
    if unknown:
        out.append(
            f"  no robots.txt version then: {unknown:,} (the proposal would allow"
            f" {digest['unknown_now_allowed']:,}, disallow {digest['unknown_now_disallowed']:,})"
        )
    for crawler in digest["crawlers"]:
        name = crawler["crawler"] or "(undeclared)"
        for change in CHANGES:
            flips = crawler["top"][change]
            if not flips:
                continue
            out.append(f"{name} ({crawler['identity']}): {crawler['requests'][change]:,} {_CHANGE_WORDS[change]}")
            for flip in flips:
                out.append(f"  {flip['requests']:>9,}  {flip['path']}  {flip_rule_text(flip)}")
    for reader in digest.get("when_read", ()):
        out.append(when_read_text(reader))
    # Paths, hosts and crawler names come from log lines: escaped before they reach a terminal.
    return "\n".join(map(printable, out))


def when_read_text(reader: dict) -> str:
    """One crawler's expected read of the proposal, for a person."""
    name = f"{reader['crawler']} ({reader['identity']})"
    if reader["grace_assumed"]:
        seen = "one robots.txt fetch" if reader["fetches"] == 1 else "no robots.txt fetch"
        return f"{name}: {seen} seen on this host; the cache grace ({_hours(reader['grace_s'])}) is assumed"
    excused = min(reader["longest_s"], reader["grace_s"])
    return (
        f"{name}: would read it about {_hours(reader['typical_s'])} after it went live (at most"
        f" {_hours(reader['longest_s'])} in this run's {reader['fetches']} fetches); until then, for at most"
        f" {_hours(excused)}, its requests the proposal disallows would be disallowed-before-refetch, after it violations"
    )


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def flip_rule_text(flip: dict) -> str:
    """The proposal's rule that made the difference, or why none did."""
    if flip["rule_kind"] is not None:
        return f"{flip['rule_kind'].capitalize()}: {flip['rule_pattern']} (line {flip['rule_line']})"
    return {
        "no-match": "no rule of the proposal matches",
        "no-group": "the proposal has no group for this crawler",
        "robots-exempt": "/robots.txt is always allowed",
    }.get(flip["reason"], flip["reason"])


def run(question: Question, registry_path: str | None = None) -> dict:
    """Answer, write and return the summary."""
    outcome = answer(question, load_registry(registry_path))
    digest = summary(question, outcome)
    write(question, outcome, digest)
    return digest
