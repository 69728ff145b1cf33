"""The change audit: for each robots.txt change of a host, what each crawler did with the paths
it changed (docs/semantics.md § The change audit).

A change is a new `ok` version replacing an `ok` version with another body; a transition to or
from an error or unavailable state is none. A path is newly disallowed for a crawler when the
previous version allowed it and the new one disallows it (direction `restricts`), newly allowed
the other way round (`opens`), each judged with the crawler's robots tokens and catch-all choice.

The after-period runs from the change to the host's next change, or to the host's last logged
request; the before-period is as long, ends at the change, and starts no earlier than the host's
first logged request. Requests are counted per (host, change, direction, crawler, identity):
`requests_of` says which changes a request may count for, and `change_row` makes the key's row
once the host's span is known.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from matcher import robots
from matcher.bounded import BoundedCache
from matcher.history import RobotsVersion
from matcher.timerange import from_micros, micros

__all__ = [
    "OPENS",
    "RESTRICTS",
    "ChangeKey",
    "RobotsChange",
    "change_row",
    "host_changes",
    "is_change",
    "requests_of",
]

RESTRICTS = "restricts"
OPENS = "opens"
# (host, change_at in microseconds, direction, crawler, identity): plain values, so Beam can key by it.
ChangeKey = tuple[str, int, str, str, str]
# Per change, within the budget of docs/architecture.md § Memory.
_REMEMBERED_DIRECTIONS = 1024
_REMEMBERED_DIRECTION_CHARS = 1 << 16
# What the after-period counts by decision, and its column.
_AFTER_COLUMNS = {
    "disallowed-within-grace": "within_grace",
    "disallowed-before-refetch": "before_refetch",
    "disallowed": "violations",
    "disallowed-between-captures": "between_captures",
}


@dataclass(frozen=True, eq=False)
class RobotsChange:
    """One change of a host's robots.txt: the version replaced, the new one, and when the host's
    next change came (None: none)."""

    host: str
    previous: RobotsVersion
    new: RobotsVersion
    next_at: datetime | None
    # Both bodies parsed on first use; not pickled (a worker parses them again, once).
    _files: list = field(default_factory=list, init=False, repr=False)
    # Per crawler (robots tokens, catch-all), whether the change touched its access rules: one
    # entry per crawler of the registry.
    _rules_changed: dict = field(default_factory=dict, init=False, repr=False)
    # A crawler's direction on a path, kept once decided: a host's requests repeat their paths.
    _directions: BoundedCache = field(
        default_factory=lambda: BoundedCache(_REMEMBERED_DIRECTIONS, key_chars=_REMEMBERED_DIRECTION_CHARS),
        init=False,
        repr=False,
    )

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_files": [], "_rules_changed": {}}

    @property
    def at(self) -> datetime:
        return self.new.effective_from

    def direction(self, tokens: Sequence[str], catch_all: bool, path: str) -> str | None:
        """`restricts` or `opens` when the change turned this crawler's decision on `path`, else None."""
        if not self._turns_any(tuple(tokens), catch_all):
            return None
        key = (path, catch_all, tuple(tokens))
        if key not in self._directions:
            self._directions[key] = self._decided_direction(key[2], catch_all, path)
        return self._directions[key]

    def _turns_any(self, tokens: tuple[str, ...], catch_all: bool) -> bool:
        """False when the change left the crawler's access rules as they were, so no path of its
        turned: most changes rewrite one crawler's group and leave the others' alone."""
        key = (tokens, catch_all)
        if key not in self._rules_changed:
            before, after = (parsed.access_rules(tokens, catch_all) for parsed in self._parsed())
            self._rules_changed[key] = before != after
        return self._rules_changed[key]

    def _parsed(self) -> list[robots.RobotsFile]:
        """The bodies before and after, parsed once."""
        if not self._files:
            self._files.extend(robots.parse(version.body or b"") for version in (self.previous, self.new))
        return self._files

    def _decided_direction(self, tokens: tuple[str, ...], catch_all: bool, path: str) -> str | None:
        before, after = (parsed.decide_path(tokens, path, catch_all).allowed for parsed in self._parsed())
        if before == after:
            return None
        return OPENS if after else RESTRICTS


def is_change(previous_kind: str, previous_sha256: str | None, new_kind: str, new_sha256: str | None) -> bool:
    """Whether a version following another is a change: parsed both, with other bodies."""
    return previous_kind == new_kind == "ok" and previous_sha256 != new_sha256


def host_changes(versions: Iterable[RobotsVersion]) -> tuple[RobotsChange, ...]:
    """A host's changes in time order, from its versions in any order."""
    ordered = sorted(versions, key=lambda v: v.effective_from)
    pairs = [
        (previous, new) for previous, new in zip(ordered, ordered[1:])
        if is_change(previous.kind, previous.sha256, new.kind, new.sha256)
    ]
    return tuple(
        RobotsChange(new.host, previous, new, pairs[i + 1][1].effective_from if i + 1 < len(pairs) else None)
        for i, (previous, new) in enumerate(pairs)
    )


def requests_of(
    changes: Sequence[RobotsChange], ts: datetime, tokens: Sequence[str], catch_all: bool, path: str
) -> Iterator[tuple[RobotsChange, str]]:
    """The changes a request at `ts` may count for, with their direction on its path: the change
    whose after-period it may fall in, and the later ones whose before-period may reach back to
    it (a period's end is known for every change but the last before the run ends)."""
    index = bisect_right([change.at for change in changes], ts) - 1
    for i in range(max(index, 0), len(changes)):
        change = changes[i]
        if i > index and change.next_at is not None and change.at - (change.next_at - change.at) > ts:
            continue
        direction = change.direction(tokens, catch_all, path)
        if direction is not None:
            yield change, direction


def change_row(
    key: ChangeKey,
    requests: Iterable[tuple[int, str]],
    span: tuple[int, int],
    next_at: datetime | None,
    fetch_times: Sequence[datetime],
) -> dict | None:
    """The `changes` row of a key: `span` is the host's first and last logged request (in
    microseconds), `fetch_times` the crawler's robots.txt fetches (same fetch family, identity
    and host) in time order. None when no request of the key falls in either period."""
    host, at_micros, direction, crawler, identity = key
    first, last = span
    end = micros(next_at) if next_at is not None else last
    after_length = max(end - at_micros, 0)
    start = max(at_micros - after_length, first)
    before = after = 0
    by_decision = dict.fromkeys(_AFTER_COLUMNS.values(), 0)
    latest = None
    for ts, decision in requests:
        if start <= ts < at_micros:
            before += 1
        elif at_micros <= ts and (ts < end if next_at is not None else ts <= end):
            after += 1
            column = _AFTER_COLUMNS.get(decision)
            if column is not None:
                by_decision[column] += 1
            if direction == RESTRICTS and (latest is None or ts > latest):
                latest = ts
    if not before and not after:
        return None
    change_at = from_micros(at_micros)
    first_fetch = next((fetched for fetched in fetch_times if fetched >= change_at), None)
    return {
        "host": host,
        "change_at": change_at,
        "direction": direction,
        "crawler": crawler,
        "identity": identity,
        "before_from": from_micros(start),
        "after_until": from_micros(end),
        "requests_before": before,
        "requests_after": after,
        **by_decision,
        "first_robots_fetch_after": first_fetch,
        "last_newly_disallowed_request": None if latest is None else from_micros(latest),
    }
