"""Property tests: normalization and matching against slow, obviously correct references."""
from __future__ import annotations

import ipaddress

from hypothesis import example, given, settings
from hypothesis import strategies as st

from matcher import robots
from matcher.addresses import parse_ip
from matcher.matching import MANY, WildcardSet
from matcher.normalize import normalize, normalize_pattern, normalized_request_path, request_path

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


def _literal_unreserved(path: str) -> list[bool]:
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


@given(st.text())
def test_normalize_is_idempotent(text):
    once = normalize(text)
    assert normalize(once) == once


@given(st.text())
def test_normalize_agrees_with_byte_reference(text):
    assert normalize(text) == reference_normalize(text)


@given(st.text())
def test_normalize_pattern_is_idempotent_and_agrees_with_reference(text):
    once = normalize_pattern(text)
    assert once == reference_normalize_pattern(text)
    assert normalize_pattern(once) == once
    assert "$" not in once[:-1]


@given(st.text(alphabet="/a*$%2A4"))
def test_a_normalized_path_holds_no_wildcard_or_anchor(text):
    assert not {"*", "$"} & set(normalize(text))


@given(st.binary())
def test_normalize_of_bytes_is_ascii(data):
    assert normalize(data).isascii()


url_starts = st.sampled_from(["", "/", "//", "http://", "https://", "s3://", "http:", "1http://"])
url_pieces = st.sampled_from(
    ["x.test", "/", "a", "@", ":", "?", ";", "#", "%", "%7e", "%2f", " ", "é", "\x7f", "$", "*", "%2a", '"', "(", "+"]
)


@settings(max_examples=500, deadline=None)
@example("http://x.test/a*b")
@example("https://x.test/$")
@given(st.tuples(url_starts, st.lists(url_pieces, max_size=10)).map(lambda parts: parts[0] + "".join(parts[1])))
def test_normalized_request_path_is_normalize_of_request_path(url):
    assert normalized_request_path(url) == normalize(request_path(url))


@settings(max_examples=300, deadline=None)
@given(rules, st.lists(paths, min_size=1, max_size=4))
def test_decisions_agree_with_reference(rule_list, path_list):
    body = "User-agent: *\n" + "".join(f"{kind}: {pattern}\n" for kind, pattern in rule_list)
    rf = robots.parse(body)
    # Twice over: the second round answers from what the first remembered.
    for path in path_list + path_list:
        if not robots.is_robots_txt(normalize(path)):
            assert rf.decide_path(("foobot",), path).allowed is reference_allowed(rule_list, path), path


@settings(max_examples=300, deadline=None)
@given(rules, paths, st.data())
def test_respelling_unreserved_characters_changes_nothing(rule_list, path, data):
    body = "User-agent: *\n" + "".join(f"{kind}: {pattern}\n" for kind, pattern in rule_list)
    rf = robots.parse(body)
    respelled = "".join(
        data.draw(st.sampled_from([c, f"%{ord(c):02x}", f"%{ord(c):02X}"])) if literal else c
        for c, literal in zip(path, _literal_unreserved(path))
    )
    assert rf.decide_path(("foobot",), respelled).allowed is rf.decide_path(("foobot",), path).allowed


# Many wildcard patterns in one bucket are matched together (`WildcardSet`), not one by one.
def _wildcard_bodies(heads: list[str]) -> st.SearchStrategy[str]:
    return st.tuples(
        st.sampled_from(heads),
        st.lists(st.sampled_from(["a", "b", "ab", "ba", "aa", "/", ""]), min_size=1, max_size=5),
    ).map(lambda t: t[0] + "*" + "*".join(t[1]))


wildcard_bodies = _wildcard_bodies(["", "/", "/a", "/ab"])
many_wildcards = st.lists(st.tuples(wildcard_bodies, st.booleans()), min_size=1, max_size=48)
wildcard_paths = st.text(alphabet="/ab", max_size=24).map(lambda text: "/" + text)


@settings(max_examples=500, deadline=None)
@given(many_wildcards, st.lists(wildcard_paths, min_size=1, max_size=5), st.integers(0, 48))
def test_wildcards_matched_together_agree_with_reference(patterns, path_list, limit):
    together = WildcardSet([(rank, body, anchored) for rank, (body, anchored) in enumerate(patterns)])
    for path in path_list:
        matching = [
            rank for rank, (body, anchored) in enumerate(patterns) if reference_matches(body + "$" * anchored, path)
        ]
        expected = min([limit, *matching])
        assert together.best(path, limit) == expected, (path, expected)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        # Heads shorter than a bucket: every pattern lands in the one bucket matched together.
        st.tuples(st.sampled_from(["allow", "disallow"]), st.tuples(_wildcard_bodies(["", "/"]), st.booleans())),
        min_size=MANY + 1,
        max_size=MANY + 24,
    ),
    st.lists(wildcard_paths, min_size=1, max_size=4),
)
def test_decisions_with_many_wildcards_agree_with_reference(drawn, path_list):
    rule_list = [(kind, body + "$" * anchored) for kind, (body, anchored) in drawn]
    body = "User-agent: *\n" + "".join(f"{kind}: {pattern}\n" for kind, pattern in rule_list)
    rf = robots.parse(body)
    for path in path_list:
        assert rf.decide_path(("foobot",), path).allowed is reference_allowed(rule_list, path), path


def reference_parse_ip(text: str):
    """A log field's address by `ipaddress` alone, as `parse_ip` defines it."""
    candidate = text.strip()
    if candidate.startswith("[") and candidate.endswith("]"):
        candidate = candidate[1:-1]
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


_octet_like = st.one_of(st.integers(0, 300).map(str), st.text("0123456789", max_size=4), st.sampled_from(["0x1", "٤", " 1", "1 ", ""]))


@settings(max_examples=2000)
@given(st.one_of(st.lists(_octet_like, min_size=1, max_size=6).map(".".join), st.text(max_size=20)))
@example("01.2.3.4")
@example("1.2.3.4\x00")
@example("[::ffff:1.2.3.4]")
def test_parse_ip_takes_the_addresses_ipaddress_takes(text):
    assert parse_ip(text) == reference_parse_ip(text)
