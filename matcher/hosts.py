"""The one form a host is kept and compared in, whatever way a log or a table spelled it.

`www.example.com`, `WWW.Example.COM`, `www.example.com.` and `www.example.com:443` name one
host: one robots.txt history, one crawl-delay sequence, one `verdicts.host`. So the form is lower
case, without the root's trailing dot and without a port, and a name in its IDNA A-labels, the
form HTTP carries it in: a table's `bücher.example` is a log's `xn--bcher-kva.example`. An IPv6 literal keeps the brackets a
URL authority gives it (`[2001:db8::1]`), in its compressed form, so `[2001:DB8:0::1]:8080`, a bare
`2001:db8::1` and the bracketed address are one host too.
"""
from __future__ import annotations

import ipaddress
from functools import lru_cache

import idna

__all__ = ["host_key"]


# Called for every log line; a log names few hosts, and the bound keeps invented ones from piling up.
@lru_cache(maxsize=4096)
def host_key(host: str) -> str:
    """`host` in the form hosts are compared in; "" when nothing of a host is left."""
    text = host.strip().lower()
    if text.startswith("["):
        inside, closed, _port = text[1:].partition("]")
        return _ipv6_literal(inside) if closed else text
    if text.count(":") > 1:
        return _ipv6_literal(text)
    name, colon, port = text.rpartition(":")
    if colon and (not port or (port.isascii() and port.isdigit())):
        text = name
    text = text.rstrip(".")
    return text if text.isascii() else _a_labels(text)


def _a_labels(name: str) -> str:
    try:
        return idna.encode(name, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        return name  # no IDNA name: kept as written, so it matches only itself


def _ipv6_literal(text: str) -> str:
    try:
        return f"[{ipaddress.IPv6Address(text).compressed}]"
    except ValueError:
        return f"[{text}]"  # not an address; still kept apart from any name
