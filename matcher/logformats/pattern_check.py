"""A static check of a compiled line pattern: no two unbounded groups whose character classes
overlap may follow each other without a literal between them, and nothing outside the subset of
regular expressions every engine runs in linear time (no backreferences, no lookarounds).

Two such groups side by side (`\\S+\\S+`) leave the line no single way to be split: the engine
tries every split, a long line costs time in its square or worse, and a normal line may be split
in the wrong place (a host taking the path). A literal, a bounded run (`\\d{1,20}`) or a group whose
class cannot hold the next group's first character ends a group in one place.

Character classes are compared over the first 256 code points and three beyond: the patterns are
compiled with re.ASCII, under which every code point above 127 behaves as any other.
"""
from __future__ import annotations

import re
from re import _constants as C  # noqa: N812 - the parser's own node names
from re import _parser

__all__ = ["AmbiguousPattern", "check_pattern", "first_characters", "last_characters"]

_ALPHABET = tuple(chr(code) for code in range(256)) + ("\u0100", "\u2028", "\U0001f600")
_CATEGORY_PATTERNS = {
    C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W",
}
_CATEGORIES = {
    name: frozenset(c for c in _ALPHABET if re.fullmatch(text, c, re.ASCII))
    for name, text in _CATEGORY_PATTERNS.items()
}
_SINGLE = (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN)
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", C.MAX_REPEAT))
_TRANSPARENT = (C.AT,)


class AmbiguousPattern(ValueError):
    """A pattern the check refuses, with the part that makes it so."""


def check_pattern(pattern: str, flags: int = re.ASCII | re.DOTALL) -> None:
    """Raise AmbiguousPattern when `pattern` holds two overlapping unbounded groups with no literal
    between them, or a construct outside the linear-time subset."""
    _Walk(flags).sequence(list(_parser.parse(pattern, flags)), frozenset())


def _class(op, argument, flags: int) -> frozenset[str]:
    """The characters one single-character node matches."""
    if op == C.LITERAL:
        return frozenset({chr(argument)})
    if op == C.NOT_LITERAL:
        return frozenset(_ALPHABET) - {chr(argument)}
    if op == C.ANY:
        return frozenset(_ALPHABET) if flags & re.DOTALL else frozenset(_ALPHABET) - {"\n"}
    members: set[str] = set()
    negate = False
    for item_op, item in argument:
        if item_op == C.NEGATE:
            negate = True
        elif item_op == C.LITERAL:
            members.add(chr(item))
        elif item_op == C.RANGE:
            members.update(c for c in _ALPHABET if item[0] <= ord(c) <= item[1])
        elif item_op == C.CATEGORY:
            members |= _CATEGORIES[item]
        else:
            raise AmbiguousPattern(f"a character class holds {item_op}, which the check does not read")
    return frozenset(_ALPHABET) - members if negate else frozenset(members)


class _Walk:
    """Walks a parsed pattern from its end, carrying the unbounded groups that may come next with
    nothing consumed in between (`follow`: their classes)."""

    def __init__(self, flags: int) -> None:
        self.flags = flags

    def sequence(self, nodes: list, follow: frozenset) -> frozenset:
        """Check `nodes` followed by `follow`; the unbounded classes that may start them (with
        `follow` itself when every node may match nothing)."""
        for op, argument in reversed(nodes):
            follow = self.node(op, argument, follow)
        return follow

    def node(self, op, argument, follow: frozenset) -> frozenset:
        if op in _SINGLE:
            return frozenset()
        if op in _TRANSPARENT:
            return follow
        if op == C.SUBPATTERN:
            return self.sequence(list(argument[-1]), follow)
        if op == C.BRANCH:
            starts = frozenset()
            for branch in argument[1]:
                starts |= self.sequence(list(branch), follow)
            return starts
        if op in _REPEATS:
            low, high, body = argument
            body = list(body)
            if high == C.MAXREPEAT and len(body) == 1 and body[0][0] in _SINGLE:
                own = _class(*body[0], self.flags)
                for later in follow:
                    if own & later:
                        raise AmbiguousPattern(
                            f"two unbounded groups that can both hold {_shown(own & later)} follow each "
                            "other with no literal between them"
                        )
                return frozenset({own}) | (follow if low == 0 else frozenset())
            # a repeated group is followed by its own start as well as by what comes after it
            inner_follow = follow
            if high > 1:
                inner_follow = follow | self.sequence(body, follow)
            starts = self.sequence(body, inner_follow)
            return starts | follow if low == 0 else starts
        raise AmbiguousPattern(f"the pattern uses {op}, outside the subset every engine runs in linear time")


def _shown(characters: frozenset[str]) -> str:
    ascii_members = sorted(c for c in characters if c < "\x80")
    if len(ascii_members) > 12:
        return f"{len(characters)} characters"
    return repr("".join(ascii_members))


def first_characters(pattern: str, flags: int = re.ASCII | re.DOTALL) -> frozenset[str]:
    """The characters a non-empty match of `pattern` may begin with."""
    return _ends(list(_parser.parse(pattern, flags)), flags, backwards=False)[0]


def last_characters(pattern: str, flags: int = re.ASCII | re.DOTALL) -> frozenset[str]:
    """The characters a non-empty match of `pattern` may end with."""
    return _ends(list(_parser.parse(pattern, flags)), flags, backwards=True)[0]


def _ends(nodes: list, flags: int, backwards: bool) -> tuple[frozenset[str], bool]:
    """The characters at one end of what `nodes` match, and whether they may match nothing."""
    characters: frozenset[str] = frozenset()
    for op, argument in reversed(nodes) if backwards else nodes:
        if op in _SINGLE:
            return characters | _class(op, argument, flags), False
        if op in _TRANSPARENT:
            continue
        if op == C.SUBPATTERN:
            own, nullable = _ends(list(argument[-1]), flags, backwards)
        elif op == C.BRANCH:
            parts = [_ends(list(branch), flags, backwards) for branch in argument[1]]
            own = frozenset().union(*(part for part, _ in parts))
            nullable = any(empty for _, empty in parts)
        elif op in _REPEATS:
            own, nullable = _ends(list(argument[2]), flags, backwards)
            nullable = nullable or argument[0] == 0
        else:
            raise AmbiguousPattern(f"the pattern uses {op}, outside the subset every engine runs in linear time")
        characters |= own
        if not nullable:
            return characters, False
    return characters, True
