"""Fields of a log line as written -> as audited (`matcher.logformats.fields`): escapes undone, the
request line split, the target's path and authority, the line's blanks and byte order mark."""
from __future__ import annotations

import pytest

from matcher.logformats.fields import cleaned_line, encodable, request_line, target_path, unescaped_text
from matcher.logformats.record import LogParseError


def reason(call, *args, **kwargs) -> str:
    with pytest.raises(LogParseError) as caught:
        call(*args, **kwargs)
    return caught.value.reason


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("plain ascii", "plain ascii"),
        ("café ☃", "café ☃"),
        ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
        ("\udcff", "\\udcff"),
    ],
)
def test_encodable_spells_lone_surrogates_as_escapes_and_keeps_the_rest(text, written):
    assert encodable(text) == written
    encodable(text).encode("utf-8")  # what a UTF-8 writer takes


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("no escapes at all", "no escapes at all"),
        (r"say \"hi\"", 'say "hi"'),
        (r"back\\slash", "back\\slash"),
        (r"tab\there", "tab\there"),
        (r"\x22quoted\x22", '"quoted"'),
        (r"caf\xC3\xA9", "café"),  # escaped UTF-8 bytes are the text they spell
        (r"broken \xFF byte", "broken \\xff byte"),  # a byte that is not UTF-8 stays visible
        (r"unknown \q escape", r"unknown \q escape"),
    ],
)
def test_unescaped_text_undoes_apache_and_nginx_escapes(field, text):
    assert unescaped_text(field) == text


@pytest.mark.parametrize(
    ("line", "split"),
    [
        ("GET /a?b=1 HTTP/1.1", ("GET", "/a?b=1")),
        ("HEAD /robots.txt HTTP/2.0", ("HEAD", "/robots.txt")),
        ("GET /old", ("GET", "/old")),  # HTTP/0.9 has no version
        ("GET /a b HTTP/1.1", ("GET", "/a b")),  # a space inside the target
        ("GET /a b", ("GET", "/a b")),
        ("PROPFIND http://x.test/ HTTP/1.1", ("PROPFIND", "http://x.test/")),
        (r"GET /caf\xC3\xA9 HTTP/1.1", ("GET", "/café")),
        (r"GET /caf\xE9 HTTP/1.1", ("GET", "/caf%E9")),  # not UTF-8: escaped as normalization would
        (r"GET /a\"b HTTP/1.1", ("GET", '/a"b')),
    ],
)
def test_request_line_splits_method_and_target(line, split):
    assert request_line(line) == split


def test_a_json_request_line_is_taken_as_written():
    assert request_line(r"GET /a\x41 HTTP/1.1", escaped=False) == ("GET", r"/a\x41")


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("-", "no-request"),
        ("", "no-request"),
        ("\x16\x03\x01\x02\x00", "not-http"),
        (r"\x16\x03\x01\x02\x00", "not-http"),
        ("G(T / HTTP/1.1", "not-http"),
        ("GET", "bad-request-line"),
        ("GET  /a HTTP/1.1", "bad-request-line"),
    ],
)
def test_what_is_no_request_line_says_why(line, code):
    assert reason(request_line, line) == code


def test_a_tls_handshake_is_named_in_the_message():
    with pytest.raises(LogParseError, match="a TLS handshake sent to a plain-HTTP port"):
        request_line(r"\x16\x03\x01\x02\x00")


@pytest.mark.parametrize(
    ("target", "path", "authority"),
    [
        ("/a?b=1", "/a?b=1", None),
        ("//x.test/a", "//x.test/a", None),  # origin form: a path, not a host
        ("http://WWW.Example.com:8080/p?q", "/p?q", "WWW.Example.com:8080"),
        ("HTTPS://user:pw@x.test/p", "/p", "x.test"),
        ("https://x.test", "/", "x.test"),
        ("https://x.test?q=1", "/?q=1", "x.test"),
        ("http://[2001:db8::1]:443/p", "/p", "[2001:db8::1]:443"),
    ],
)
def test_target_path_of_origin_and_absolute_forms(target, path, authority):
    assert target_path(target) == (path, authority)


@pytest.mark.parametrize(("target", "why"), [("*", "asterisk-form"), ("x.test:443", "authority-form"), ("[::1]:80", "authority-form")])
def test_asterisk_and_authority_forms_say_what_they_are(target, why):
    assert reason(target_path, target) == why


@pytest.mark.parametrize("target", ["ftp://x.test/f", "http://", "http:///p", "https://user@/p", "a/b"])
def test_a_target_that_is_neither_a_path_nor_an_http_url_is_a_bad_target(target):
    assert reason(target_path, target) == "bad-target"


@pytest.mark.parametrize(
    ("line", "cleaned"),
    [
        ("  a line \r\n", "a line"),
        ("\ufeffa line", "a line"),
        ("\ufeff  a line", "a line"),
        ("a \ud800 line", "a \\ud800 line"),
    ],
)
def test_cleaned_line_drops_blanks_line_endings_and_a_byte_order_mark(line, cleaned):
    assert cleaned_line(line) == cleaned


@pytest.mark.parametrize("line", ["", "\n", " \t\r\n", "\ufeff", "\ufeff \n"])
def test_a_blank_line_is_an_error(line):
    assert reason(cleaned_line, line) == "blank"


# ------------------------------------------------------------ signature headers as each format writes them

from matcher.logformats.fields import apache_header, nginx_header, w3c_header, w3c_signature_header  # noqa: E402

SIGNATURE_AGENT = '"https://chatgpt.com"'
SIGNATURE_INPUT = 'sig1=("@authority" "signature-agent");created=1735689600;keyid="k\\1";tag="web-bot-auth"'
SIGNATURE = "sig1=:u+/9kw==:, sig2=:ab+c:"


def test_each_formats_escaping_is_undone_byte_for_byte():
    # nginx (escape=default): `"`, `\` and non-ASCII bytes as \xHH
    assert nginx_header(r"\x22https://chatgpt.com\x22") == SIGNATURE_AGENT
    assert nginx_header(SIGNATURE_INPUT.replace("\\", r"\x5C").replace('"', r"\x22")) == SIGNATURE_INPUT
    assert nginx_header(r"caf\xC3\xA9 \n") == "café \\n"  # a backslash nginx did not write stays
    # Apache: \" and \\, \xHH for other bytes
    assert apache_header(r"\"https://chatgpt.com\"") == SIGNATURE_AGENT
    assert apache_header(SIGNATURE_INPUT.replace("\\", "\\\\").replace('"', '\\"')) == SIGNATURE_INPUT
    # W3C: spaces as +, but + inside a base64 byte sequence is a digit
    assert w3c_header(SIGNATURE_INPUT.replace(" ", "+")) == SIGNATURE_INPUT
    assert w3c_signature_header(SIGNATURE.replace(" ", "+")) == SIGNATURE
    assert {nginx_header("-"), apache_header(""), w3c_header("-"), w3c_signature_header("-")} == {None}
