"""Client addresses as log fields carry them, and the UTC day a request falls on."""
from __future__ import annotations

import functools
import ipaddress
import re
import socket
from datetime import date, datetime, timezone

__all__ = ["Address", "Network", "parse_ip", "request_day"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_MAX_IP_TEXT = 64
# A port after a dotted quad or a bracketed address; a bare IPv6 address ends in a group, never
# in `]:port`, and a dotted quad has no colon before it.
_WITH_PORT = re.compile(r"(\[[^\]]*\]|[0-9.]{7,15}):[0-9]{1,5}\Z", re.ASCII)


def parse_ip(text: str) -> Address | None:
    """The client address of a log field; `::ffff:a.b.c.d` is `a.b.c.d`; a port after it
    (`a.b.c.d:9989`, `[2001:db8::1]:443`, as load balancers and proxies log the peer) is not
    part of it; None when unparseable."""
    # no address is this long; the bound keeps junk fields out of the cache
    return _parse_ip(text) if len(text) <= _MAX_IP_TEXT else None


# A busy site's log names more crawler and visitor addresses than fit 2**16.
@functools.lru_cache(maxsize=1 << 17)
def _parse_ip(text: str) -> Address | None:
    candidate = text.strip()
    with_port = _WITH_PORT.match(candidate)
    if with_port:
        candidate = with_port.group(1)
    if candidate.startswith("[") and candidate.endswith("]"):
        candidate = candidate[1:-1]
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


def request_day(at: date | datetime) -> date:
    """The UTC day of a timestamp (naive datetimes are taken as UTC)."""
    if isinstance(at, datetime):
        if at.tzinfo is not None and at.tzinfo is not timezone.utc:
            at = at.astimezone(timezone.utc)
        return at.date()
    return at
