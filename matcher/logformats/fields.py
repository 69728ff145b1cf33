"""Fields of a log line as written -> as audited: escapes undone, the request line split, the
target's path and authority, the host in its one form."""
from __future__ import annotations

import re
from functools import lru_cache
from types import MappingProxyType
from urllib.parse import quote

from matcher.hosts import host_key
from matcher.logformats.record import LogParseError, SignedHeaders

# ------------------------------------------------------------- field helpers

_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|.)", re.DOTALL)
_HEX_ESCAPE = re.compile(r"\\x([0-9A-Fa-f]{2})")
_SIMPLE_ESCAPES = MappingProxyType(
    {'"': b'"', "\\": b"\\", "n": b"\n", "r": b"\r", "t": b"\t", "b": b"\b", "v": b"\v"}
)
_METHOD = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")  # RFC 9110 token
_AUTHORITY_END = re.compile(r"[/?#]")
_AUTHORITY_FORM = re.compile(r"[^/?#\s]+:\d{1,5}\Z")
# Printable ASCII stays as written in a target; only bytes that are not valid
# UTF-8 get escaped, exactly as robots.txt normalization would escape them.
_TARGET_SAFE = "".join(chr(code) for code in range(0x20, 0x7F))


def encodable(text: str) -> str:
    r"""`text` with every lone surrogate written as its `\udXXX` escape.

    No UTF-8 writer or Beam coder accepts a lone surrogate. JSON may spell one (`"\ud800"`),
    and a line handed over as text may hold one; every line a parser reads and every string a
    JSON value contributes pass here, and come out with the escape JSON uses for it (text logs
    escape bad bytes as `\xNN` alike).
    """
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _unescape(field: str) -> bytes:
    r"""Undo log escaping: Apache's `\"` `\\` `\n` ..., and `\xHH` (Apache and nginx)."""
    out = bytearray()
    position = 0
    for match in _ESCAPE.finditer(field):
        out += field[position:match.start()].encode("utf-8", "surrogateescape")
        code = match.group(1)
        if len(code) == 3:
            out.append(int(code[1:], 16))
        else:
            out += _SIMPLE_ESCAPES.get(code) or match.group(0).encode("utf-8", "surrogateescape")
        position = match.end()
    out += field[position:].encode("utf-8", "surrogateescape")
    return bytes(out)


def unescaped_text(field: str) -> str:
    """A quoted text field (referer, user agent, header) with escapes undone."""
    if "\\" not in field:
        return field
    return _unescape(field).decode("utf-8", "backslashreplace")


def nginx_header(field: str) -> str | None:
    r"""A header as nginx logs it: every `"`, `\` and byte outside printable ASCII written as
    `\xHH` (a backslash the client sent is `\x5C`, so nothing else is an escape)."""
    if field in ("", "-"):
        return None
    if "\\x" not in field:
        return field
    pieces = _HEX_ESCAPE.split(field)  # text, hex digits, text, ...
    raw = b"".join(
        bytes([int(piece, 16)]) if index % 2 else piece.encode("utf-8", "surrogateescape")
        for index, piece in enumerate(pieces)
    )
    return raw.decode("utf-8", "backslashreplace")


def apache_header(field: str) -> str | None:
    r"""A header as Apache logs it: `\"` and `\\`, `\n`-style escapes and `\xHH` for other bytes."""
    return None if field in ("", "-") else unescaped_text(field)


# IIS writes a space in a value as `+` and a `+` as itself. A `+` after a `+` or after `(` is the
# character: User-Agents write `; +http://…` (logged `;++http://…`) and `(+http://…)`, and
# neither two spaces in a row nor a space after `(`.
_IIS_SPACE = re.compile(r"(?<![+(])\+")


def w3c_spaces(field: str) -> str:
    """A value of an IIS W3C log with its spaces back: `Mozilla/5.0+(compatible;++http://x)` is
    `Mozilla/5.0 (compatible; +http://x)`."""
    return _IIS_SPACE.sub(" ", field) if "+" in field else field


def w3c_header(field: str) -> str | None:
    """A `cs(Header)` field of a W3C extended log: spaces written as `+`, `-` for none."""
    return None if field in ("", "-") else w3c_spaces(field)


def w3c_signature_header(field: str) -> str | None:
    """The `cs(Signature)` field of a W3C extended log. Its values are base64 byte sequences
    between colons, where `+` is a base64 digit: only a `+` outside them was a space."""
    if field in ("", "-"):
        return None
    parts = field.split(":")
    # even parts lie outside `:...:` byte sequences
    return ":".join(w3c_spaces(part) if index % 2 == 0 else part for index, part in enumerate(parts))


def signed_headers(
    authority: str | None,
    signature_agent: str | None,
    signature_input: str | None,
    signature: str | None,
    agent_logged: bool = True,
) -> SignedHeaders | None:
    """The signature headers of a record, escapes already undone; None unless both
    `Signature-Input` and `Signature` or a `Signature-Agent` were logged. A signature of which
    one header is missing is none."""
    signed = bool(signature_input and signature)
    if not signed and not signature_agent:
        return None
    return SignedHeaders(
        authority or None, signature_agent or None, signature_input if signed else None, signature if signed else None,
        agent_logged,
    )


def _target_text(latin1: str) -> str:
    """A target whose bytes were carried as latin-1: UTF-8 text, or %-escapes for invalid bytes."""
    raw = latin1.encode("latin-1")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return quote(raw, safe=_TARGET_SAFE)


def _split_request_line(line: str) -> tuple[str, str]:
    """`METHOD target [HTTP/x.y]` -> (method, target); the target may contain spaces."""
    method, _, rest = line.partition(" ")
    if not _METHOD.match(method):
        hint = " (a TLS handshake sent to a plain-HTTP port)" if line.startswith("\x16\x03") else ""
        raise LogParseError("not-http", f"request line is not HTTP{hint}: {line[:40]!r}")
    target, space, version = rest.rpartition(" ")
    if not space or not version.startswith("HTTP/"):
        target = rest  # HTTP/0.9 has no version; or the target itself holds a space
    if not target or target[0] == " ":
        raise LogParseError("bad-request-line", f"no request target: {line[:80]!r}")
    return method, target


def request_line(field: str, escaped: bool = True) -> tuple[str, str]:
    """A logged request line -> (method, target); `escaped` for text logs, not for JSON strings."""
    # "- - - " is how AWS load balancers log a request they could not read
    if field in ("", "-") or field.strip() == "- - -":
        raise LogParseError("no-request", "no request line was received")
    if not escaped or "\\" not in field:
        return _split_request_line(field)
    # latin-1 maps byte n to code point n, so splitting stays byte-exact whatever
    # the escaped bytes were (TLS records, broken UTF-8).
    method, target = _split_request_line(_unescape(field).decode("latin-1"))
    return method, _target_text(target)


def target_path(target: str) -> tuple[str, str | None]:
    """Request target -> (path+?query, authority or None). Origin-form or absolute http(s) form."""
    if target[0] == "/":
        return target, None
    scheme, separator, rest = target.partition("://")
    if separator and scheme.lower() in ("http", "https"):
        end = _AUTHORITY_END.search(rest)
        cut = end.start() if end else len(rest)
        authority = rest[:cut].rpartition("@")[2]
        if authority:
            path = rest[cut:]
            return (path if path[:1] == "/" else "/" + path), authority
    if target == "*":
        raise LogParseError("asterisk-form", "a request about the server itself (OPTIONS *), not a resource")
    if _AUTHORITY_FORM.match(target):
        raise LogParseError("authority-form", f"a tunnel to {target[:80]!r} (CONNECT), not a resource")
    raise LogParseError("bad-target", f"target is neither a path nor an http(s) URL: {target[:80]!r}")


def request_host(logged: str | None, default_host: str | None) -> str | None:
    """The host a request is audited under: the one the server logged, else `--default-host`.

    An absolute-form target's authority is the client's choice of spelling, not the site that
    answered, so it never picks the robots.txt (it is kept as `LogRecord.target_host`)."""
    return logged_host(logged) or default_host


@lru_cache(maxsize=4096)
def logged_host(value: str | None) -> str | None:
    """A host as a log writes it, in the one form hosts are compared in (`hosts.host_key`); None
    when the log names none: no field, "-", "" or nothing of a host ("." or ":443")."""
    if value is None or value.strip() in ("", "-"):
        return None
    return host_key(value) or None


def cleaned_line(line: str) -> str:
    """Strip line endings, stray blanks and a byte order mark; a blank line is no request (`blank`)."""
    text = encodable(line.strip())
    if text[:1] == "\ufeff":
        text = text[1:].lstrip()
    if not text:
        raise LogParseError("blank", "blank line")
    return text
