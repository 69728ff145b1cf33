"""The figures the closing summary and the HTML page both show, computed once from the summary
rows: each crawler's requests split by every decision, the claims its address does not prove kept
apart from the crawler's own requests, and the split per purpose.

A row's decision counts add up to its requests: every decision of `records.DECISION_COLUMNS` has
its column. "disallowed" alone is the plain decision; a total over the four disallowed decisions
is always called so (`ALL_DISALLOWED`).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from matcher.records import DECISION_COLUMNS
from matcher.served import total_bytes

# The summary columns that split requests by decision, in the order tables show them.
DECISIONS = tuple(column for _, column in DECISION_COLUMNS)
# The same columns as a page heads them.
HEADINGS = {column: column.replace("_", " ") for column in DECISIONS}
DISALLOWED_KINDS = tuple(column for decision, column in DECISION_COLUMNS if decision.startswith("disallowed"))
ALL_DISALLOWED = "disallowed of any kind"
# Requests whose address proves the claim, or that no method could check: the crawler's own.
OWN = ("verified", "unverifiable", "undeclared")
# A name the address disproves, or does not prove: not counted as the crawler's.
CLAIMED = ("spoofed", "unverified")
IDENTITY_ORDER = OWN[:1] + CLAIMED + OWN[1:]
_IDENTITY_WORDS = {"unverifiable": "no way to verify"}
NO_NAME = "(none)"


def identity_words(identity: str) -> str:
    """How a table names an identity: `unverifiable` reads "no way to verify"."""
    return _IDENTITY_WORDS.get(identity, identity)


@dataclass(frozen=True)
class Split:
    """Requests of one crawler and identity (or one purpose, or a total) by decision."""

    name: str
    identity: str
    requests: int
    decisions: tuple[int, ...]  # in DECISIONS order
    bytes: int | None = None  # the responses' logged sizes summed; None when none logged one

    def of(self, column: str) -> int:
        return self.decisions[DECISIONS.index(column)]

    @property
    def disallowed_any(self) -> int:
        """The four disallowed decisions together."""
        return sum(self.of(column) for column in DISALLOWED_KINDS)

    def cells(self) -> tuple[int, ...]:
        """requests, then each decision."""
        return (self.requests, *self.decisions)


@dataclass(frozen=True)
class Claim:
    """Requests that named a crawler their address does not prove, of every unproven identity."""

    name: str
    requests: int
    disallowed_any: int
    by_identity: tuple[tuple[str, int], ...]  # CLAIMED order, identities with requests

    def sentence(self) -> str:
        """`claimed Googlebot, not proven: 287 (spoofed 200, unverified 87)`."""
        split = ", ".join(f"{identity} {n:,}" for identity, n in self.by_identity)
        return f"claimed {self.name}, not proven: {self.requests:,} ({split}), {self.disallowed_any:,} {ALL_DISALLOWED}"


@dataclass(frozen=True)
class Figures:
    crawlers: tuple[Split, ...]  # the crawlers' own requests, most requested crawler first
    claims: tuple[Split, ...]  # spoofed and unverified claims, most requested claimed name first
    claimed: tuple[Claim, ...]  # the claims per claimed name, in the same order
    automated: tuple[Split, ...]
    agents: tuple[Split, ...]  # browsers run by an operator's agent, named by their Signature-Agent
    purposes: tuple[Split, ...]  # the crawlers' own requests per purpose, most requested first


def split(row: Mapping) -> Split:
    """A summary row's split; a row written before a decision had its column counts none of it."""
    return Split(
        row["crawler"] or NO_NAME, row["identity"], row["requests"], tuple(row.get(column, 0) for column in DECISIONS),
        row.get("bytes"),
    )


def total(name: str, splits: Iterable[Split]) -> Split:
    splits = list(splits)
    decisions = tuple(sum(s.decisions[i] for s in splits) for i in range(len(DECISIONS)))
    return Split(name, "", sum(s.requests for s in splits), decisions, total_bytes(s.bytes for s in splits))


def byte_size(n: int | None) -> str:
    """A bytes cell: exact, so that a table's cells add up; `-` when no size was logged."""
    return "-" if n is None else f"{n:,}"


def figures(rows: Sequence[Mapping]) -> Figures:
    """The figures of a run's summary rows (a run from before client kinds has only crawlers)."""
    crawler_rows = [row for row in rows if row.get("client_kind", "crawler") == "crawler"]
    own = [row for row in crawler_rows if row["identity"] not in CLAIMED]
    claims = [split(row) for row in crawler_rows if row["identity"] in CLAIMED]
    automated = [row for row in rows if row.get("client_kind", "crawler") == "automated"]
    agents = [row for row in rows if row.get("client_kind", "crawler") == "agent"]
    claimed = _claimed(claims)
    order = {claim.name: rank for rank, claim in enumerate(claimed)}
    return Figures(
        ranked([split(row) for row in own]),
        tuple(sorted(claims, key=lambda s: (order[s.name], _identity_rank(s.identity)))),
        claimed,
        ranked([split(row) for row in automated]),
        ranked([split(row) for row in agents]),
        _purposes(own),
    )


def ranked(splits: Sequence[Split]) -> tuple[Split, ...]:
    """The crawlers with most requests first, each one's identities in a fixed order."""
    per_name: dict[str, int] = defaultdict(int)
    for s in splits:
        per_name[s.name] += s.requests
    return tuple(sorted(splits, key=lambda s: (-per_name[s.name], s.name, _identity_rank(s.identity))))


def _claimed(claims: Sequence[Split]) -> tuple[Claim, ...]:
    by_name: dict[str, list[Split]] = defaultdict(list)
    for s in claims:
        by_name[s.name].append(s)
    found = [
        Claim(
            name,
            sum(s.requests for s in of),
            sum(s.disallowed_any for s in of),
            tuple((i, n) for i in CLAIMED if (n := sum(s.requests for s in of if s.identity == i))),
        )
        for name, of in by_name.items()
    ]
    return tuple(sorted(found, key=lambda c: (-c.requests, c.name)))


def _purposes(rows: Sequence[Mapping]) -> tuple[Split, ...]:
    """A crawler of several purposes counts under each."""
    by_purpose: dict[str, list[Split]] = defaultdict(list)
    for row in rows:
        for purpose in row.get("purpose") or ("unknown",):
            by_purpose[purpose].append(split(row))
    totals = [total(purpose, splits) for purpose, splits in by_purpose.items()]
    return tuple(sorted(totals, key=lambda s: (-s.requests, s.name)))


def _identity_rank(identity: str) -> int:
    return IDENTITY_ORDER.index(identity) if identity in IDENTITY_ORDER else len(IDENTITY_ORDER)
