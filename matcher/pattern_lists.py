"""A long list of User-Agent patterns searched as one alternation, answered exactly as that
alternation answers, without running all of it over every header.

Python's `re` tries every alternative of an alternation at every position of the text, so a list
of thousands of patterns costs in proportion to both: milliseconds for a header of a few hundred
characters, tens of milliseconds for one of 2,048, paid once per distinct header. Each part of a
`PatternList` carries literal texts one of which every match of the part contains, read from its
parsed form. A header is searched only by the parts one of whose literals it holds: that gives
the leftmost position where any part matches, which is where the alternation's own search would
stop first, and the alternation is matched there alone, so the match is the very one its search
would return.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from re import _constants as sre
from re import _parser as sre_parse

# A literal is looked up by its first `_KEY` characters (all of it when shorter); none is
# shorter than `SHORTEST_LITERAL`, so a header's runs of two and three characters find them all.
SHORTEST_LITERAL = 2
_KEY = 3
# (literal, compared case-insensitively); an empty set: no match on text of ASCII characters.
Literals = frozenset[tuple[str, bool]]
_NONE_IN_ASCII: Literals = frozenset()
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


class PatternList:
    """`alternation` compiled, searched through its `parts`.

    The parts must be the alternation's alternatives in this sense: the alternation matches at a
    position exactly when one of the parts does (`a|b|c` and its parts, or `X(?:a|b)` and `Xa`,
    `Xb`). A part from which no literal is read is searched on every header; a header with
    characters beyond ASCII is searched by the alternation itself, since case-insensitive
    matching there is not a matter of lower-casing."""

    def __init__(self, alternation: str, parts: Sequence[str]):
        self.pattern = re.compile(alternation)
        self.parts = tuple(parts)
        literals = [required_literals(part, self.pattern.flags) for part in self.parts]
        self._always = tuple(index for index, found in enumerate(literals) if found is None)
        self._by_start: dict[str, list[tuple[str, bool, int]]] = {}
        for index, found in enumerate(literals):
            for literal, folded in found or ():
                key = literal[:_KEY].lower()
                self._by_start.setdefault(key, []).append((literal.lower() if folded else literal, folded, index))
        self._compiled: dict[int, re.Pattern[str]] = {}

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_compiled"] = {}  # compiled again where needed
        return state

    def search(self, text: str) -> re.Match[str] | None:
        """`self.pattern.search(text)`."""
        if not text.isascii():
            return self.pattern.search(text)
        starts = [
            match.start() for match in (self._part(index).search(text) for index in self._candidates(text)) if match
        ]
        return self.pattern.match(text, min(starts)) if starts else None

    def _candidates(self, text: str) -> Iterable[int]:
        """The parts that may match `text`: those one of whose literals it holds, and those
        without literals."""
        lowered = text.lower()
        starts = {lowered[i : i + size] for size in range(SHORTEST_LITERAL, _KEY + 1) for i in range(len(lowered) - size + 1)}
        found = set(self._always)
        for start in starts & self._by_start.keys():
            for literal, folded, index in self._by_start[start]:
                if index not in found and literal in (lowered if folded else text):
                    found.add(index)
        return found

    def _part(self, index: int) -> re.Pattern[str]:
        compiled = self._compiled.get(index)
        if compiled is None:
            compiled = self._compiled[index] = re.compile(self.parts[index], self.pattern.flags)
        return compiled


def required_literals(pattern: str, flags: int = 0) -> Literals | None:
    """Literal texts of at least `SHORTEST_LITERAL` characters, one of which is in every match of
    `pattern` on text of ASCII characters (compared case-insensitively where the pattern is);
    an empty set when it cannot match such text; None when no such set is read from it."""
    parsed = sre_parse.parse(pattern, flags)
    return _needed(parsed.data, bool(parsed.state.flags & re.IGNORECASE))


def _needed(items, folded: bool) -> Literals | None:
    """`required_literals` of a sequence of parsed items: the best of what its runs of literal
    characters and its required sub-patterns each require."""
    options: list[Literals] = []
    run: list[str] = []

    def end_run() -> None:
        if len(run) >= SHORTEST_LITERAL:
            options.append(frozenset({("".join(run), folded)}))
        run.clear()

    for op, argument in items:
        if op is sre.LITERAL:
            if argument < 128:
                run.append(chr(argument))
                continue
            if not folded or not _folds_into_ascii(chr(argument)):
                return _NONE_IN_ASCII
        end_run()
        required = _required_by(op, argument, folded)
        if required is not None:
            options.append(required)
    end_run()
    return max(options, key=_selectivity) if options else None


def _required_by(op, argument, folded: bool) -> Literals | None:
    """What one item requires of every match: a group's or a repeated item's own requirement,
    any of a branch's; nothing known of others (classes, anchors, look-arounds, optional items)."""
    if op is sre.SUBPATTERN:
        _, added, removed, body = argument
        return _needed(body.data, (folded or bool(added & re.IGNORECASE)) and not removed & re.IGNORECASE)
    if op is sre.ATOMIC_GROUP:
        return _needed(argument.data, folded)
    if op in _REPEATS and argument[0] >= 1:
        return _needed(argument[2].data, folded)
    if op is sre.BRANCH:
        branches = [_needed(branch.data, folded) for branch in argument[1]]
        if any(branch is None for branch in branches):
            return None
        return frozenset().union(*branches)
    return None


def _selectivity(literals: Literals) -> tuple[bool, int, int]:
    """Higher for a requirement fewer texts meet: none at all, then longer literals, then fewer."""
    return (not literals, min((len(literal) for literal, _ in literals), default=0), -len(literals))


@functools.cache
def _folds_into_ascii(character: str) -> bool:
    """Whether `re` matches this character case-insensitively against an ASCII one (the long
    s against `s`, the Kelvin sign against `k`)."""
    pattern = re.compile(re.escape(character), re.IGNORECASE)
    return any(pattern.fullmatch(chr(code)) for code in range(128))
