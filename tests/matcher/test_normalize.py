"""Normalization and path extraction by example (properties are in test_properties.py)."""
from __future__ import annotations

import pytest

from matcher.normalize import normalize, normalize_pattern, request_path


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
