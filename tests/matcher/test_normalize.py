"""Normalization and path extraction: by example, and as properties against the byte-by-byte
reference of tests/robots_reference.py."""
from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from matcher.normalize import normalize, normalize_pattern, normalized_request_path, request_path
from robots_reference import reference_normalize, reference_normalize_pattern


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("/%7euser/", "/~user/"),
        ("/a%2fb", "/a%2Fb"),
        ("/a%2Ab", "/a%2Ab"),
        ("/caf\u00e9", "/caf%C3%A9"),
        (b"/caf\xe9", "/caf%E9"),  # not UTF-8: the byte itself is escaped
        ("/100%", "/100%25"),
        ("/%zz", "/%25zz"),
        ("/a b", "/a%20b"),
        ("/%41%42", "/AB"),
        ("/file-with-a-*.html", "/file-with-a-%2A.html"),  # RFC 9309 Figure 6
        ("/foo-$", "/foo-%24"),
        ("/%2a%24", "/%2A%24"),
    ],
)
def test_normalize_examples(raw, expected):
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("/*.php$", "/*.php$"),  # wildcard and final anchor keep their meaning
        ("/a$b", "/a%24b"),  # a `$` before the end is a literal octet
        ("/a$b$", "/a%24b$"),
        ("/a$$", "/a%24$"),
        ("/%7e*%2a", "/~*%2A"),  # %2A stays an octet, never a wildcard
        ("*caf\u00e9*", "*caf%C3%A9*"),
        ("$", "$"),
    ],
)
def test_normalize_pattern_examples(raw, expected):
    assert normalize_pattern(raw) == expected
    assert normalize_pattern(expected) == expected


@pytest.mark.parametrize(
    "url, path",
    [
        ("", "/"),
        ("/a#frag", "/a"),
        ("/a?b=1", "/a?b=1"),
        ("http://x.test", "/"),
        ("http://x.test?q", "/?q"),
        ("http://x.test/a?b#c", "/a?b"),
        ("https://user@x.test:8080/p;params", "/p;params"),
        ("http://x.test#f/not-a-path", "/"),
        ("//x.test/p", "/p"),  # scheme-relative: x.test is a host
        ("x.test/p", "/p"),
        ("/a://b", "/a://b"),
        ("?q", "/?q"),
    ],
)
def test_request_path(url, path):
    assert request_path(url) == path


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
