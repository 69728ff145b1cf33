"""Matching normalized paths against a group's normalized patterns.

`*` matches any run of octets and a trailing `$` anchors the end; elsewhere `$`
is literal. A `RuleIndex` answers "which rule has precedence for this path" without
trying every rule. Patterns are filed under their first `BUCKET` characters, so a
path is compared only with the patterns that share its start: plain prefixes sit in
one dict, and the longest one matching is found by probing the lengths its bucket
holds, longest first; anchored patterns without `*` are one exact lookup;
patterns with `*` are tried one by one, and only while they could still outrank the
best literal match. Patterns shorter than a bucket key match every path of the
buckets they begin, so each bucket knows its best one beforehand.
"""
from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple, Sequence

_NO_MATCH = -1
# Almost every pattern starts with `/`, so the second character is the first that tells them apart.
BUCKET = 2


class Wildcard(NamedTuple):
    """A pattern with `*`: its pieces between stars, and whether `$` anchors it."""

    head: str
    middle: tuple[str, ...]
    tail: str
    anchored: bool
    # The longest piece after the head: most paths lack it, and `in` tells so without a call.
    needle: str

    @classmethod
    def of(cls, body: str, anchored: bool) -> Wildcard:
        pieces = body.split("*")
        return cls(pieces[0], tuple(pieces[1:-1]), pieces[-1], anchored, max(pieces[1:], key=len))

    def matches(self, path: str) -> bool:
        # Each piece is found at its leftmost place after the previous one: that
        # leaves the most room for the rest, so nothing is ever retried and the
        # cost stays linear-ish however many stars a hostile pattern has.
        if not path.startswith(self.head):
            return False
        position = len(self.head)
        for piece in self.middle:
            found = path.find(piece, position)
            if found < 0:
                return False
            position = found + len(piece)
        if self.anchored:
            return len(path) - len(self.tail) >= position and path.endswith(self.tail)
        return path.find(self.tail, position) >= 0


def pattern_matches(normalized: str, path: str) -> bool:
    """Whether one normalized pattern matches a normalized path (slow path, for explanations)."""
    anchored = normalized.endswith("$")
    body = normalized[:-1] if anchored else normalized
    if "*" in body:
        return Wildcard.of(body, anchored).matches(path)
    return path == body if anchored else path.startswith(body)


class RuleIndex:
    """Precedence lookup over patterns given in precedence order (best first).

    `best(path)` is the position of the first pattern, in that order, that matches,
    or -1.
    """

    def __init__(self, patterns: Sequence[str]):
        self._none = len(patterns)  # "no match" ranks after every pattern, so comparisons need no special case
        self._exact: dict[str, int] = {}
        self._prefixes: dict[str, int] = {}
        lengths: defaultdict[str, set[int]] = defaultdict(set)  # bucket -> lengths of its plain prefixes
        wildcards: defaultdict[str, list] = defaultdict(list)  # bucket -> (rank, needle, pattern); "" for short heads
        # Last rank first, so where two patterns are the same the better rank is the one left.
        for rank in range(len(patterns) - 1, -1, -1):
            normalized = patterns[rank]
            anchored = normalized.endswith("$")
            body = normalized[:-1] if anchored else normalized
            if "*" in body:
                wildcard = Wildcard.of(body, anchored)
                bucket = wildcard.head[:BUCKET] if len(wildcard.head) >= BUCKET else ""
                wildcards[bucket].append((rank, wildcard.needle, wildcard))
            elif anchored:
                self._exact[body] = rank
            else:
                self._prefixes[body] = rank
                if len(body) >= BUCKET:
                    lengths[body[:BUCKET]].add(len(body))
        self._short_lengths = tuple(sorted({len(p) for p in self._prefixes if len(p) < BUCKET}, reverse=True))
        self._buckets = {
            bucket: (tuple(sorted(found, reverse=True)), self._short_prefix(bucket)) for bucket, found in lengths.items()
        }
        # Per bucket, the lists of wildcards a path there must try: its own, then those any path must.
        any_bucket = tuple(reversed(wildcards.pop("", ())))
        self._wildcards = {bucket: (tuple(reversed(found)), any_bucket) for bucket, found in wildcards.items()}
        self._any_bucket_wildcards = (any_bucket,) if any_bucket else ()

    def best(self, path: str) -> int:
        start = path[:BUCKET]
        bucket = self._buckets.get(start)
        if bucket is None:
            # Normalized paths are ASCII, so a few thousand starts at most are ever added.
            bucket = self._buckets[start] = ((), self._short_prefix(start))
        lengths, best = bucket
        size = len(path)
        for length in lengths:
            if length <= size:
                rank = self._prefixes.get(path[:length])
                if rank is not None:
                    best = rank
                    break
        rank = self._exact.get(path, best)
        if rank < best:
            best = rank
        for candidates in self._wildcards.get(start, self._any_bucket_wildcards):
            for rank, needle, wildcard in candidates:
                if rank > best:
                    break
                if needle in path and wildcard.matches(path):
                    best = rank
                    break
        return _NO_MATCH if best == self._none else best

    def _short_prefix(self, path: str) -> int:
        for length in self._short_lengths:
            rank = self._prefixes.get(path[:length])
            if rank is not None:
                return rank
        return self._none
