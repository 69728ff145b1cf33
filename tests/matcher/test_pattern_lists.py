import pickle
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config.bot_lists import maintained_automated_list, maintained_bot_list, maintained_browser_list
from matcher.pattern_lists import PatternList, required_literals


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        ("FooBot", {("FooBot", False)}),
        ("(?i:abcd)x+yz", {("abcd", True)}),
        ("a(?:bc|de)f", {("bc", False), ("de", False)}),
        ("x?abc", {("abc", False)}),
        ("[ab]cd", {("cd", False)}),
        ("(?:ab)+c", {("ab", False)}),
        ("(?i)Spider", {("Spider", True)}),
        # not on ASCII text: a letter that no ASCII one matches, case aside
        ("Яндекс", set()),
        ("(?i)Яндекс|[a-z]+ bot", {(" bot", True)}),
        # the long s and the Kelvin sign match `s` and `k` case-insensitively: they end a literal
        ("(?i)\u017fomething", {("omething", True)}),
        ("(?i)bac\u212aup", {("bac", True)}),
    ],
)
def test_the_literals_every_match_holds(pattern, literals):
    assert required_literals(pattern) == frozenset(literals)


@pytest.mark.parametrize("pattern", ["(?:abc)?d", "[a-z]+", "^x", "a.b", "(?=abc)"])
def test_no_literal_is_read_where_none_is_required(pattern):
    assert required_literals(pattern) is None


def _same(found, expected) -> bool:
    return (found and (found.span(), found.group())) == (expected and (expected.span(), expected.group()))


@pytest.mark.parametrize(
    ("alternation", "parts", "text"),
    [
        ("abc|b", ["abc", "b"], "xbc abc"),  # the leftmost match is a later part's
        ("a|ab", ["a", "ab"], "ab"),  # at one position, the alternation's order decides
        ("xy(?:ab|abcd)", ["xyab", "xyabcd"], "--xyabcd"),
        ("[0-9]+x|zz", ["[0-9]+x", "zz"], "12x zz"),  # a part without literals
        ("(?i:s)x", ["(?i:s)x"], "\u017fx"),  # beyond ASCII, the alternation itself
        ("abc", ["abc"], "nothing here"),
    ],
)
def test_a_list_finds_what_its_alternation_finds(alternation, parts, text):
    listed = PatternList(alternation, parts)
    assert _same(listed.search(text), listed.pattern.search(text))


def test_a_list_pickles_without_its_compiled_parts():
    listed = PatternList("foo|bar", ["foo", "bar"])
    assert listed.search("a bar").span() == (2, 5)
    copy = pickle.loads(pickle.dumps(listed))
    assert copy._compiled == {}
    assert copy.search("a foo").span() == (2, 5)


MAINTAINED = {
    "bots": maintained_bot_list,
    "automated": maintained_automated_list,
    "browsers": maintained_browser_list,
}


def _pieces():
    """Texts made of the lists' own literals, in any case, among other characters: the headers
    where a wrong part, or a wrong leftmost position, would show."""
    literals = sorted({literal for listed in MAINTAINED.values() for literal, _, _ in _entries(listed())})
    piece = st.one_of(
        st.sampled_from(literals),
        st.sampled_from(literals).map(str.upper),
        st.text(string.ascii_letters + string.digits + " ;/()+-_.:", max_size=6),
        st.sampled_from(["Mozilla/5.0 (", "; ", ") ", "Яндекс", "\u017f", "_", "-", "/"]),
    )
    return st.lists(piece, max_size=14).map("".join)


def _entries(listed: PatternList):
    return [entry for bucket in listed._by_start.values() for entry in bucket]


@settings(max_examples=400, deadline=None)
@given(text=_pieces())
def test_the_maintained_lists_find_what_their_alternations_find(text):
    for make in MAINTAINED.values():
        listed = make()
        assert _same(listed.search(text), listed.pattern.search(text)), text


def test_every_part_of_the_maintained_lists_has_literals():
    """A part without literals is searched over every header: none is, so a header costs
    only the parts whose literals it holds."""
    for name, make in MAINTAINED.items():
        assert make()._always == (), name
