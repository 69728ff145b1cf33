"""What the HTML report counts of a run's verdicts: requests per host, per crawler and hour (all
of them, and the disallowed ones),
disallowed requests per crawler and what decided them, spoofed requests per claimed crawler by
address and by User-Agent; the disallowed requests of automated clients apart from the crawlers';
fetches of llms.txt per crawler and identity; fetches whose crawler's purpose a usage preference
in force refuses.

Counts of parts of a run add up (`ReportCounts.merge`), so a run counts each batch of verdicts
as it goes by and adds the batches' counts once; the report reads the sum back from
`report_counts.json` (`to_json`, `from_json`) instead of every verdict.

Disallowed requests are the exception: one crawler can ask for millions of distinct paths, and
the page shows `TOP_PATHS` of them. So a run counts each (crawler, identity, path and what
decided it) through a grouping (`disallowed_keys` per batch, summed per key), keeps per crawler
and identity only the exact totals and the `TOP_PATHS` most requested (`TopDisallowed`), and only
those are written. The rows of one identity are never among another's, so the top rows of the
crawler's own requests (every identity but spoofed) are among the union of its identities' tops.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from itertools import islice

from matcher.health import identity_note
from matcher.records import rfc3339
from matcher.served import answer
from matcher.timerange import LATEST, parse_timestamp, shifted

__all__ = [
    "READS",
    "NO_LABEL",
    "DISALLOWED_FIELDS",
    "TOP_PATHS",
    "CrawlerDisallowed",
    "ReportCounts",
    "TopDisallowed",
    "label",
    "hour",
    "is_disallowed",
    "disallowed_fields",
    "disallowed_keys",
    "top_disallowed",
    "LLMS_TXT_PATHS",
]

NO_LABEL = "(none)"
# What tells one disallowed path of a crawler from another, in order.
# The verdict columns `ReportCounts.add` and `disallowed_keys` read.
READS = (
    "ts", "host", "path", "crawler", "operator", "identity", "identity_method", "identity_evidence", "client_kind",
    "client_ip", "user_agent", "status", "decision", "reason", "rule_kind", "rule_pattern", "rule_line",
    "robots_version", "preference_conflicts",
)
DISALLOWED_FIELDS = (
    "host", "path", "decision", "reason", "rule_kind", "rule_pattern", "rule_line", "version_from", "version_status",
)
# The disallowed paths the report shows per crawler, most requested first.
TOP_PATHS = 10
_HOUR = timedelta(hours=1)
# Verdicts `ReportCounts.of` holds at once, read from a table one at a time.
_PART = 2000
# Where the timestamps are among a row of `to_json`'s sections (after the label).
_TIMESTAMP_AT = {
    "timeline": 1,
    "disallowed_timeline": 1,
    "automated_disallowed": 2 + DISALLOWED_FIELDS.index("version_from"),
    "conflicts": 5,
}
# Where the days are among a row of the run-health sections.
_DAY_AT = {"unjudged": 2, "identity_notes": 2}
_VERSION_FROM = DISALLOWED_FIELDS.index("version_from")
# Sections keyed by one value rather than a tuple.
_SINGLE_KEYS = frozenset({"hosts", "verified_by_operator"})
# What sites publish for language models to read (llmstxt.org): counted per crawler and identity.
LLMS_TXT_PATHS = ("/llms.txt", "/llms-full.txt")
AUTOMATED = "automated"
AGENT = "agent"
# Client kinds the crawler sections leave out: each has its own section.
_NOT_CRAWLERS = frozenset({AUTOMATED, AGENT})
_ADDED_LATER = frozenset({
    "automated_disallowed", "llms_txt", "conflicts", "disallowed_timeline", "disallowed_answers", "verified_by_operator",
    *_DAY_AT,
})


def label(verdict: Mapping) -> str:
    """The crawler a request is counted under: its claim, else the operator of its address range
    (undeclared traffic), else "(none)"."""
    if verdict["crawler"] is not None:
        return verdict["crawler"]
    if verdict["operator"] is not None:
        return verdict["operator"]
    return NO_LABEL


def _is_llms_txt(path: str | None) -> bool:
    return path is not None and path.partition("?")[0] in LLMS_TXT_PATHS


def hour(ts: datetime) -> datetime:
    """The start of the UTC hour `ts` falls in."""
    return ts.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)


def is_disallowed(verdict: Mapping) -> bool:
    """Disallowed, within grace or between captures alike."""
    return verdict["decision"].startswith("disallowed")


def disallowed_fields(verdict: Mapping) -> tuple:
    """The values of DISALLOWED_FIELDS of a verdict."""
    version = verdict["robots_version"] or {}
    return (
        verdict["host"], verdict["path"], verdict["decision"], verdict["reason"], verdict["rule_kind"],
        verdict["rule_pattern"], verdict["rule_line"], version.get("effective_from"), version.get("status"),
    )


def disallowed_keys(verdicts: Iterable[Mapping]) -> Counter:
    """Disallowed requests of these verdicts by (label, identity, *DISALLOWED_FIELDS), the version's time as
    RFC 3339 text: keys of plain values, which any runner's grouping can encode and compare."""
    counts: Counter = Counter()
    for verdict in verdicts:
        if is_disallowed(verdict) and verdict.get("client_kind") not in _NOT_CRAWLERS:
            fields = list(disallowed_fields(verdict))
            if fields[_VERSION_FROM] is not None:
                fields[_VERSION_FROM] = rfc3339(fields[_VERSION_FROM])
            counts[(label(verdict), verdict["identity"], *fields)] += 1
    return counts


@dataclass(frozen=True)
class CrawlerDisallowed:
    """One crawler's disallowed requests of one identity as the report shows them: the exact number of requests
    and of distinct (path, what decided) rows, and the `TOP_PATHS` most requested rows, each
    (DISALLOWED_FIELDS values, requests), in `TopDisallowed`'s order."""

    requests: int
    distinct: int
    top: tuple[tuple[tuple, int], ...]


def _rank(row: tuple[tuple, int]) -> tuple:
    """Most requested first; ties by path, then by the other fields (nulls first)."""
    fields, requests = row
    return (-requests, fields[1], _row_order(list(fields)))


class TopDisallowed:
    """The totals and top rows of one crawler's disallowed requests of one identity, from each distinct row's
    exact count, in any order and in parts that merge; it holds `TOP_PATHS` rows at most."""

    def __init__(self) -> None:
        self.requests = 0
        self.distinct = 0
        self.top: list[tuple[tuple, int]] = []

    def add(self, fields: tuple, requests: int) -> TopDisallowed:
        """One distinct row, with all of its requests; returns self."""
        self.requests += requests
        self.distinct += 1
        self._keep([(tuple(fields), requests)])
        return self

    def merge(self, other: TopDisallowed) -> TopDisallowed:
        """Another part's rows, none of them among this one's; returns self."""
        self.requests += other.requests
        self.distinct += other.distinct
        self._keep(other.top)
        return self

    def _keep(self, rows: Sequence[tuple[tuple, int]]) -> None:
        if len(rows) == 1 and len(self.top) == TOP_PATHS and _rank(rows[0]) >= _rank(self.top[-1]):
            return  # the common case of a long tail: not among the top, nothing to sort
        self.top = sorted((*self.top, *rows), key=_rank)[:TOP_PATHS]

    def result(self) -> CrawlerDisallowed:
        return CrawlerDisallowed(self.requests, self.distinct, tuple(self.top))


def top_disallowed(counts: Mapping[tuple, int]) -> dict[tuple[str, str], CrawlerDisallowed]:
    """Per (crawler, identity), what the report shows of `disallowed_keys` counts summed over a
    whole run."""
    by_crawler: dict[tuple[str, str], TopDisallowed] = {}
    for (name, identity, *fields), requests in counts.items():
        by_crawler.setdefault((name, identity), TopDisallowed()).add(tuple(fields), requests)
    return {key: top.result() for key, top in by_crawler.items()}


@dataclass
class ReportCounts:
    """Requests counted by what the report draws; every key starts with the crawler's `label`
    but for `hosts` and `unjudged`. `disallowed` is filled once for the whole run (`top_disallowed`); the other
    sections add up part by part."""

    hosts: Counter = field(default_factory=Counter)  # host
    timeline: Counter = field(default_factory=Counter)  # (label, hour)
    # the crawler requests of any disallowed decision, by (label, hour): what a change did over time
    disallowed_timeline: Counter = field(default_factory=Counter)
    spoofed_addresses: Counter = field(default_factory=Counter)  # (label, client_ip)
    spoofed_user_agents: Counter = field(default_factory=Counter)  # (label, user_agent)
    # Automated clients are counted apart, never among the crawlers above.
    automated_disallowed: Counter = field(default_factory=Counter)  # (label, identity, *DISALLOWED_FIELDS)
    llms_txt: Counter = field(default_factory=Counter)  # (label, identity, path)
    # Usage preferences the crawler's purpose conflicts with: kept apart from access violations.
    conflicts: Counter = field(default_factory=Counter)  # (label, identity, conflict, host, path, version_from)
    # what run health reads (matcher/health.py): requests no robots.txt judged, by reason, host
    # and UTC day; and what stood in the way of an identity, by crawler, note and day
    unjudged: Counter = field(default_factory=Counter)  # (reason, host, day)
    identity_notes: Counter = field(default_factory=Counter)  # (label, note, day)
    # what the server answered the crawlers' disallowed requests (`matcher.served.answer`)
    disallowed_answers: Counter = field(default_factory=Counter)  # (label, identity, answer)
    # the verified crawler requests of each operator, beside the visits its services referred
    verified_by_operator: Counter = field(default_factory=Counter)  # operator
    # (label, identity) -> its totals and top rows
    disallowed: dict[tuple[str, str], CrawlerDisallowed] = field(default_factory=dict)

    @classmethod
    def of(cls, verdicts: Iterable[Mapping]) -> ReportCounts:
        """The counts of a whole run's verdicts, in memory: every distinct disallowed row is held
        until the end (a run counts through a grouping instead)."""
        counts, disallowed = cls(), Counter()
        iterator = iter(verdicts)
        while part := list(islice(iterator, _PART)):
            counts.add(part)
            disallowed.update(disallowed_keys(part))
        counts.disallowed = top_disallowed(disallowed)
        return counts

    def add(self, verdicts: Iterable[Mapping]) -> ReportCounts:
        """Count these verdicts into every section but `disallowed`; returns self."""
        # The hour of the verdict before, kept as [start, end): log lines come mostly in time
        # order, and two comparisons cost a fraction of flooring each timestamp.
        start = end = LATEST
        for verdict in verdicts:
            name = label(verdict)
            ts = verdict["ts"]
            if not start <= ts < end:
                start = hour(ts)
                end = shifted(start, _HOUR)
                day = start.date()
            if _is_llms_txt(verdict["path"]):
                self.llms_txt[name, verdict["identity"], verdict["path"].partition("?")[0]] += 1
            for conflict in verdict.get("preference_conflicts") or ():
                version = verdict["robots_version"] or {}
                self.conflicts[
                    name, verdict["identity"], conflict, verdict["host"], verdict["path"], version.get("effective_from")
                ] += 1
            if verdict.get("client_kind") == AUTOMATED:
                if is_disallowed(verdict):
                    self.automated_disallowed[(name, verdict["identity"], *disallowed_fields(verdict))] += 1
                continue
            if verdict.get("client_kind") == AGENT:
                continue
            self.hosts[verdict["host"]] += 1
            self.timeline[name, start] += 1
            if verdict["identity"] == "verified" and verdict["operator"] is not None:
                self.verified_by_operator[verdict["operator"]] += 1
            if is_disallowed(verdict):
                self.disallowed_timeline[name, start] += 1
                self.disallowed_answers[name, verdict["identity"], answer(verdict["status"])] += 1
            if verdict["decision"] == "unknown":
                self.unjudged[verdict["reason"], verdict["host"], day] += 1
            note = identity_note(verdict["identity"], verdict["identity_method"], verdict["identity_evidence"])
            if note is not None:
                self.identity_notes[name, note, day] += 1
            if verdict["identity"] == "spoofed":
                self.spoofed_addresses[name, verdict["client_ip"]] += 1
                self.spoofed_user_agents[name, verdict["user_agent"]] += 1
        return self

    def merge(self, other: ReportCounts) -> ReportCounts:
        """Add another part's counts in (all but `disallowed`); returns self."""
        for name, counts in self._sections():
            counts.update(getattr(other, name))
        return self

    def _sections(self) -> tuple[tuple[str, Counter], ...]:
        return (
            ("hosts", self.hosts), ("timeline", self.timeline), ("disallowed_timeline", self.disallowed_timeline),
            ("spoofed_addresses", self.spoofed_addresses), ("spoofed_user_agents", self.spoofed_user_agents),
            ("automated_disallowed", self.automated_disallowed), ("llms_txt", self.llms_txt),
            ("conflicts", self.conflicts), ("unjudged", self.unjudged), ("identity_notes", self.identity_notes),
            ("disallowed_answers", self.disallowed_answers), ("verified_by_operator", self.verified_by_operator),
        )

    def to_json(self) -> dict:
        """One JSON document: per section a sorted list of rows, the key's values then the requests;
        timestamps as RFC 3339 text. `disallowed` holds the top rows of each crawler and identity
        [label, identity, *DISALLOWED_FIELDS, requests], and `disallowed_totals` each one's
        [label, identity, requests, distinct rows]."""
        document = {}
        for name, counts in self._sections():
            at = _TIMESTAMP_AT.get(name)
            rows = []
            for key, n in counts.items():
                row = [key] if name in _SINGLE_KEYS else list(key)
                if at is not None and row[at] is not None:
                    row[at] = rfc3339(row[at])
                if name in _DAY_AT:
                    row[_DAY_AT[name]] = row[_DAY_AT[name]].isoformat()
                rows.append([*row, n])
            document[name] = sorted(rows, key=_row_order)
        document["disallowed"] = sorted(
            ([*key, *fields, n] for key, of in self.disallowed.items() for fields, n in of.top), key=_row_order
        )
        document["disallowed_totals"] = sorted(
            [*key, of.requests, of.distinct] for key, of in self.disallowed.items()
        )
        return document

    @classmethod
    def from_json(cls, document: Mapping) -> ReportCounts:
        """The counts `to_json` wrote."""
        counts = cls()
        for name, section in counts._sections():
            at = _TIMESTAMP_AT.get(name)
            # a run written before a section existed has none of its rows
            for *key, n in document.get(name, ()) if name in _ADDED_LATER else document[name]:
                if at is not None and key[at] is not None:
                    key[at] = parse_timestamp(key[at])
                if name in _DAY_AT:
                    key[_DAY_AT[name]] = date.fromisoformat(key[_DAY_AT[name]])
                section[key[0] if name in _SINGLE_KEYS else tuple(key)] = n
        top: dict[tuple[str, str], list] = {}
        for name, identity, *fields, n in document["disallowed"]:
            top.setdefault((name, identity), []).append((tuple(fields), n))
        counts.disallowed = {
            (name, identity): CrawlerDisallowed(
                requests, distinct, tuple(sorted(top.get((name, identity), ()), key=_rank))
            )
            for name, identity, requests, distinct in document["disallowed_totals"]
        }
        return counts


def _row_order(row: list) -> tuple:
    # A column holds one type or null: nulls first, then by value.
    return tuple((value is not None, value) for value in row)
