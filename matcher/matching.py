"""Matching normalized paths against a group's normalized patterns.

`*` matches any run of octets and a trailing `$` anchors the end; elsewhere `$`
is literal. A `RuleIndex` answers "which rule has precedence for this path" without
trying every rule: plain prefixes sit in one dict per length, so the longest
matching prefix is found by probing lengths longest first; anchored patterns
without `*` are one exact lookup; only patterns with `*` are tried one by one, and
only while they could still outrank the best literal match.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

_NO_MATCH = -1
_CACHE_LIMIT = 4096


@dataclass(frozen=True)
class Wildcard:
    """A pattern with `*`: its pieces between stars, and whether `$` anchors it."""

    head: str
    middle: tuple[str, ...]
    tail: str
    anchored: bool

    @classmethod
    def of(cls, body: str, anchored: bool) -> Wildcard:
        pieces = body.split("*")
        return cls(pieces[0], tuple(pieces[1:-1]), pieces[-1], anchored)

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
    or -1. Results are remembered per path, up to a bound, because logs and link
    lists ask about the same paths again and again.
    """

    def __init__(self, patterns: Sequence[str]):
        self._by_length: dict[int, dict[str, int]] = {}
        self._exact: dict[str, int] = {}
        wildcards: list[tuple[int, Wildcard]] = []
        for rank, normalized in enumerate(patterns):
            anchored = normalized.endswith("$")
            body = normalized[:-1] if anchored else normalized
            if "*" in body:
                wildcards.append((rank, Wildcard.of(body, anchored)))
            elif anchored:
                self._exact.setdefault(body, rank)
            else:
                self._by_length.setdefault(len(body), {}).setdefault(body, rank)
        self._lengths = tuple(sorted(self._by_length, reverse=True))
        self._wildcards = tuple(wildcards)
        self._cache: dict[str, int] = {}

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_cache": {}}

    def best(self, path: str) -> int:
        rank = self._cache.get(path)
        if rank is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            rank = self._cache[path] = self._search(path)
        return rank

    def _search(self, path: str) -> int:
        best = self._exact.get(path, _NO_MATCH)
        size = len(path)
        for length in self._lengths:
            if length <= size:
                rank = self._by_length[length].get(path[:length])
                if rank is not None:
                    if best == _NO_MATCH or rank < best:
                        best = rank
                    break
        for rank, wildcard in self._wildcards:
            if best != _NO_MATCH and rank > best:
                break
            if wildcard.matches(path):
                return rank
        return best
