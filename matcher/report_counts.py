"""What the HTML report counts of a run's verdicts: requests per host, per crawler and hour,
disallowed requests per crawler and what decided them, spoofed requests per claimed crawler by
address and by User-Agent.

Counts of parts of a run add up (`ReportCounts.merge`), so a run counts each batch of verdicts
as it goes by and adds the batches' counts once; the report reads the sum back from
`report_counts.json` (`to_json`, `from_json`) instead of every verdict.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from matcher.health import identity_note
from matcher.records import rfc3339
from matcher.timerange import LATEST, parse_timestamp, shifted

__all__ = ["NO_LABEL", "DISALLOWED_FIELDS", "ReportCounts", "label", "hour", "is_disallowed", "disallowed_fields"]

NO_LABEL = "(none)"
# What tells one disallowed path of a crawler from another, in order.
DISALLOWED_FIELDS = (
    "host", "path", "decision", "reason", "rule_kind", "rule_pattern", "rule_line", "version_from", "version_status",
)
_HOUR = timedelta(hours=1)
# Where the timestamps are among a row of `to_json`'s sections (after the label).
_TIMESTAMP_AT = {"timeline": 1, "disallowed": 2 + DISALLOWED_FIELDS.index("version_from")}
# Where the days are among a row of the run-health sections.
_DAY_AT = {"unjudged": 2, "identity_notes": 2}


def label(verdict: Mapping) -> str:
    """The crawler a request is counted under: its claim, else the operator of its address range
    (undeclared traffic), else "(none)"."""
    if verdict["crawler"] is not None:
        return verdict["crawler"]
    if verdict["operator"] is not None:
        return verdict["operator"]
    return NO_LABEL


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


@dataclass
class ReportCounts:
    """Requests counted by what the report draws; every key starts with the crawler's `label`
    but for `hosts`."""

    hosts: Counter = field(default_factory=Counter)  # host
    timeline: Counter = field(default_factory=Counter)  # (label, hour)
    disallowed: Counter = field(default_factory=Counter)  # (label, identity, *DISALLOWED_FIELDS)
    spoofed_addresses: Counter = field(default_factory=Counter)  # (label, client_ip)
    spoofed_user_agents: Counter = field(default_factory=Counter)  # (label, user_agent)
    # what run health reads (matcher/health.py): requests no robots.txt judged, by reason, host
    # and UTC day; and what stood in the way of an identity, by crawler, note and day
    unjudged: Counter = field(default_factory=Counter)  # (reason, host, day)
    identity_notes: Counter = field(default_factory=Counter)  # (label, note, day)

    @classmethod
    def of(cls, verdicts: Iterable[Mapping]) -> ReportCounts:
        return cls().add(verdicts)

    def add(self, verdicts: Iterable[Mapping]) -> ReportCounts:
        """Count these verdicts in; returns self."""
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
            self.hosts[verdict["host"]] += 1
            self.timeline[name, start] += 1
            if is_disallowed(verdict):
                self.disallowed[(name, verdict["identity"], *disallowed_fields(verdict))] += 1
            elif verdict["decision"] == "unknown":
                self.unjudged[verdict["reason"], verdict["host"], day] += 1
            note = identity_note(verdict["identity"], verdict["identity_method"], verdict["identity_evidence"])
            if note is not None:
                self.identity_notes[name, note, day] += 1
            if verdict["identity"] == "spoofed":
                self.spoofed_addresses[name, verdict["client_ip"]] += 1
                self.spoofed_user_agents[name, verdict["user_agent"]] += 1
        return self

    def merge(self, other: ReportCounts) -> ReportCounts:
        """Add another part's counts in; returns self."""
        for name, counts in self._sections():
            counts.update(getattr(other, name))
        return self

    def _sections(self) -> tuple[tuple[str, Counter], ...]:
        return (
            ("hosts", self.hosts), ("timeline", self.timeline), ("disallowed", self.disallowed),
            ("spoofed_addresses", self.spoofed_addresses), ("spoofed_user_agents", self.spoofed_user_agents),
            ("unjudged", self.unjudged), ("identity_notes", self.identity_notes),
        )

    def to_json(self) -> dict:
        """One JSON document: per section a sorted list of rows, the key's values then the requests;
        timestamps as RFC 3339 text."""
        document = {}
        for name, counts in self._sections():
            at = _TIMESTAMP_AT.get(name)
            rows = []
            for key, n in counts.items():
                row = [key] if name == "hosts" else list(key)
                if at is not None and row[at] is not None:
                    row[at] = rfc3339(row[at])
                if name in _DAY_AT:
                    row[_DAY_AT[name]] = row[_DAY_AT[name]].isoformat()
                rows.append([*row, n])
            document[name] = sorted(rows, key=_row_order)
        return document

    @classmethod
    def from_json(cls, document: Mapping) -> ReportCounts:
        """The counts `to_json` wrote."""
        counts = cls()
        for name, section in counts._sections():
            at = _TIMESTAMP_AT.get(name)
            # a run from before run health was counted has none of its sections
            for *key, n in document.get(name, ()) if name in _DAY_AT else document[name]:
                if at is not None and key[at] is not None:
                    key[at] = parse_timestamp(key[at])
                if name in _DAY_AT:
                    key[_DAY_AT[name]] = date.fromisoformat(key[_DAY_AT[name]])
                section[key[0] if name == "hosts" else tuple(key)] = n
        return counts


def _row_order(row: list) -> tuple:
    # A column holds one type or null: nulls first, then by value.
    return tuple((value is not None, value) for value in row)
