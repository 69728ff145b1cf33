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
from matcher.whatif import CHANGES, CONFLICT_CHANGES, Flip, Outcome, PastRequest, by_crawler, redecide
from pipeline.tables import reading as tables
from matcher.printable import printable
from matcher.timerange import parse_duration
from pipeline.report.robots_readers import readers
from pipeline.tables.files import MissingFile, RunFolderError, read_member, remove_member, write_member
from pipeline.tables.run_folder import read_manifest

FOLDER = "whatif"
SUMMARY = "summary.json"
_VERDICT_COLUMNS = ["ts", "host", "crawler", "identity", "tokens", "path", "decision", "purpose", "preference_conflicts"]
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
        chosen = chosen.append_column("purposes", pc.binary_join(chosen["purpose"], "\n"))
        chosen = chosen.append_column("conflicts", pc.binary_join(chosen["preference_conflicts"], "\n"))
        keys = ["crawler", "identity", "chain", "path", "decision", "purposes", "conflicts"]
        grouped = chosen.group_by(keys).aggregate([("identity", "count", pc.CountOptions(mode="all"))])
        for *key, count in zip(*(grouped[name].to_pylist() for name in [*keys, "identity_count"])):
            counted[tuple(key)] += count
    if not counted:
        # Most likely a mistyped host or range: say so rather than report that nothing changes.
        if timed:
            raise ValueError(f"no verdicts of {host} in that time range")
        known = ", ".join(str(name) for name, _ in hosts.most_common(5))
        raise ValueError(f"no verdicts of {host} in {question.out}; hosts with most: {known or 'none'}")
    catch_all = {crawler: _obeys_catch_all(crawler, registry) for crawler, *_ in counted}
    requests: Counter = Counter()
    for (crawler, identity, chain, path, decision, purposes, conflicts), n in counted.items():
        tokens, purpose, conflict = (tuple(text.split("\n")) if text else () for text in (chain, purposes, conflicts))
        requests[PastRequest(crawler, identity, tokens, catch_all[crawler], path or "", decision, purpose, conflict)] += n
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
        "by_purpose": {
            purpose: {change: outcome.by_purpose.get((purpose, change), 0) for change in CHANGES}
            for purpose in sorted({purpose for purpose, _ in outcome.by_purpose})
        },
        "preference_conflicts": {
            **{change: sum(c.requests for c in outcome.preference_changes if c.change == change) for change in CONFLICT_CHANGES},
            "rows": [
                {"crawler": c.crawler, "identity": c.identity, "change": c.change, "conflict": c.conflict, "requests": c.requests}
                for c in outcome.preference_changes[:top * 5]
            ],
        },
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
    """OUT/whatif/ with the flips, the summary and the proposal; returns the folder. Each file is
    written whole and no link in OUT is followed (`pipeline.tables.files`). The summary, which the
    report reads, goes first and comes back last, so a what-if that fails half way (a full disk)
    leaves none that would pass the new flips for an earlier what-if's."""
    remove_member(question.out, f"{FOLDER}/{SUMMARY}")
    lines = (
        json.dumps(records.to_json_ready(_flip_row(question.host, flip), records.WHATIF_FLIPS), ensure_ascii=False)
        for flip in outcome.flips
    )
    write_member(question.out, f"{FOLDER}/flips.jsonl", "".join(line + "\n" for line in lines).encode("utf-8"))
    write_member(question.out, f"{FOLDER}/proposed.txt", question.proposal)
    write_member(question.out, f"{FOLDER}/{SUMMARY}", json.dumps(digest, indent=2, ensure_ascii=False).encode("utf-8"))
    return str(Path(question.out) / FOLDER)


# The summary is the top flips of each crawler: small, whatever the run.
MAX_SUMMARY_BYTES = 64 << 20


def load_summary(out: str) -> dict | None:
    """The last what-if written under `out`, or None; RunFolderError when it is not one `write` wrote."""
    name = f"{FOLDER}/{SUMMARY}"
    try:
        data = read_member(out, name, MAX_SUMMARY_BYTES)
    except MissingFile:
        return None
    try:
        digest = json.loads(data)
    except ValueError as error:
        raise RunFolderError(f"{Path(out, name)}: not JSON: {error}") from None
    problem = _summary_problem(digest)
    if problem is not None:
        raise RunFolderError(f"{Path(out, name)}: {problem}; run the what-if again")
    return digest


def _summary_problem(digest: object) -> str | None:
    """What makes `digest` not a summary `summary` makes, or None."""
    if not isinstance(digest, dict):
        return "not a what-if summary"
    for key, kinds in _SUMMARY_FIELDS.items():
        value = digest.get(key)
        if not isinstance(value, kinds) or isinstance(value, bool):
            return f"{key} is missing or of the wrong type"
    if not _counts_of(digest["flipped"], CHANGES):
        return "flipped must count each change"
    for crawler in digest["crawlers"]:
        if not isinstance(crawler, dict) or not isinstance(crawler.get("identity"), str):
            return "a crawler entry has no identity"
        if not isinstance(crawler.get("crawler"), (str, type(None))):
            return "a crawler entry's crawler must be a string or null"
        if not _counts_of(crawler.get("requests"), CHANGES) or not isinstance(crawler.get("top"), dict):
            return "a crawler entry must count and list each change"
        for change in CHANGES:
            flips = crawler["top"].get(change)
            if not isinstance(flips, list):
                return f"a crawler entry lists no {change}"
            for flip in flips:
                problem = records.row_problem(flip, records.WHATIF_FLIPS)
                if problem is not None:
                    return f"a flip: {problem}"
    # a summary from before the fetch cadence was read has no when_read
    when = digest.get("when_read", [])
    if not isinstance(when, list) or not all(_when_read_problem(reader) is None for reader in when):
        return "when_read must list each flipped crawler's expected read"
    return None


def _when_read_problem(reader: object) -> str | None:
    """What makes `reader` not an entry `when_read` makes, or None."""
    if not isinstance(reader, dict):
        return "not an entry"
    for key, kinds in _WHEN_READ_FIELDS.items():
        value = reader.get(key)
        if not isinstance(value, kinds) or (isinstance(value, bool) and kinds is not bool):
            return f"{key} is missing or of the wrong type"
    if not reader["grace_assumed"] and (reader["typical_s"] is None or reader["longest_s"] is None):
        return "a cadence not assumed needs its intervals"
    return None


def _counts_of(value: object, keys) -> bool:
    return isinstance(value, dict) and all(
        isinstance(value.get(key), int) and not isinstance(value.get(key), bool) for key in keys
    )


_NULLABLE_TEXT = (str, type(None))
_SUMMARY_FIELDS = {
    "host": str, "proposal": str, "proposal_sha256": str, "from": _NULLABLE_TEXT, "to": _NULLABLE_TEXT,
    "requests": int, "unchanged": int, "flipped": dict, "unknown_now_allowed": int,
    "unknown_now_disallowed": int, "crawlers": list,
}
_NULLABLE_SECONDS = (int, float, type(None))
_WHEN_READ_FIELDS = {
    "crawler": str, "identity": str, "fetches": int, "typical_s": _NULLABLE_SECONDS,
    "longest_s": _NULLABLE_SECONDS, "grace_s": (int, float), "grace_assumed": bool,
}


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
    conflicts = digest.get("preference_conflicts")
    if conflicts and (conflicts["created"] or conflicts["removed"]):
        out.append(
            f"  preference conflicts: {conflicts['created']:,} created, {conflicts['removed']:,} removed"
            " (usage preferences the crawlers' purposes would go against; not access)"
        )
        for row in conflicts["rows"]:
            out.append(f"    {row['requests']:>9,}  {row['change']:<8}  {row['crawler'] or '(undeclared)'} ({row['identity']})  {row['conflict']}")
    for purpose, changes in (digest.get("by_purpose") or {}).items():
        out.append(
            f"  purpose {purpose}: {changes['allowed-to-disallowed']:,} allowed -> disallowed,"
            f" {changes['disallowed-to-allowed']:,} disallowed -> allowed"
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
