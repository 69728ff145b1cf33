"""Matching normalized paths against a group's normalized patterns.

`*` matches any run of octets and a trailing `$` anchors the end (normalization
has escaped every other `$`). A `RuleIndex` answers "which rule has precedence for
this path" without trying every rule. Patterns are filed under their first `BUCKET`
characters, so a path is compared only with the patterns that share its start: plain
prefixes sit in one dict, and the longest one matching is found by probing the
lengths its bucket holds, longest first; anchored patterns without `*` are one exact
lookup; up to `MANY` patterns with `*` are tried one by one, and only while they
could still outrank the best literal match, and more are matched together in one
pass over the path (`WildcardSet`), so a hostile file's thousands of wildcards cost
no pass each. A bucket is prepared the first time a path asks for it: most buckets
of a large group never meet a request. A lone rule is simply tried (`RuleList`).
"""
from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from typing import Sequence

__all__ = ["RuleIndex", "RuleList", "index_rules"]

# Almost every pattern starts with `/`, so the second character is the first that tells them apart.
BUCKET = 2
# Up to this many patterns, trying each in turn costs less than one lookup in a `RuleIndex`.
FEW = 1
# Past this many wildcard patterns in a bucket, they are matched together (`WildcardSet`): tried
# one by one, each costs a pass over the path, and a hostile file holds thousands. Below it,
# trying each (one `in` per pattern, in C) is faster than the scan in Python on real files.
MANY = 64


def _wildcard_matches(pieces: Sequence[str], anchored: bool, path: str) -> bool:
    """Whether `path` matches the pattern whose pieces between `*` these are."""
    # Each piece is found at its leftmost place after the previous one: that
    # leaves the most room for the rest, so nothing is ever retried and the
    # cost stays linear-ish however many stars a hostile pattern has.
    head = pieces[0]
    if not path.startswith(head):
        return False
    position = len(head)
    for piece in pieces[1:-1]:
        found = path.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    tail = pieces[-1]
    if anchored:
        return len(path) - len(tail) >= position and path.endswith(tail)
    return path.find(tail, position) >= 0


def _anchored_body(normalized: str) -> tuple[str, bool]:
    """A pattern without its trailing `$`, and whether it had one."""
    anchored = normalized.endswith("$")
    return (normalized[:-1] if anchored else normalized), anchored


def index_rules(patterns: Sequence[str]) -> RuleList | RuleIndex:
    """A precedence lookup over normalized patterns given best first."""
    return RuleList(patterns) if len(patterns) <= FEW else RuleIndex(patterns)


class RuleList:
    """Precedence lookup that tries each pattern in turn, for groups of `FEW` rules or fewer.

    `best(path)` is the position of the first pattern that matches, or the number of
    patterns when none does.
    """

    def __init__(self, patterns: Sequence[str]):
        entries = []
        for rank, normalized in enumerate(patterns):
            body, anchored = _anchored_body(normalized)
            entries.append((rank, body, anchored, tuple(body.split("*")) if "*" in body else None))
        self._entries = tuple(entries)
        self._none = len(entries)

    def best(self, path: str) -> int:
        for rank, body, anchored, pieces in self._entries:
            if pieces is None:
                if (path == body) if anchored else path.startswith(body):
                    return rank
            elif _wildcard_matches(pieces, anchored, path):
                return rank
        return self._none


class RuleIndex:
    """Precedence lookup over non-empty patterns given in precedence order (best first).

    `best(path)` is the position of the first pattern, in that order, that matches
    the (normalized, so ASCII) path, or the number of patterns when none does.
    """

    def __init__(self, patterns: Sequence[str]):
        self._none = len(patterns)  # no match ranks after every pattern: comparisons need no special case
        exact: dict[str, int] = {}
        prefixes: dict[str, int] = {}
        # bucket ("" for heads shorter than one) -> (rank, body, anchored) of its patterns with `*`
        wildcards: defaultdict[str, list[tuple[int, str, bool]]] = defaultdict(list)
        # Last rank first, so where two patterns are the same the better rank is the one left.
        for rank in range(len(patterns) - 1, -1, -1):
            normalized = patterns[rank]
            if "*" in normalized:
                start = normalized[:BUCKET]
                wildcards["" if "*" in start else start].append((rank, *_anchored_body(normalized)))
            elif normalized[-1] == "$":
                exact[normalized[:-1]] = rank
            else:
                prefixes[normalized] = rank
        self._exact, self._prefixes, self._wildcards = exact, prefixes, wildcards
        # Sorted, the prefixes of a bucket lie together; sorting is one C call, where filing
        # each prefix under its bucket would be a Python step per prefix.
        self._sorted_prefixes = sorted(prefixes)
        self._any_bucket = _prepare(wildcards.pop("", ()))
        self._buckets: dict[str, _Bucket] = {}

    def best(self, path: str) -> int:
        start = path[:BUCKET]
        bucket = self._buckets.get(start)
        if bucket is None:
            # Normalized paths are ASCII, so a few thousand starts at most are ever added.
            bucket = self._buckets[start] = self._bucket(start)
        lengths, best, wildcards, wide = bucket
        prefixes = self._prefixes
        # Longest first; a length beyond the path slices the whole path, which can only
        # find the match its own length would.
        for length in lengths:
            rank = prefixes.get(path[:length])
            if rank is not None:
                best = rank
                break
        if self._exact:
            rank = self._exact.get(path, best)
            if rank < best:
                best = rank
        for rank, needle, pieces, anchored in wildcards:
            if rank > best:
                break
            if needle in path and _wildcard_matches(pieces, anchored, path):
                best = rank
                break
        for together in wide:
            best = together.best(path, best)
        return best

    def _bucket(self, start: str) -> _Bucket:
        """For paths beginning with `start`: the lengths of plain prefixes to probe, longest
        first; the best plain prefix shorter than a bucket (it matches them all); the
        wildcards to try one by one, and those matched together."""
        lengths: tuple[int, ...] = ()
        if len(start) == BUCKET:
            ordered = self._sorted_prefixes
            low = bisect_left(ordered, start)
            # DEL sorts after every character of a normalized pattern.
            high = bisect_left(ordered, start + "\x7f", low)
            if high > low:
                lengths = tuple(sorted(set(map(len, ordered[low:high])), reverse=True))
        # With buckets of two characters, one length is shorter: the first character.
        best = self._prefixes.get(start[:1], self._none)
        wildcards = self._any_bucket
        own = self._wildcards.get(start)
        if own is not None:
            wildcards = _prepare(own, wildcards)
        return (lengths, best, *wildcards)


# Wildcards to try one by one, in precedence order, as (rank, needle, pieces, anchored); the
# needle is the longest piece after the head: most paths lack it, and `in` tells so without a
# call. Then the sets of wildcards matched together.
_Wildcards = tuple[tuple[int, str, tuple[str, ...], bool], ...]
_Prepared = tuple[_Wildcards, tuple["WildcardSet", ...]]
_Bucket = tuple[tuple[int, ...], int, _Wildcards, tuple["WildcardSet", ...]]


def _prepare(wildcards: Sequence[tuple[int, str, bool]], also: _Prepared = ((), ())) -> _Prepared:
    tried, together = also
    if len(wildcards) > MANY:
        return tried, (*together, WildcardSet(wildcards))
    entries = list(tried)
    for rank, body, anchored in wildcards:
        pieces = tuple(body.split("*"))
        entries.append((rank, max(pieces[1:], key=len), pieces, anchored))
    entries.sort()
    return tuple(entries), together


class WildcardSet:
    """Many wildcard patterns of one bucket, matched together: one pass over the path.

    A pattern is its head (a prefix of the path), then pieces found one after another
    at their leftmost places (as `_wildcard_matches` does), then for an anchored pattern
    a tail that must end the path. Patterns that share a head and leading pieces share
    a trie node, whose place in the path is the same for all of them.

    A decision scans the path once with an Aho-Corasick automaton of every distinct
    piece, noting where each occurs; then it walks the trie from the heads that begin
    the path, each node reached once, a child's place found by bisection among its
    piece's occurrences. Per decision that is O(n·d + S·log n) for a path of n octets,
    d distinct piece lengths (at most the square root of twice the pieces' total size)
    and S the size of the trie, whatever the number of patterns: no pattern is tried
    on its own.
    """

    def __init__(self, wildcards: Sequence[tuple[int, str, bool]]):
        self._heads: dict[str, int] = {}
        children: list[dict[str, int]] = []
        ends: list[list[tuple[int, str | None]]] = []  # per node: (rank, tail of an anchored pattern)
        for rank, body, anchored in wildcards:
            pieces = body.split("*")
            node = self._heads.get(pieces[0])
            if node is None:
                node = self._heads[pieces[0]] = len(children)
                children.append({})
                ends.append([])
            for piece in pieces[1:-1] if anchored else pieces[1:]:
                if piece:  # an empty piece matches where the previous one ended
                    child = children[node].get(piece)
                    if child is None:
                        child = children[node][piece] = len(children)
                        children.append({})
                        ends.append([])
                    node = child
            ends[node].append((rank, pieces[-1] if anchored else None))
        # The best rank under each node; children are numbered after their parent.
        below = [min((rank for rank, _ in own), default=_NEVER) for own in ends]
        for node in range(len(children) - 1, -1, -1):
            for child in children[node].values():
                if below[child] < below[node]:
                    below[node] = below[child]
        self._children, self._ends, self._below = children, ends, below
        self._head_lengths = sorted({len(head) for head in self._heads})
        self._best_head = min((below[node] for node in self._heads.values()), default=_NEVER)
        self._automaton = _Automaton({piece for node in children for piece in node})

    def best(self, path: str, best: int) -> int:
        """The better of `best` and the best rank of a pattern here that matches `path`."""
        if self._best_head >= best:
            return best
        heads = self._heads
        reached = [
            (heads[path[:length]], length)
            for length in self._head_lengths
            if length <= len(path) and path[:length] in heads
        ]
        if not reached:
            return best
        occurrences = self._automaton.occurrences(path)
        children, ends, below = self._children, self._ends, self._below
        while reached:
            node, place = reached.pop()
            if below[node] >= best:
                continue
            for rank, tail in ends[node]:
                if rank < best and (tail is None or (len(path) - len(tail) >= place and path.endswith(tail))):
                    best = rank
            kids = children[node]
            # Whichever is fewer: the node's pieces, or the pieces the path holds at all.
            pairs = (
                ((piece, kids[piece]) for piece in occurrences if piece in kids)
                if len(kids) > len(occurrences)
                else ((piece, child) for piece, child in kids.items() if piece in occurrences)
            )
            for piece, child in pairs:
                if below[child] >= best:
                    continue
                starts = occurrences[piece]
                found = bisect_left(starts, place)
                if found < len(starts):
                    reached.append((child, starts[found] + len(piece)))
        return best


_NEVER = 1 << 62  # ranks beyond any group's rules


class _Automaton:
    """Aho-Corasick over a set of non-empty strings: where each occurs in a text, in one pass."""

    def __init__(self, words: set[str]):
        goto: list[dict[str, int]] = [{}]
        word: list[str | None] = [None]
        for text in words:
            state = 0
            for char in text:
                following = goto[state].get(char)
                if following is None:
                    following = goto[state][char] = len(goto)
                    goto.append({})
                    word.append(None)
                state = following
            word[state] = text
        fail = [0] * len(goto)
        report = [0] * len(goto)  # the next state along the failure links that ends a word
        queue = list(goto[0].values())
        for state in queue:  # breadth first: a state's failure lies nearer the root
            for char, following in goto[state].items():
                back = fail[state]
                while back and char not in goto[back]:
                    back = fail[back]
                target = goto[back].get(char, 0)
                fail[following] = target if target != following else 0
                report[following] = fail[following] if word[fail[following]] is not None else report[fail[following]]
                queue.append(following)
        self._goto, self._word, self._fail, self._report = goto, word, fail, report

    def occurrences(self, text: str) -> dict[str, list[int]]:
        """Each word found in `text`, with its start positions in increasing order."""
        goto, word, fail, report = self._goto, self._word, self._fail, self._report
        found: dict[str, list[int]] = {}
        state = 0
        for end, char in enumerate(text, start=1):
            following = goto[state].get(char)
            while following is None and state:
                state = fail[state]
                following = goto[state].get(char)
            state = following or 0
            hit = state if word[state] is not None else report[state]
            while hit:
                match = word[hit]
                found.setdefault(match, []).append(end - len(match))
                hit = report[hit]
        return found
