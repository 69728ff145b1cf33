"""One percent-encoding normalization for robots.txt patterns and request paths.

RFC 9309 §2.2.2 compares paths and patterns octet by octet after percent-encoding
is made uniform. Both sides go through `normalize`, so `/%7euser/`, `/%7Euser/` and
`/~user/` are the same path, while `%2F` (a slash inside a segment) and `%2A` (a
literal asterisk, never a wildcard) keep their escapes because decoding them would
change the meaning of the URL (RFC 3986 §2.2).

`*` and `$` mean something only in a pattern, so a path's `*` and `$` are the octets
`%2A` and `%24` (RFC 9309 §2.2.3, Figure 6) and `normalize` writes them so. A pattern
is normalized piece by piece between its wildcards (`normalize_pattern`): its `*` and
its final `$` keep their meaning, and any other `$` becomes `%24`.
"""
from __future__ import annotations

import re

__all__ = ["normalize", "normalize_pattern", "normalized_request_path", "request_path"]

_UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)

# A valid escape, a `%` that begins no valid escape, or a character that must be
# escaped: controls, space, `$`, `*`, DEL, and anything beyond ASCII (including the
# lone surrogates that carry undecodable bytes, see `_utf8_octets`).
_TO_REWRITE = re.compile(r"%([0-9A-Fa-f]{2})|%|[\x00-\x20$*\x7f-\U0010ffff]")
_HEX = "0123456789ABCDEF"


def normalize(text: str | bytes) -> str:
    """Percent-normalize a request path; the result is ASCII and idempotent.

    Escapes of unreserved octets are decoded, every other escape gets uppercase
    hex, octets at or below space or at or above 0x7F are escaped, as are `*`
    and `$`, and a `%` that starts no valid escape becomes `%25`.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    # Most paths are printable ASCII without `%`, space, `*` or `$`: already normal, told in a
    # few C calls, where the regex search costs several times more.
    plain = text.isascii() and text.isprintable()
    if plain and "%" not in text and " " not in text and "*" not in text and "$" not in text:
        return text
    if _TO_REWRITE.search(text) is None:
        return text
    return _TO_REWRITE.sub(_rewrite, text)


def normalize_pattern(pattern: str | bytes) -> str:
    """Normalize a robots.txt pattern: `normalize` between its `*`, its final `$` kept.

    Idempotent, like `normalize`: a normalized pattern holds no `$` but a final one.
    """
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8", "surrogateescape")
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    # As in `normalize`: most patterns are already normal, and a few C calls tell so.
    plain = body.isascii() and body.isprintable()
    if plain and "%" not in body and " " not in body and "$" not in body:
        return pattern
    return "*".join(map(normalize, body.split("*"))) + ("$" if anchored else "")


def _rewrite(match: re.Match[str]) -> str:
    hex_digits = match.group(1)
    if hex_digits is not None:
        octet = int(hex_digits, 16)
        return chr(octet) if octet in _UNRESERVED else "%" + hex_digits.upper()
    char = match.group(0)
    if char == "%":
        return "%25"
    return "".join("%" + _HEX[o >> 4] + _HEX[o & 15] for o in _utf8_octets(char))


def _utf8_octets(char: str) -> bytes:
    # Undecodable input bytes arrive as lone surrogates (surrogateescape) and
    # must come back as the very bytes they stood for.
    try:
        return char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return char.encode("utf-8", "surrogatepass")


def normalized_request_path(url: str) -> str:
    """`normalize(request_path(url))`, in one regex match for the usual absolute URL."""
    clean = _CLEAN_ABSOLUTE_URL.match(url)
    if clean is not None:
        return clean.group(1)
    return normalize(request_path(url))


def request_path(url: str) -> str:
    """The path and query of an absolute URL, a scheme-relative URL or a path.

    The fragment is dropped and an empty path becomes `/`. The result is not
    normalized. Like Google's reference parser, `//host/p` and `host/p` name a
    host, and `;params` belong to the path.
    """
    if url[:1] == "/" and url[1:2] != "/":
        return url.split("#", 1)[0]
    absolute = _ABSOLUTE_URL.match(url)
    if absolute is not None:
        path = absolute.group(1)
        return path if path[:1] == "/" else "/" + path
    start = 2 if url.startswith("//") else 0
    scheme_end = url.find("://", start)
    first_delimiter = _find_delimiter(url, start)
    if scheme_end == -1 or (first_delimiter != -1 and first_delimiter < scheme_end):
        authority_end = start
    else:
        authority_end = scheme_end + 3
    return _path_after_authority(url, authority_end)


# `scheme://authority`, then the path up to the fragment. A `#` ends the
# authority too: the fragment then hides any path that follows.
_ABSOLUTE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?;#]*([^#]*)", re.DOTALL)
# The same, when its path is printable ASCII without `%`, `$` or `*` (or space): already normal.
# Possessive repeats: a failed match gives up at once instead of backtracking.
_CLEAN_ABSOLUTE_URL = re.compile(r'[A-Za-z][A-Za-z0-9+.-]*+://[^/?;#]*+(/[!"&-)+-~]*+)(?:#|\Z)')
_DELIMITER = re.compile(r"[/?;]")


def _path_after_authority(url: str, authority_end: int) -> str:
    path_start = _find_delimiter(url, authority_end)
    fragment = url.find("#", authority_end)
    if path_start == -1 or (fragment != -1 and fragment < path_start):
        return "/"
    path = url[path_start:] if fragment == -1 else url[path_start:fragment]
    return path if path.startswith("/") else "/" + path


def _find_delimiter(text: str, start: int) -> int:
    found = _DELIMITER.search(text, start)
    return -1 if found is None else found.start()
