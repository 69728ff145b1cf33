"""Slow, obviously correct references for robots.txt normalization and matching, and the
strategies that draw paths and patterns for them: the property tests of `matcher.normalize`,
`matcher.matching` and `matcher.robots` hold the fast code to these."""
from __future__ import annotations

from hypothesis import strategies as st

UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"


def reference_normalize(text: str) -> str:
    """A path, byte by byte, exactly as docs/semantics.md § robots.txt words it."""
    data = text.encode("utf-8", "surrogatepass")
    out, i = [], 0
    while i < len(data):
        octet = data[i]
        escape = data[i + 1 : i + 3]
        if octet == 0x25 and len(escape) == 2 and all(c in b"0123456789abcdefABCDEF" for c in escape):
            value = int(escape, 16)
            out.append(chr(value) if chr(value) in UNRESERVED else "%" + escape.decode().upper())
            i += 3
        elif octet == 0x25:
            out.append("%25")
            i += 1
        elif octet <= 0x20 or octet >= 0x7F or chr(octet) in "*$":
            out.append(f"%{octet:02X}")
            i += 1
        else:
            out.append(chr(octet))
            i += 1
    return "".join(out)


def reference_normalize_pattern(pattern: str) -> str:
    """A pattern, character by character: `*` and a final `$` kept, the rest as in a path."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    out, piece = [], []
    for char in body + "*":
        if char == "*":
            out.append(reference_normalize("".join(piece)))
            piece = []
        else:
            piece.append(char)
    return "*".join(out) + ("$" if anchored else "")


def reference_matches(pattern: str, path: str) -> bool:
    """Set-of-positions simulation: `*` may consume anything, trailing `$` anchors."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    positions = {0}
    for char in body:
        if char == "*":
            positions = set(range(min(positions), len(path) + 1)) if positions else set()
        else:
            positions = {i + 1 for i in positions if i < len(path) and path[i] == char}
    return len(path) in positions if anchored else bool(positions)


def reference_allowed(rules: list[tuple[str, str]], path: str) -> bool:
    path = reference_normalize(path)
    normalized = [(kind, reference_normalize_pattern(p)) for kind, p in rules]
    matching = [(len(p), kind == "allow") for kind, p in normalized if p and reference_matches(p, path)]
    return max(matching)[1] if matching else True


def literal_unreserved(path: str) -> list[bool]:
    """Which characters are unreserved and not part of an existing escape."""
    flags = [False] * len(path)
    i = 0
    while i < len(path):
        escape = path[i + 1 : i + 3]
        if path[i] == "%" and len(escape) == 2 and all(c in "0123456789abcdefABCDEF" for c in escape):
            i += 3
            continue
        flags[i] = path[i] in UNRESERVED
        i += 1
    return flags


path_pieces = st.sampled_from(
    ["/", "a", "b", "~", "%7E", "%7e", "%2F", "%2f", "%41", "%", "é", " ", "$", "*", "%24", "%2a", ".", "-", "?", "="]
)
# A raw space cannot end a pattern (values are trimmed), so patterns spell it %20.
pattern_pieces = st.one_of(path_pieces.filter(lambda piece: piece != " "), st.sampled_from(["*", "%20"]))
paths = st.lists(path_pieces, max_size=12).map(lambda parts: "/" + "".join(parts))
patterns = st.tuples(st.sampled_from(["/", "*"]), st.lists(pattern_pieces, max_size=8), st.booleans()).map(
    lambda t: t[0] + "".join(t[1]) + ("$" if t[2] else "")
)
rules = st.lists(st.tuples(st.sampled_from(["allow", "disallow"]), patterns), min_size=1, max_size=6)


# Wildcard pattern bodies: one of `heads`, then a `*` and pieces joined by `*` (no final `$`).
def wildcard_bodies_from(heads: list[str]) -> st.SearchStrategy[str]:
    return st.tuples(
        st.sampled_from(heads),
        st.lists(st.sampled_from(["a", "b", "ab", "ba", "aa", "/", ""]), min_size=1, max_size=5),
    ).map(lambda t: t[0] + "*" + "*".join(t[1]))


wildcard_bodies = wildcard_bodies_from(["", "/", "/a", "/ab"])
many_wildcards = st.lists(st.tuples(wildcard_bodies, st.booleans()), min_size=1, max_size=48)
wildcard_paths = st.text(alphabet="/ab", max_size=24).map(lambda text: "/" + text)
