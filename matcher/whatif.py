"""What a proposed robots.txt would have done to past traffic.

Each past request is decided again by the proposal for the same crawler, with the token chain
and catch-all choice its verdict was made with, as if the proposal had been the robots.txt in
effect. The answer is the requests whose decision would flip, and the proposal's rule that
flipped them; and the conflicts with usage preferences the proposal would create or remove, the
crawler's purposes crossed with the preferences the proposal states for each request. Requests are counted by what decides them first, so each distinct (tokens, path)
is decided once however often it was requested.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from matcher import robots
from matcher.preferences import HEADER_CONFLICT
from matcher.preferences import conflicts as preference_conflicts

__all__ = [
    "ALLOWED_TO_DISALLOWED",
    "CHANGES",
    "CONFLICT_CHANGES",
    "CrawlerChange",
    "DISALLOWED_TO_ALLOWED",
    "Flip",
    "Outcome",
    "PastRequest",
    "PreferenceChange",
    "by_crawler",
    "redecide",
]

ALLOWED_TO_DISALLOWED = "allowed-to-disallowed"
DISALLOWED_TO_ALLOWED = "disallowed-to-allowed"
CHANGES = (ALLOWED_TO_DISALLOWED, DISALLOWED_TO_ALLOWED)
CONFLICT_CHANGES = ("created", "removed")
# Every kind of disallowed verdict: the crawler should not have fetched, whatever the nuance.
_WAS_DISALLOWED = frozenset(
    {"disallowed", "disallowed-within-grace", "disallowed-before-refetch", "disallowed-between-captures"}
)


@dataclass(frozen=True)
class PastRequest:
    """What a verdict row says about one request that the proposal needs to decide it again."""

    crawler: str | None
    identity: str
    tokens: tuple[str, ...]
    catch_all: bool
    path: str
    decision: str
    purposes: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()  # the verdict's preference conflicts


@dataclass(frozen=True)
class PreferenceChange:
    """Requests of one crawler and identity whose conflict with a usage preference the proposal
    would create or remove."""

    crawler: str | None
    identity: str
    change: str  # CONFLICT_CHANGES
    conflict: str  # "purpose: key=no"
    requests: int


@dataclass(frozen=True)
class Flip:
    """Requests of one crawler and identity to one path whose decision the proposal changes."""

    crawler: str | None
    identity: str
    change: str
    path: str
    rule: robots.Rule | None
    reason: str
    requests: int


@dataclass(frozen=True)
class Outcome:
    """The whole answer: how many requests were decided again, what flipped, and how the
    requests that had no robots.txt version at the time would now be decided."""

    requests: int
    flips: tuple[Flip, ...]
    unknown_now_allowed: int
    unknown_now_disallowed: int
    preference_changes: tuple[PreferenceChange, ...] = ()
    # (purpose, change) -> flipped requests; a crawler of several purposes counts under each
    by_purpose: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @property
    def unchanged(self) -> int:
        flipped = sum(flip.requests for flip in self.flips)
        return self.requests - flipped - self.unknown_now_allowed - self.unknown_now_disallowed


def redecide(requests: Mapping[PastRequest, int], proposal: robots.RobotsFile) -> Outcome:
    """Decide every counted request again under `proposal`; flips most requests first."""
    flips = []
    unknown = Counter()
    conflicts: Counter = Counter()
    by_purpose: Counter = Counter()
    for request, count in requests.items():
        decision = proposal.decide_path(request.tokens, request.path, request.catch_all)
        now = set(preference_conflicts(request.purposes, proposal.preferences(decision.group, request.path)))
        # A logged Content-Usage header came with the response, not from robots.txt: no proposal
        # creates or removes its conflicts.
        past = {conflict for conflict in request.conflicts if not _from_header(conflict)}
        for change, found in (("created", now - past), ("removed", past - now)):
            for conflict in found:
                conflicts[request.crawler, request.identity, change, conflict] += count
        if request.decision == "unknown":
            unknown[decision.allowed] += count
            continue
        was_allowed = request.decision not in _WAS_DISALLOWED
        if decision.allowed == was_allowed:
            continue
        change = DISALLOWED_TO_ALLOWED if decision.allowed else ALLOWED_TO_DISALLOWED
        for purpose in request.purposes:
            by_purpose[purpose, change] += count
        flips.append(
            Flip(request.crawler, request.identity, change, request.path, decision.rule, decision.reason, count)
        )
    merged = _merge(flips)
    changes = tuple(
        PreferenceChange(*key, n)
        for key, n in sorted(conflicts.items(), key=lambda kv: (-kv[1], kv[0][0] or "", kv[0][1:]))
    )
    return Outcome(sum(requests.values()), merged, unknown[True], unknown[False], changes, dict(by_purpose))


def _from_header(conflict: str) -> bool:
    return conflict.partition(": ")[2].startswith(HEADER_CONFLICT)


def _merge(flips: Iterable[Flip]) -> tuple[Flip, ...]:
    """One flip per crawler, identity, change, path and rule (verdicts of different token chains
    for one crawler name can meet here), most requests first."""
    totals: dict[tuple, int] = defaultdict(int)
    for flip in flips:
        totals[(flip.crawler, flip.identity, flip.change, flip.path, flip.rule, flip.reason)] += flip.requests
    merged = [Flip(*key, requests) for key, requests in totals.items()]
    return tuple(sorted(merged, key=lambda f: (-f.requests, f.crawler or "", f.identity, f.change, f.path, repr(f.rule))))


@dataclass(frozen=True)
class CrawlerChange:
    """Per crawler and identity: requests that flip each way, and the top paths of each."""

    crawler: str | None
    identity: str
    requests: Mapping[str, int]
    top: Mapping[str, tuple[Flip, ...]]


def by_crawler(flips: Iterable[Flip], top: int = 10) -> list[CrawlerChange]:
    """Flips grouped per crawler and identity, the crawler with most flipped requests first."""
    grouped: dict[tuple, list[Flip]] = defaultdict(list)
    for flip in flips:
        grouped[(flip.crawler, flip.identity)].append(flip)
    changes = []
    for (crawler, identity), group in grouped.items():
        counts = {change: sum(f.requests for f in group if f.change == change) for change in CHANGES}
        tops = {
            change: tuple(sorted((f for f in group if f.change == change), key=lambda f: (-f.requests, f.path))[:top])
            for change in CHANGES
        }
        changes.append(CrawlerChange(crawler, identity, counts, tops))
    return sorted(changes, key=lambda c: (-sum(c.requests.values()), c.crawler or "", c.identity))
