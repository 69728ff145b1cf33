"""What a crawler's published ranges say about an address on a day: listed, absent, or nothing.

Each snapshot of a range source stands for a span of days (`matcher/ip_ranges.py`). Operators
publish ranges around the time they use them, and a spoofer cannot send from an operator's
addresses, so absence within a few weeks of a request proves the claim false while absence across
months proves nothing. With the window `RangeIndex.window` (whole days each side of the request's
UTC day, inclusive):

- listed in a span within the window: proved, naming the snapshot and how far it is from the
  request (nothing said when its span covers the request's day);
- listed only in spans that ended further before the request: proved, with a stale note, since an
  operator's address does not become a spoofer's (a listing only long after the request proves
  nothing: operators take new addresses as their crawlers grow);
- listed nowhere, while every source has a span within the window: absent, naming the snapshots
  read;
- a source without a span within the window says nothing: the finding names its nearest snapshot.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from matcher.addresses import Address
from matcher.ip_ranges import RangeHit, RangeIndex, Span

__all__ = ["RangeFinding", "judge_ranges", "window_lines"]


@dataclass(frozen=True)
class RangeFinding:
    """The evidence when a source lists the address (`proof`), else what each source said:
    `read` the snapshots within the window that do not list it, `silent` why the others could
    not say (no snapshot at all, none within the window)."""

    proof: str | None
    read: tuple[str, ...] = ()
    silent: tuple[str, ...] = ()

    @property
    def absent(self) -> bool:
        """Absence proved: every source has a span within the window and none lists the address."""
        return self.proof is None and bool(self.read) and not self.silent

    @property
    def context(self) -> tuple[str, ...]:
        """What the range check found when it proved nothing: the silent sources, then the read."""
        return (*self.silent, "not in " + ", ".join(self.read)) if self.read else self.silent


def judge_ranges(sources: Sequence[str], address: Address, day: date, ranges: RangeIndex) -> RangeFinding:
    """The rule of this module for a claim whose crawler publishes `sources`, in their order: the
    first source listing the address within the window proves it, then the nearest listing
    further before the request does."""
    read: list[str] = []
    unpublished: list[str] = []
    outside: list[str] = []
    for source in sources:
        near = ranges.spans_within(source, day)
        if not near:
            nearest = ranges.nearest_span(source, day)
            if nearest is None:
                unpublished.append(source)
            else:
                outside.append(
                    f"no snapshot of {source} within {ranges.window} days of {day.isoformat()}"
                    f" (nearest {nearest.snapshot.taken.isoformat()}, {_how_far(nearest, day)})"
                )
            continue
        listed = _nearest_listing(near, address, day)
        if listed is not None:
            return RangeFinding(_evidence(*listed, day))
        read.append(_read(source, near))
    for source in sources:
        if ranges.ever_lists(source, address):
            listed = _nearest_listing([span for span in ranges.spans(source) if span.last < day], address, day)
            if listed is not None:
                hit, span = listed
                stale = f"stale: {_how_far(span, day)}"
                if span is ranges.spans(source)[-1]:
                    stale += "; run update-ranges"
                return RangeFinding(f"{hit.evidence} ({stale})")
    silent = (*(["no range snapshot for " + ", ".join(unpublished)] if unpublished else []), *outside)
    return RangeFinding(None, tuple(read), silent)


def window_lines(sources: Sequence[str], day: date, ranges: RangeIndex) -> tuple[str, ...]:
    """Per source, the snapshots whose spans are within the window of `day`, as `verify` shows them."""
    lines = []
    for source in sources:
        near = ranges.spans_within(source, day)
        nearest = ranges.nearest_span(source, day)
        if near:
            lines.append(f"{source}: {_read(source, near, named=False)}")
        elif nearest is not None:
            lines.append(
                f"{source}: none within {ranges.window} days (nearest {nearest.snapshot.taken.isoformat()},"
                f" {_how_far(nearest, day)})"
            )
        else:
            lines.append(f"{source}: no snapshot")
    return tuple(lines)


def _nearest_listing(spans: Sequence[Span], address: Address, day: date) -> tuple[RangeHit, Span] | None:
    for span in sorted(spans, key=lambda span: (span.distance(day), span.first)):
        hit = span.snapshot.find(address)
        if hit is not None:
            return hit, span
    return None


def _evidence(hit: RangeHit, span: Span, day: date) -> str:
    if span.distance(day) == 0:
        return hit.evidence
    side = "later" if span.first > day else "earlier"
    return f"{hit.evidence} ({side}: {_how_far(span, day)})"


def _how_far(span: Span, day: date) -> str:
    """How far a span is from the request: its first day after it, or its last day before it."""
    days = span.distance(day)
    count = f"{days} {'day' if days == 1 else 'days'}"
    if span.first > day:
        return f"{count} after the request"
    if span.last > span.first:
        return f"stood to {span.last.isoformat()}, {count} before the request"
    return f"{count} before the request"


def _read(source: str, spans: Sequence[Span], named: bool = True) -> str:
    first, last = spans[0].snapshot.taken, spans[-1].snapshot.taken
    if len(spans) == 1:
        return f"{source} snapshot {first.isoformat()}" if named else f"snapshot {first.isoformat()}"
    of = f" of {source}" if named else ""
    return f"the {len(spans)} snapshots{of} from {first.isoformat()} to {last.isoformat()}"
