"""Run health: what a finished run could not judge, and the flag or command that fixes it.

A run whose inputs do not fit together (a log format that reads no line, a log without hosts, a
robots table for other hosts or a later time, no range snapshot for the log's days with DNS off)
still ends with verdicts; the checks here say which of them are worth nothing and why, from the
run's counts alone. Each check has a stable name, so that `run --fail-on NAME` can turn it into
an exit code for scripts.
"""
from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from matcher.agents import Registry
from matcher.identity import DNS_OFF_EVIDENCE, UNTRUSTED_DNS_EVIDENCE
from matcher.ip_ranges import RangeIndex
from matcher.logformats import PASTE_YOUR_FORMAT

__all__ = [
    "CHECKS",
    "DEAD_LETTER_SHARE",
    "Finding",
    "RunFacts",
    "closest_hosts",
    "findings",
    "launch_findings",
    "uncovered_crawlers",
    "identity_note",
]

# Every check, in the order a report lists what it found.
CHECKS = ("dead-letters", "no-host", "unknown-host", "before-history", "ranges", "resolver")
# Past this share of dead letters the log format is suspect: a real log holds a few TLS
# handshakes and scanner junk, never a tenth of its lines.
DEAD_LETTER_SHARE = 0.10
# Past this share of reverse-DNS lookups failing (timeouts, SERVFAIL, no server) the resolver,
# not the crawlers, is the problem.
RESOLVER_FAILURE_SHARE = 0.5
RESOLVER_MIN_LOOKUPS = 5
_HOSTS_SHOWN = 5

# What `identity_note` tells apart in an identity verdict's evidence (matcher/identity.py and
# matcher/reverse_dns.py write these phrases).
NO_SNAPSHOT = "no-range-snapshot"
# followed by ":" and the sources without a snapshot within the window, comma-separated
OUTSIDE_WINDOW = "range-snapshot-outside-window"
DNS_OFF = "dns-off"
DNS_FAILED = "dns-failed"
DNS_NXDOMAIN = "dns-nxdomain"
DNS_ANSWERED = "dns-answered"
DNS_UNTRUSTED = "dns-untrusted"
_DEFINITE_PTR = ("nxdomain", "no-answer")
_OUTSIDE_WINDOW = re.compile(r"no snapshot of (\S+) within \d+ days? of ")


def identity_note(identity: str, method: str | None, evidence: str | None) -> str | None:
    """What decided an identity, or kept it undecided, as far as the checks care: a range snapshot
    missing or too new, DNS off, or how a reverse-DNS lookup went; None for anything else."""
    evidence = evidence or ""
    if method == "reverse-dns" and not evidence.startswith(DNS_OFF_EVIDENCE):
        if identity == "unverified":
            return DNS_UNTRUSTED if f"; {UNTRUSTED_DNS_EVIDENCE}: " in evidence else DNS_FAILED
        if identity == "spoofed" and evidence.startswith("PTR of ") and evidence.split(": ", 1)[-1].startswith(_DEFINITE_PTR):
            return DNS_NXDOMAIN
        return DNS_ANSWERED
    if identity != "unverified":
        return None
    if "no range snapshot for" in evidence:
        return NO_SNAPSHOT
    outside = _OUTSIDE_WINDOW.findall(evidence)
    if outside:
        return f"{OUTSIDE_WINDOW}:{','.join(outside)}"
    if evidence.startswith(DNS_OFF_EVIDENCE):
        return DNS_OFF
    return None


@dataclass(frozen=True)
class Finding:
    """One check that found a problem: what, how many requests or lines it touched, the fix."""

    check: str
    problem: str
    fix: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunFacts:
    """What a finished run counted that the checks read."""

    lines: int
    dead_letters: int
    log_format: str
    dns: str
    verdicts: int = 0
    # formats that read most of a sample of the dead letters, best first
    formats_reading_dead_letters: tuple[str, ...] = ()
    dead_letter_reasons: Mapping[str, int] = field(default_factory=dict)
    # requests with no robots verdict: (reason, host, day) -> requests
    unjudged: Mapping[tuple[str, str | None, date], int] = field(default_factory=dict)
    # the robots table: host -> when its first version took effect
    table_first_day: Mapping[str, datetime] = field(default_factory=dict)
    # identity notes: (crawler, note, day) -> requests
    identity_notes: Mapping[tuple[str, str, date], int] = field(default_factory=dict)
    # range and key files, or parts of them, the run could not use: one line each
    range_problems: tuple[str, ...] = ()


def findings(facts: RunFacts) -> list[Finding]:
    """Every check's finding, in CHECKS order; an empty list is a run whose inputs fitted."""
    found = [
        _dead_letters(facts),
        _no_host(facts),
        _unknown_host(facts),
        _before_history(facts),
        _ranges(facts),
        _resolver(facts),
    ]
    return [finding for finding in found if finding is not None]


def _dead_letters(facts: RunFacts) -> Finding | None:
    if not facts.lines or facts.dead_letters / facts.lines < DEAD_LETTER_SHARE:
        return None
    reasons = ", ".join(f"{reason} {n:,}" for reason, n in Counter(facts.dead_letter_reasons).most_common(3))
    sampled = sum(facts.dead_letter_reasons.values())
    if reasons and sampled < facts.dead_letters:
        reasons = f"of {sampled:,} read back: {reasons}"  # a sample's counts, not the run's
    problem = (
        f"{facts.dead_letters:,} of {facts.lines:,} lines ({_percent(facts.dead_letters, facts.lines)}) could not be"
        f" read as --log-format {facts.log_format}" + (f" ({reasons})" if reasons else "")
    )
    others = [name for name in facts.formats_reading_dead_letters if name != facts.log_format]
    if others:
        fix = f"--log-format {others[0]}" + (f" (also reads them: {', '.join(others[1:])})" if others[1:] else "")
    else:
        fix = f"no known format reads them: {PASTE_YOUR_FORMAT} (JSON lines: --field-map); the lines are in dead_letters/"
    return Finding("dead-letters", problem, fix)


def _no_host(facts: RunFacts) -> Finding | None:
    requests = sum(n for (reason, _, _), n in facts.unjudged.items() if reason == "no-host")
    if not requests:
        return None
    hosts = sorted(facts.table_first_day)
    fix = f"--default-host {hosts[0]}" if len(hosts) == 1 else "--default-host HOST (the site the log is of)"
    return Finding(
        "no-host",
        f"{requests:,} crawler requests carry no host, so no robots.txt could judge them (reason no-host):"
        f" --log-format {facts.log_format} has no host field",
        fix,
        (f"hosts in the robots table: {', '.join(hosts[:_HOSTS_SHOWN])}",) if hosts else (),
    )


def _unknown_host(facts: RunFacts) -> Finding | None:
    per_host = Counter()
    for (reason, host, _), n in facts.unjudged.items():
        if reason == "unknown-host":
            per_host[host] += n
    if not per_host:
        return None
    table = sorted(facts.table_first_day)
    details = []
    for host, n in sorted(per_host.items(), key=lambda kv: (-kv[1], kv[0] or ""))[:_HOSTS_SHOWN]:
        closest = closest_hosts(host or "", table)
        beside = f"; the table's closest: {', '.join(closest)}" if closest else ""
        details.append(f"{host}: {n:,} requests{beside}")
    details.append(f"hosts in the robots table: {', '.join(table[:_HOSTS_SHOWN]) or 'none'}")
    top = max(per_host, key=lambda host: (per_host[host], host or ""))
    return Finding(
        "unknown-host",
        f"{sum(per_host.values()):,} crawler requests went to hosts the robots table has no robots.txt for"
        " (reason unknown-host); robots.txt applies per host, so www.example.com and example.com are two sites",
        f"add each host's own robots.txt to the table (crawl-audit history capture {top} --into DIR),"
        " or, for a log without host names, --default-host HOST",
        tuple(details),
    )


def _before_history(facts: RunFacts) -> Finding | None:
    days_per_host: dict[str | None, list[date]] = {}
    per_host: Counter = Counter()
    for (reason, host, day), n in facts.unjudged.items():
        if reason == "no-robots-version":
            days_per_host.setdefault(host, []).append(day)
            per_host[host] += n
    requests = sum(per_host.values())
    if not requests:
        return None
    details = []
    for host, days in sorted(days_per_host.items(), key=lambda kv: kv[0] or ""):
        first = facts.table_first_day.get(host)
        since = f"; its first version took effect {first:%Y-%m-%d %H:%M} UTC" if first else ""
        span = min(days).isoformat() if min(days) == max(days) else f"{min(days).isoformat()} to {max(days).isoformat()}"
        details.append(f"{host}: {per_host[host]:,} requests on {span}{since}")
    return Finding(
        "before-history",
        f"{requests:,} crawler requests are older than the first robots.txt version the table has for their host"
        " (reason no-robots-version): a table made from today's robots.txt says nothing about last month",
        "add the older versions: crawl-audit history import-wayback HOST --into DIR (or import-git),"
        " or give the version its real effective_from",
        tuple(details[:_HOSTS_SHOWN]),
    )


def _ranges(facts: RunFacts) -> Finding | None:
    per_crawler: Counter = Counter()
    days: set[date] = set()
    notes: set[str] = set()
    outside: set[str] = set()
    for (crawler, note, day), n in facts.identity_notes.items():
        kind, _, sources = note.partition(":")
        if kind in (NO_SNAPSHOT, OUTSIDE_WINDOW) or (note == DNS_OFF and facts.dns == "off"):
            per_crawler[crawler] += n
            days.add(day)
            notes.add(kind)
            outside.update(filter(None, sources.split(",")))
    if not per_crawler:
        return _range_files(facts)
    crawlers = ", ".join(f"{c} {n:,}" for c, n in sorted(per_crawler.items(), key=lambda kv: (-kv[1], kv[0]))[:_HOSTS_SHOWN])
    why = []
    if NO_SNAPSHOT in notes:
        why.append("no range snapshot of their operator's published ranges")
    if OUTSIDE_WINDOW in notes:
        why.append(
            f"no snapshot within --range-window days of the requests of {', '.join(sorted(outside))},"
            " so their absence proves nothing"
        )
    if DNS_OFF in notes:
        why.append("reverse DNS is off")
    fixes = ["crawl-audit update-ranges (a snapshot speaks for the requests within the window of its day; for past"
             " days, crawl-audit update-ranges import-git from a mirror of the operator's file)"]
    if facts.dns == "off":
        fixes.append("--dns live (reverse DNS decides what no range does)")
    skipped = _range_files(facts)
    return Finding(
        "ranges",
        f"{sum(per_crawler.values()):,} crawler requests could be neither verified nor proven spoofed"
        f" ({'; '.join(why)}), from {min(days).isoformat()} to {max(days).isoformat()}: {crawlers}"
        + (f"; {skipped.problem}" if skipped else ""),
        " or ".join(fixes),
        skipped.details if skipped else (),
    )


def _range_files(facts: RunFacts) -> Finding | None:
    """Range and key files skipped in part or whole: each changes what could be verified."""
    if not facts.range_problems:
        return None
    count = len(facts.range_problems)
    return Finding(
        "ranges",
        f"{count:,} problem{'s' if count > 1 else ''} in the range and key files, each skipped as the line says",
        "replace or remove the files named (crawl-audit update-ranges downloads fresh ones)",
        tuple(facts.range_problems[:_HOSTS_SHOWN]),
    )


def _resolver(facts: RunFacts) -> Finding | None:
    failed = sum(n for (_, note, _), n in facts.identity_notes.items() if note == DNS_FAILED)
    untrusted = sum(n for (_, note, _), n in facts.identity_notes.items() if note == DNS_UNTRUSTED)
    nxdomain = sum(n for (_, note, _), n in facts.identity_notes.items() if note == DNS_NXDOMAIN)
    lookups = sum(n for (_, note, _), n in facts.identity_notes.items() if note in _LOOKED_UP)
    if facts.dns == "off":
        return None
    if untrusted:
        return Finding(
            "resolver",
            f"the resolver answered NXDOMAIN for addresses the published ranges prove, so its NXDOMAIN proves"
            f" nothing: {untrusted:,} requests it would have made spoofed stay unverified",
            "--dns-server HOST:PORT (a resolver that answers PTR queries), or --dns off with fresh ranges (crawl-audit update-ranges)",
        )
    if lookups < RESOLVER_MIN_LOOKUPS:
        return None
    if failed / lookups >= RESOLVER_FAILURE_SHARE:
        return Finding(
            "resolver",
            f"{failed:,} of {lookups:,} reverse-DNS lookups failed (timeout, SERVFAIL or no server): the resolver,"
            " not the crawlers, looks broken; those requests stay unverified",
            "--dns-server HOST:PORT (a resolver that answers), or --dns off with fresh ranges (crawl-audit update-ranges)",
        )
    if nxdomain == lookups:
        return Finding(
            "resolver",
            f"every one of {lookups:,} reverse-DNS lookups answered NXDOMAIN: a resolver that knows no PTR record"
            " at all turns every real crawler spoofed",
            "--dns-server HOST:PORT (a resolver that answers PTR queries), or --dns off",
        )
    return None


_LOOKED_UP = (DNS_ANSWERED, DNS_FAILED, DNS_NXDOMAIN, DNS_UNTRUSTED)


def uncovered_crawlers(registry: Registry, ranges: RangeIndex, day: date, dns: str) -> tuple[str, ...]:
    """The registry's crawlers with a range source that has no snapshot within the window of
    `day`, so none of their claims can be proven spoofed, and that reverse DNS will not decide
    instead (it is off, or the operator names no PTR suffixes)."""
    return tuple(
        crawler.name
        for crawler in registry.crawlers
        if any(not ranges.spans_within(source, day) for source in crawler.range_sources)
        and (dns == "off" or not crawler.rdns_suffixes)
    )


def launch_findings(uncovered: Sequence[str], dns: str, default_host: str | None, table_hosts: Sequence[str]) -> list[Finding]:
    """What a run that never ends (streaming) can tell before its first line: the crawlers it can
    verify with no range snapshot for today, and a --default-host the robots table lacks."""
    found = []
    if uncovered:
        shown = ", ".join(uncovered[:_HOSTS_SHOWN]) + (f" and {len(uncovered) - _HOSTS_SHOWN} more" if len(uncovered) > _HOSTS_SHOWN else "")
        fixes = ["crawl-audit update-ranges (then restart)"] + (["--dns live"] if dns == "off" else [])
        found.append(Finding(
            "ranges",
            f"no range snapshot within the window of today for {len(uncovered)} crawlers, whose requests will not be"
            f" proven spoofed: {shown}",
            " or ".join(fixes),
        ))
    if default_host is not None and table_hosts and default_host not in table_hosts:
        closest = closest_hosts(default_host, table_hosts)
        found.append(Finding(
            "unknown-host",
            f"--default-host {default_host} has no robots.txt in the table, so no request without a host can be judged",
            f"--default-host {closest[0]}" if closest else "add its robots.txt to the table (crawl-audit history capture HOST --into DIR)",
            (f"hosts in the robots table: {', '.join(sorted(table_hosts)[:_HOSTS_SHOWN])}",),
        ))
    return found


def closest_hosts(host: str, table: Sequence[str], shown: int = 3) -> list[str]:
    """The table's hosts most like `host`, closest first: the same site with or without `www.`,
    then by spelling."""
    bare = host.removeprefix("www.")

    def distance(candidate: str) -> tuple:
        same_site = candidate.removeprefix("www.") == bare or candidate.endswith("." + bare) or bare.endswith("." + candidate)
        return (not same_site, -difflib.SequenceMatcher(None, host, candidate).ratio(), candidate)

    ranked = sorted(table, key=distance)
    return [candidate for candidate in ranked if distance(candidate)[1] <= -0.5 or not distance(candidate)[0]][:shown]


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"
