"""Output record types and their one schema.

Each table is declared once as a tuple of `Column`s; JSON Lines, Parquet and
BigQuery schemas are all derived from it (see `pipeline/tables/schema.py`, and
`json_schema` below for the JSON Lines records), so the formats cannot drift
apart. Records are plain dicts keyed by column name, with timestamps as
timezone-aware datetimes until a writer encodes them.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from matcher.robots import MAX_BYTES as MAX_ROBOTS_BYTES
from matcher.timerange import parse_timestamp

__all__ = [
    "json_text",
    "SCHEMA_VERSION",
    "Column",
    "VERDICTS",
    "INDEXING_FINDINGS",
    "BETWEEN_CAPTURES",
    "DEAD_LETTERS",
    "SUMMARY",
    "CRAWL_DELAY_VIOLATIONS",
    "CRAWL_DELAY_WINDOWS",
    "ROBOTS_VERSIONS",
    "ROBOTS_FETCHES",
    "WHATIF_FLIPS",
    "DNS_ANSWERS",
    "VERDICTS_TABLE",
    "DEAD_LETTERS_TABLE",
    "SUMMARY_TABLE",
    "VIOLATIONS_TABLE",
    "WINDOWS_TABLE",
    "INDEXING_FINDINGS_TABLE",
    "BETWEEN_CAPTURES_TABLE",
    "SIGNATURE_REUSE",
    "SIGNATURE_REUSE_TABLE",
    "ROBOTS_VERSIONS_TABLE",
    "ROBOTS_FETCHES_TABLE",
    "WHATIF_FLIPS_TABLE",
    "DNS_ANSWERS_TABLE",
    "CHANGES",
    "CHANGES_TABLE",
    "SERVED",
    "SERVED_TABLE",
    "REFERRALS",
    "REFERRALS_TABLE",
    "BACKOFF",
    "BACKOFF_TABLE",
    "COUNTS_TABLE",
    "REPORT_COUNTS_TABLE",
    "TABLES",
    "DECISION_COLUMNS",
    "json_schema",
    "robots_fetch_record",
    "robots_version_record",
    "rfc3339",
    "shaper",
    "shaped",
    "to_json_ready",
    "row_problem",
]


# The version of the tables' layout, written into every run's manifest: raised by one for each
# release whose tables changed (a column added, renamed or retyped, a table added), each change
# listed in CHANGELOG.md. 1 was 0.1.
SCHEMA_VERSION = 2


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # string | int | float | bool | timestamp | string_list | struct | json
    description: str
    nullable: bool = True
    fields: tuple["Column", ...] = ()  # for struct


ROBOTS_VERSION = (
    Column("effective_from", "timestamp", "when this robots.txt version took effect (UTC)", False),
    Column("status", "string", "HTTP status of the robots.txt fetch, or 'unreachable'", False),
    Column("sha256", "string", "SHA-256 of the body, hex; null without a body"),
)

ROBOTS_FETCH = (
    Column("ts", "timestamp", "the crawler's latest request for /robots.txt at or before the request (UTC)", False),
    Column("status", "int", "HTTP status that request got, as logged; null when none was logged"),
    Column("source", "string", "log file and line of that request", False),
    Column(
        "held", "string",
        "what the crawler held after it, by RFC 9309: ok (a version's rules) | unavailable (all allowed)"
        " | error (all disallowed; after the error limit, what it held before)", False,
    ),
    Column("served_at", "timestamp", "when what it held was served (a 304 keeps the earlier time); null for error"),
    Column("version", "struct", "the robots.txt version in effect when it was served (held ok)", fields=ROBOTS_VERSION),
)

VERDICTS = (
    Column("ts", "timestamp", "request time (UTC)", False),
    Column("host", "string", "site host the request was made to"),
    Column(
        "client_ip", "string",
        "client address the identity was checked for; with --truncate-addresses, the /24 or /48 network"
        " of unverifiable and undeclared clients",
        False,
    ),
    Column("method", "string", "HTTP method"),
    Column("path", "string", "path and query as requested"),
    Column(
        "target_host", "string",
        "host an absolute-form request target named when it is not host: the client's spelling, kept"
        " as evidence; it never picks the robots.txt",
    ),
    Column("status", "int", "HTTP response status"),
    Column(
        "bytes", "int",
        "response size as logged (`-`, a response without a body, counts as 0); null when the log has no size field",
    ),
    Column("retry_after", "string", "the Retry-After response header as logged; null when not logged"),
    Column("user_agent", "string", "User-Agent as logged"),
    Column("source", "string", "log file and line number", False),
    Column("crawler", "string", "crawler claimed by the User-Agent (registry name or product token)"),
    Column(
        "client_kind", "string",
        "crawler | automated (HTTP library, tool, monitor, scanner, headless browser) | agent (a browser's"
        " User-Agent with the Signature-Agent of a registry key directory: crawler names the agent)",
        False,
    ),
    Column(
        "purpose", "string_list",
        "what the crawler's fetches are for (docs/semantics.md § Purpose); [unknown] when not in the registry",
        False,
    ),
    Column("operator", "string", "operator of the claimed crawler, or of the range for undeclared"),
    Column("tokens", "string_list", "robots.txt tokens tried, most specific first", False),
    Column("identity", "string", "verified | spoofed | unverified | unverifiable | undeclared", False),
    Column("identity_method", "string", "how identity was established: web-bot-auth, ip-range, reverse-dns, robots-only, none"),
    Column("identity_evidence", "string", "what proved or disproved the claim"),
    Column("signature", "string", "the Signature header as logged, when the log carries one with Signature-Input"),
    Column("signature_input", "string", "the Signature-Input header as logged, beside signature"),
    Column("honours_robots", "bool", "the operator documents that this crawler obeys robots.txt"),
    Column("honours_crawl_delay", "bool", "the operator documents that this crawler obeys Crawl-delay"),
    Column("robots_version", "struct", "robots.txt version in effect at ts", fields=ROBOTS_VERSION),
    Column("robots_group", "string_list", "user-agent lines of the robots.txt group applied"),
    Column("rule_kind", "string", "allow | disallow, of the deciding rule"),
    Column("rule_pattern", "string", "deciding rule as written"),
    Column("rule_line", "int", "line of the deciding rule"),
    Column("rule_normalized", "string", "deciding rule after normalization"),
    Column(
        "decision", "string",
        "allowed | disallowed | disallowed-within-grace | disallowed-before-refetch | disallowed-between-captures"
        " | unknown",
        False,
    ),
    Column("reason", "string", "short code saying why", False),
    Column(
        "grace_from", "timestamp",
        "for disallowed-within-grace (no robots.txt fetch of the crawler seen): the earlier version that allowed it",
    ),
    Column(
        "later_version", "struct",
        "for disallowed-between-captures: the next version, which allowed it; the change to it happened"
        " after its observed_before, maybe before ts",
        fields=ROBOTS_VERSION + (
            Column("observed_before", "timestamp", "last time the previous content was seen (UTC)", False),
        ),
    ),
    Column("crawl_delay", "float", "Crawl-delay of the group in effect, seconds"),
    Column("crawl_delay_line", "int", "line of that Crawl-delay"),
    Column(
        "indexing", "json",
        "page directives in effect for this crawler, by lower-case name "
        "(docs/semantics.md § Page directives); null when no source covers the request, "
        "{} when nothing is restricted",
    ),
    Column("indexing_unseen", "bool", "the crawl was disallowed, so the crawler cannot see these directives"),
    Column(
        "robots_fetch", "struct",
        "what the crawler had: its latest robots.txt fetch at or before ts (same fetch family, identity and host);"
        " null when none was seen",
        fields=ROBOTS_FETCH,
    ),
    Column(
        "grace_assumed", "bool",
        "no robots.txt fetch of the crawler was seen, so the fixed --cache-grace was assumed (disallowed-within-grace)",
    ),
    Column(
        "unread_change", "timestamp",
        "a request its fetched copy allowed but the version in effect disallowed: when the change it had not"
        " fetched took effect",
    ),
    Column("unread_for_s", "float", "how long that change had been in effect at ts, seconds"),
    Column(
        "preferences", "json",
        "usage preferences in force for this request (docs/semantics.md § Usage preferences): content_signal,"
        " content_usage with its line and path, license; null when the robots.txt in effect states none",
    ),
    Column(
        "preference_conflicts", "string_list",
        "'purpose: key=no' for each purpose of the crawler a preference in force refuses; never an access violation",
        False,
    ),
    Column("content_usage", "string", "the Content-Usage response header as logged (aipref); null when not logged"),
)

INDEXING_FINDINGS = (
    Column("finding", "string", "noindex-unseen | crawled-after-unavailable", False),
    Column("host", "string", "site host"),
    Column("path", "string", "path and query as requested", False),
    Column("crawler", "string", "claimed crawler, or the operator for undeclared traffic"),
    Column("requests", "int", "requests with this finding", False),
)

BETWEEN_CAPTURES = (
    Column("host", "string", "site host"),
    Column("crawler", "string", "claimed crawler, or the operator for undeclared traffic"),
    Column("effective_from", "timestamp", "the version in effect by effective_from, which disallowed", False),
    Column("later_effective_from", "timestamp", "the next version, which allowed", False),
    Column("observed_before", "timestamp", "last time the earlier content was seen: the change came after", False),
    Column("requests", "int", "requests judged disallowed-between-captures", False),
)

SIGNATURE_REUSE = (
    Column(
        "kind", "string",
        "signature: one Signature value sent on more than one request | nonce: one key's nonce sent again"
        " while a signature that carried it still held",
        False,
    ),
    Column(
        "signature", "string",
        "the Signature header value sent on more than one request; for kind nonce, `keyid nonce`",
        False,
    ),
    Column("crawler", "string", "claimed crawler, or the operator for undeclared traffic"),
    Column("requests", "int", "requests that carried it", False),
    Column("first_ts", "timestamp", "the first of them", False),
    Column("last_ts", "timestamp", "the last of them", False),
    Column("verified", "int", "of them, requests the signature verified (reused within its validity window)", False),
)

DEAD_LETTERS = (
    Column("source", "string", "file and line number, or table and row", False),
    Column("reason", "string", "short machine code", False),
    Column("message", "string", "what was wrong, for a person"),
    Column("raw", "string", "the input as read", False),
)

# Each decision a verdict can take and the summary column that counts it, in the order every table
# that splits requests by decision shows them: a row's columns add up to its requests.
DECISION_COLUMNS = (
    ("allowed", "allowed"),
    ("disallowed", "disallowed"),
    ("disallowed-within-grace", "within_grace"),
    ("disallowed-before-refetch", "before_refetch"),
    ("disallowed-between-captures", "between_captures"),
    ("unknown", "unknown"),
)

SUMMARY = (
    Column("crawler", "string", "claimed crawler, or the operator for undeclared traffic"),
    Column("identity", "string", "identity status", False),
    Column(
        "client_kind", "string", "crawler | automated | agent: automated clients and signed agents are rows of their own",
        False,
    ),
    Column("purpose", "string_list", "the crawler's purposes, as in verdicts", False),
    Column("requests", "int", "requests", False),
    Column("allowed", "int", "allowed", False),
    Column(
        "disallowed", "int",
        "plainly disallowed (decision disallowed); the other disallowed decisions have columns of their own", False,
    ),
    Column("within_grace", "int", "disallowed within the cache grace", False),
    Column("between_captures", "int", "disallowed by one of two candidate versions (change time unknown)", False),
    Column("unknown", "int", "no robots.txt version known", False),
    Column("before_refetch", "int", "disallowed only by a change the crawler had not fetched yet, within the grace", False),
    Column(
        "preference_conflicts", "int",
        "requests (of any decision) whose crawler's purpose a usage preference in force refused", False,
    ),
    Column("bytes", "int", "the requests' response sizes summed; null when none of them logged a size"),
)

SERVED = (
    Column("host", "string", "site host"),
    Column("crawler", "string", "claimed crawler, or the operator for undeclared traffic (as in summary)"),
    Column("identity", "string", "identity status", False),
    Column("decision", "string", "the verdicts' decision", False),
    Column(
        "status_class", "string",
        "1xx | 2xx | 3xx | 4xx | 5xx by the first digit of a status of 100-599, other for any other logged value,"
        " none when the log wrote no status",
        False,
    ),
    Column("requests", "int", "requests; per crawler, identity and decision they add up to summary's", False),
    Column("bytes", "int", "their response sizes summed; null when none of them logged a size"),
)

_CRAWL_DELAY_KEY = (
    Column("host", "string", "site host"),
    Column("crawler", "string", "claimed crawler (registry name or product token); null for undeclared"),
    Column("operator", "string", "operator of the claimed crawler, or of the range for undeclared"),
    Column("identity", "string", "identity status; spoofed traffic is its own sequence", False),
    Column(
        "honours_crawl_delay", "bool",
        "the operator documents that this crawler obeys Crawl-delay (null: not in the registry)",
    ),
)

CRAWL_DELAY_VIOLATIONS = _CRAWL_DELAY_KEY + (
    Column("prev_ts", "timestamp", "the previous request of the same crawler, host and identity", False),
    Column("ts", "timestamp", "the request that came too soon", False),
    Column("gap_s", "float", "seconds between the two", False),
    Column("crawl_delay_s", "float", "Crawl-delay in effect for the later request, seconds", False),
    Column("crawl_delay_line", "int", "line of that Crawl-delay in the robots.txt version"),
    Column("robots_version", "struct", "robots.txt version in effect for the later request", fields=ROBOTS_VERSION),
    Column("source", "string", "log file and line of the later request", False),
    Column("prev_source", "string", "log file and line of the previous request", False),
)

CRAWL_DELAY_WINDOWS = _CRAWL_DELAY_KEY + (
    Column("window_start", "timestamp", "start of the window (UTC, aligned to the epoch)", False),
    Column("window_end", "timestamp", "end of the window, exclusive", False),
    Column("requests", "int", "requests in the window", False),
    Column("violations", "int", "requests in the window that came sooner than the delay allowed", False),
    Column("min_gap_s", "float", "smallest gap to the previous request, which may lie in an earlier window"),
    Column("crawl_delay_s", "float", "Crawl-delay in effect for the window's last request, seconds"),
    Column("crawl_delay_line", "int", "line of that Crawl-delay"),
)

ROBOTS_VERSIONS = (
    Column("host", "string", "site host", False),
    Column("effective_from", "timestamp", "when this robots.txt version took effect (UTC)", False),
    Column("status", "string", "HTTP status of the robots.txt fetch, or 'unreachable'", False),
    Column("kind", "string", "what the outcome means: ok (rules apply) | unavailable (all allowed) | error (all disallowed)", False),
    Column("sha256", "string", "SHA-256 of the body, hex; null without a body"),
    Column("body", "string", "the parsed part of the body (first 500 KiB) as UTF-8 text, undecodable bytes replaced; null without one"),
)

ROBOTS_FETCHES = (
    Column("host", "string", "site host the robots.txt was requested from"),
    Column("family", "string", "robots.txt fetch family: the registry's, or the crawler itself", False),
    Column("identity", "string", "identity status of the request; a spoofed crawler's fetches are its own", False),
    Column("crawler", "string", "crawler claimed by the User-Agent of this request", False),
    Column("ts", "timestamp", "request time (UTC)", False),
    Column("status", "int", "HTTP status as logged; null when none was logged"),
    Column("source", "string", "log file and line, or the earlier run's table it was carried over from", False),
    Column("held", "string", "what the crawler held after it: ok | unavailable | error (RFC 9309)", False),
    Column("served_at", "timestamp", "when what it held was served (a 304 keeps the earlier time); null for error"),
    Column("version", "struct", "the robots.txt version in effect when it was served (held ok)", fields=ROBOTS_VERSION),
    Column("carried", "bool", "carried over from --prior-run: it still decides what the crawler held", False),
)

WHATIF_FLIPS = (
    Column("host", "string", "site host the proposal was tried on", False),
    Column("crawler", "string", "claimed crawler, or null for undeclared traffic"),
    Column("identity", "string", "identity status", False),
    Column("change", "string", "allowed-to-disallowed | disallowed-to-allowed", False),
    Column("path", "string", "path and query as requested", False),
    Column("rule_kind", "string", "allow | disallow, of the proposal's deciding rule; null when none matched"),
    Column("rule_pattern", "string", "the proposal's deciding rule as written"),
    Column("rule_line", "int", "line of that rule in the proposal"),
    Column("reason", "string", "why the proposal decided so: rule, no-match, no-group, robots-exempt", False),
    Column("requests", "int", "requests of the run that would change so", False),
)

DNS_ANSWERS = (
    Column("ip", "string", "client address asked about, canonical", False),
    Column("ptr", "string_list", "PTR names, lower-case, without the final dot", False),
    Column("error", "string", "error code of the PTR lookup (nxdomain, timeout, servfail, ...); null when answered"),
    Column("forward", "json", "address lookup of each PTR name under a crawler suffix: name -> addresses"),
    Column("forward_errors", "json", "name -> error code, for address lookups that failed"),
    Column("resolved_at", "string", "when the worker asked (UTC, RFC 3339)", False),
)

CHANGES = (
    Column("host", "string", "site host", False),
    Column("change_at", "timestamp", "when the new robots.txt version took effect (its effective_from)", False),
    Column(
        "direction", "string",
        "restricts: the counts are of paths the change newly disallowed for the crawler | opens: of paths it newly allowed",
        False,
    ),
    Column("crawler", "string", "crawler claimed by the User-Agent", False),
    Column("identity", "string", "identity status; a spoofed crawler's requests are rows of their own", False),
    Column("before_from", "timestamp", "start of the before-period: as long as the after-period, from the host's first logged request on", False),
    Column("after_until", "timestamp", "end of the after-period: the host's next change (exclusive) or its last logged request", False),
    Column("requests_before", "int", "requests to the affected paths in the before-period", False),
    Column("requests_after", "int", "requests to the affected paths in the after-period", False),
    Column("within_grace", "int", "of the after-period's, disallowed-within-grace", False),
    Column("before_refetch", "int", "of the after-period's, disallowed-before-refetch", False),
    Column("violations", "int", "of the after-period's, plainly disallowed", False),
    Column("between_captures", "int", "of the after-period's, disallowed-between-captures", False),
    Column(
        "first_robots_fetch_after", "timestamp",
        "the crawler's first robots.txt fetch at or after the change (same fetch family, identity and host as"
        " robots_fetches); null when none was seen",
    ),
    Column(
        "last_newly_disallowed_request", "timestamp",
        "the after-period's last request to a newly disallowed path; null when none (and for opens)",
    ),
    Column(
        "final", "bool",
        "true: the periods are complete (a batch run, or a stream whose input ended); false: a stream's early pane,"
        " the counts so far, replaced by the key's later rows",
        False,
    ),
)

REFERRALS = (
    Column("host", "string", "site host the visit was made to"),
    Column("operator", "string", "the operator whose service the Referer or utm_source names (registry referrers)", False),
    Column("day", "string", "UTC day of the visits, YYYY-MM-DD", False),
    Column("via", "string", "referer | utm_source: what named it (a visit naming it both ways counts once, as referer)", False),
    Column(
        "visits", "int",
        "requests that got no verdict (neither a crawler, an automated client nor undeclared crawler traffic)"
        " referred so",
        False,
    ),
)

BACKOFF = (
    Column("host", "string", "site host"),
    Column("crawler", "string", "claimed crawler (registry name or product token); null for undeclared"),
    Column("operator", "string", "operator of the claimed crawler, or of the range for undeclared"),
    Column("identity", "string", "identity status; spoofed traffic is its own sequence", False),
    Column("at", "timestamp", "the request the server answered 429 or 503", False),
    Column("status", "int", "429 | 503", False),
    Column("retry_after_s", "float", "seconds the logged Retry-After asked to wait (seconds or HTTP-date); null when absent or unreadable"),
    Column("next_request_after_s", "float", "seconds to the crawler's next request to the host; null when none"),
    Column(
        "backed_off", "bool",
        "with Retry-After: the next request came no sooner; without: the gap is at least max(2 x the median of its"
        " gaps on the host in the hour before, 10 s); null when no next request or no earlier gap",
    ),
    Column("source", "string", "log file and line of the answered request", False),
)

# Table names: each is a folder of a run, a BigQuery table and a key of the audit graph's outputs.
VERDICTS_TABLE = "verdicts"
DEAD_LETTERS_TABLE = "dead_letters"
SUMMARY_TABLE = "summary"
VIOLATIONS_TABLE = "crawl_delay_violations"
WINDOWS_TABLE = "crawl_delay_windows"
INDEXING_FINDINGS_TABLE = "indexing_findings"
BETWEEN_CAPTURES_TABLE = "between_captures"
SIGNATURE_REUSE_TABLE = "signature_reuse"
ROBOTS_VERSIONS_TABLE = "robots_versions"
ROBOTS_FETCHES_TABLE = "robots_fetches"
WHATIF_FLIPS_TABLE = "whatif_flips"
# Written by a streaming run with --dns live --dns-record; a DNS snapshot for a later batch run.
DNS_ANSWERS_TABLE = "dns_answers"
# One row per host, robots.txt change, crawler and identity that requested a path the change turned.
CHANGES_TABLE = "changes"
# One row per host, crawler, identity, decision and status class: what the server answered.
SERVED_TABLE = "served"
# One row per host, operator, day and way: the visits an operator's service sent.
REFERRALS_TABLE = "referrals"
# One row per 429 or 503 answered to a crawler: did it back off?
BACKOFF_TABLE = "backoff"
# Not a record table: one JSON object, the lines read and where each went.
COUNTS_TABLE = "counts"
# Not a record table either: one JSON object, what the HTML report counts of the verdicts
# (`matcher.report_counts`).
REPORT_COUNTS_TABLE = "report_counts"

TABLES = {
    VERDICTS_TABLE: VERDICTS,
    DEAD_LETTERS_TABLE: DEAD_LETTERS,
    SUMMARY_TABLE: SUMMARY,
    VIOLATIONS_TABLE: CRAWL_DELAY_VIOLATIONS,
    WINDOWS_TABLE: CRAWL_DELAY_WINDOWS,
    INDEXING_FINDINGS_TABLE: INDEXING_FINDINGS,
    BETWEEN_CAPTURES_TABLE: BETWEEN_CAPTURES,
    SIGNATURE_REUSE_TABLE: SIGNATURE_REUSE,
    ROBOTS_VERSIONS_TABLE: ROBOTS_VERSIONS,
    ROBOTS_FETCHES_TABLE: ROBOTS_FETCHES,
    WHATIF_FLIPS_TABLE: WHATIF_FLIPS,
    DNS_ANSWERS_TABLE: DNS_ANSWERS,
    CHANGES_TABLE: CHANGES,
    SERVED_TABLE: SERVED,
    REFERRALS_TABLE: REFERRALS,
    BACKOFF_TABLE: BACKOFF,
}


def robots_version_record(version) -> dict:
    """The `ROBOTS_VERSIONS` row of a `matcher.history.RobotsVersion`."""
    return {
        "host": version.host,
        "effective_from": version.effective_from,
        "status": "unreachable" if version.status is None else str(version.status),
        "kind": version.kind,
        "sha256": version.sha256,
        # What is parsed is all a diff needs to show; a huge body stays out of the report.
        "body": None if version.body is None else version.body[:MAX_ROBOTS_BYTES].decode("utf-8", "replace"),
    }


def robots_fetch_record(key, held, version) -> dict:
    """The `ROBOTS_FETCHES` row of a `matcher.robots_fetches.Held` of a (host, family, identity)
    key; `version` is the history's version it was served (None unless held ok)."""
    host, family, identity = key
    fetch = held.fetch
    return {
        "host": host,
        "family": family,
        "identity": identity,
        "crawler": fetch.crawler,
        "ts": fetch.ts,
        "status": fetch.status,
        "source": fetch.source,
        "held": held.kind,
        "served_at": held.served_at,
        "version": None
        if version is None
        else {
            "effective_from": version.effective_from,
            "status": "unreachable" if version.status is None else str(version.status),
            "sha256": version.sha256,
        },
        "carried": fetch.carried,
    }


@functools.lru_cache(maxsize=1 << 12)  # verdicts repeat their robots versions' times, busy logs their seconds
def rfc3339(moment: datetime) -> str:
    """UTC timestamp as RFC 3339 with a Z, microseconds only when present."""
    if moment.tzinfo is not timezone.utc:
        moment = moment.astimezone(timezone.utc)
    # isoformat pads the year to four digits and writes microseconds only when there are some.
    return moment.replace(tzinfo=None).isoformat() + "Z"


def shaped(record: dict, columns: tuple[Column, ...], *, json_ready: bool = False) -> dict:
    """The record in schema order with lists for list columns; with `json_ready`,
    timestamps become RFC 3339 strings."""
    return shaper(columns, json_ready=json_ready)(record)


def to_json_ready(record: dict, columns: tuple[Column, ...]) -> dict:
    return shaped(record, columns, json_ready=True)


# Shapers made so far, by the identity of their columns (kept alive here, so an id is never reused):
# the column tuples are the module's constants, and hashing one would cost more than shaping a row.
_SHAPERS: dict[tuple[int, bool], tuple[tuple[Column, ...], Callable[[dict], dict]]] = {}


def shaper(columns: tuple[Column, ...], *, json_ready: bool = False) -> Callable[[dict], dict]:
    """`shaped` for one table, each column's conversion chosen once and the result kept."""
    known = _SHAPERS.get((id(columns), json_ready))
    if known is not None and known[0] is columns:
        return known[1]
    shape = _new_shaper(columns, json_ready)
    _SHAPERS[id(columns), json_ready] = (columns, shape)
    return shape


def _new_shaper(columns: tuple[Column, ...], json_ready: bool) -> Callable[[dict], dict]:
    names = tuple(column.name for column in columns)
    conversions = tuple(
        (column.name, convert) for column in columns if (convert := _conversion(column, json_ready)) is not None
    )

    def shape(record: dict) -> dict:
        get = record.get
        shaped_record = {name: get(name) for name in names}
        for name, convert in conversions:
            value = shaped_record[name]
            if value is not None:
                shaped_record[name] = convert(value)
        return shaped_record

    return shape


def json_text(value: object) -> str:
    """A `json` column's value as columnar formats carry an open-ended object: its JSON text."""
    return json.dumps(value, sort_keys=True)


def _conversion(column: Column, json_ready: bool) -> Callable | None:
    """What a column's non-null value goes through; None: it is written as it is."""
    if column.type == "timestamp" and json_ready:
        return rfc3339
    if column.type == "json" and not json_ready:
        return json_text
    if column.type == "struct":
        return shaper(column.fields, json_ready=json_ready)
    if column.type == "string_list":
        return list
    return None


def row_problem(row: object, columns: tuple[Column, ...]) -> str | None:
    """What makes `row` not a record of the table of these columns as it is read back (JSON Lines:
    timestamps as RFC 3339 text, `json` columns as objects; Parquet: datetimes, JSON text), or
    None. A column missing from the row counts as null, as in a file written before it existed."""
    if not isinstance(row, dict):
        return f"a row must be an object, got {_json_kind(row)}"
    for column in columns:
        problem = _value_problem(row.get(column.name), column)
        if problem is not None:
            return f"{column.name} {problem}"
    return None


def _value_problem(value: object, column: Column) -> str | None:
    if value is None:
        return None if column.nullable else "is missing or null"
    kind = column.type
    if kind == "struct":
        if not isinstance(value, dict):
            return f"must be an object, got {_json_kind(value)}"
        inner = row_problem(value, column.fields)
        return None if inner is None else f"field {inner}"
    if kind == "timestamp":
        if isinstance(value, datetime):
            return None
        if isinstance(value, str):
            try:
                parse_timestamp(value)
                return None
            except ValueError:
                return f"must be an RFC 3339 time, got {value[:40]!r}"
    elif kind == "string_list":
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return None
        return "must be a list of strings"
    elif isinstance(value, _PYTHON_TYPES[kind]) and not (isinstance(value, bool) and kind in ("int", "float")):
        return None
    return f"must be {_TYPE_WORDS[kind]}, got {_json_kind(value)}"


# What a reader gets back for each column type; a `json` column is an object in JSON Lines and
# its JSON text in Parquet.
_PYTHON_TYPES = {"string": str, "int": int, "float": (int, float), "bool": bool, "json": (dict, str)}
_TYPE_WORDS = {
    "string": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
    "json": "an object", "timestamp": "an RFC 3339 time",
}


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number"}.get(
        type(value), type(value).__name__
    )


_JSON_TYPES = {"string": "string", "int": "integer", "float": "number", "bool": "boolean"}


def json_schema(columns: tuple[Column, ...], title: str | None = None) -> dict:
    """JSON Schema (2020-12) of one JSON Lines record of this table, as `to_json_ready` writes it."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **({"title": title} if title else {}),
        **_json_object(columns),
    }


def _json_object(columns: tuple[Column, ...]) -> dict:
    return {
        "type": "object",
        "properties": {column.name: _json_property(column) for column in columns},
        "required": [column.name for column in columns],
        "additionalProperties": False,
    }


def _json_property(column: Column) -> dict:
    if column.type == "struct":
        kind = _json_object(column.fields)
    elif column.type == "string_list":
        kind = {"type": "array", "items": {"type": "string"}}
    elif column.type == "timestamp":
        kind = {"type": "string", "format": "date-time"}
    elif column.type == "json":
        kind = {"type": "object"}
    else:
        kind = {"type": _JSON_TYPES[column.type]}
    if column.nullable:
        kind = {"anyOf": [kind, {"type": "null"}]}
    return {"description": column.description, **kind}
