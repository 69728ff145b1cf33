"""Addresses as logs, headers, DNS answers and the command line write them, and the UTC day a
request falls on.

This is the one reading of an address: the audit's client field, each `X-Forwarded-For` hop, a
DNS record, `--trusted-proxies` and `verify` all go through `parse_ip`, so one address is one
address whatever its spelling. Brackets and a port are dropped (`[2001:db8::1]:443`,
`192.0.2.1:8080`), an IPv4-mapped IPv6 address is its IPv4 address, and a zone id
(`fe80::1%eth0`) is kept: it says the client was on the server's own link, which no public
record can speak for (`reverse_dns_problem`).
"""
from __future__ import annotations

import functools
import ipaddress
import socket
from datetime import date, datetime, timezone

__all__ = ["ADDRESS_TEXT_LIMIT", "REMEMBERED_ADDRESSES", "Address", "Network", "address_text", "parse_ip", "parse_network", "request_day", "reverse_dns_problem", "truncated"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Room for the longest address with brackets, a zone id of an interface name and a port; no
# longer text is an address, and caches keyed by address text remember none longer.
ADDRESS_TEXT_LIMIT = 80
# Distinct address texts whose reading, and whose answers in the audit's caches, a process
# remembers (docs/architecture.md § Memory). A busy site's log names more crawler and visitor
# addresses than fit 2**16.
REMEMBERED_ADDRESSES = 1 << 17
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
# What `truncated` keeps: the network a provider hands a customer, not the person behind it.
_KEPT_PREFIX = {4: 24, 6: 48}


def parse_ip(text: str) -> Address | None:
    """The address `text` names, or None when it names none (a host name, "unknown", junk)."""
    # no address is this long; the bound keeps junk fields out of the cache
    return _parse_ip(text) if len(text) <= ADDRESS_TEXT_LIMIT else None


@functools.lru_cache(maxsize=REMEMBERED_ADDRESSES)
def _parse_ip(text: str) -> Address | None:
    candidate = text.strip()
    if candidate.startswith("["):
        inside, closed, port = candidate[1:].partition("]")
        if not closed or (port and not _is_port(port[1:] if port[0] == ":" else "")):
            return None
        candidate = inside
    elif candidate.count(":") == 1:  # a.b.c.d:port; an IPv6 address has several colons
        candidate, _, port = candidate.partition(":")
        if not _is_port(port):
            return None
    # A dotted quad the C parser takes is one `ip_address` takes alike (four decimal octets up to
    # 255, no leading zero), at a third of the cost; anything else is left to `ip_address`.
    try:
        return ipaddress.IPv4Address(socket.inet_pton(socket.AF_INET, candidate))
    except (OSError, UnicodeError, ValueError):
        pass
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def address_text(text: str) -> str:
    """A logged client as the tables write and count it: the address `parse_ip`
    reads (`[2001:DB8::1]:443` -> `2001:db8::1`, `::ffff:192.0.2.7` -> `192.0.2.7`,
    `192.0.2.7:9989` -> `192.0.2.7`), or `text` as written when it names none."""
    if ":" not in text:  # a dotted quad is written one way already; a name or "-" is kept
        return text
    address = parse_ip(text)
    return text if address is None else str(address)


def _is_port(text: str) -> bool:
    return 0 < len(text) <= 5 and text.isascii() and text.isdigit()


def parse_network(text: str) -> Network:
    """A network in CIDR form or a single address, read as `parse_ip` reads clients: an
    IPv4-mapped network (`::ffff:10.0.0.0/104`) is its IPv4 network (`10.0.0.0/8`), so it holds
    the clients it was written for. ValueError when `text` is neither."""
    network = ipaddress.ip_network(text.strip(), strict=False)
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen >= 96 and network.subnet_of(_MAPPED):
        return ipaddress.IPv4Network((network.network_address.ipv4_mapped, network.prefixlen - 96))
    return network


def reverse_dns_problem(address: Address) -> str | None:
    """Why reverse DNS cannot speak for `address`, or None when it can be looked up."""
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        return f"{address} carries a zone id: an address scoped to the server's own link has no reverse DNS"
    return None


def request_day(at: date | datetime) -> date:
    """The UTC day of a timestamp (naive datetimes are taken as UTC)."""
    if isinstance(at, datetime):
        if at.tzinfo is not None and at.tzinfo is not timezone.utc:
            at = at.astimezone(timezone.utc)
        return at.date()
    return at


def truncated(text: str) -> str:
    """A client address cut to its /24 (IPv4) or /48 (IPv6) network, written with its prefix
    (`203.0.113.0/24`); text that is no address is kept as it is."""
    address = parse_ip(text)
    if address is None:
        return text
    return str(ipaddress.ip_network(f"{address}/{_KEPT_PREFIX[address.version]}", strict=False))
