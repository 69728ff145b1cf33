"""The client address of a request that reached the server through proxies.

Behind a load balancer or CDN the connecting address is the proxy's own; the client is in
`X-Forwarded-For`, where each proxy appends the address it received the request from. Only the
entries added by proxies the site trusts can be believed: anything to their left was written by
whoever sent the request. So the chain is read from the right, connecting address first, and the
first address that is not a trusted proxy is the client. Without trusted proxies, or when the
connecting address is not one, the connecting address is the client and the header is ignored.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from matcher.addresses import Network, parse_ip

__all__ = ["NO_PROXIES", "TrustedProxies", "trusted_proxies"]


@dataclass(frozen=True)
class TrustedProxies:
    """Networks whose `X-Forwarded-For` entries are believed."""

    networks: tuple[Network, ...] = ()

    def client(self, connecting: str, forwarded_for: str | None) -> str:
        """The right-most address of the chain that is not a trusted proxy; when every hop is
        trusted, the left-most one, the furthest the chain can be followed."""
        if not self.networks or not forwarded_for or not self._trusted(connecting):
            return connecting
        hop = connecting
        for entry in reversed(forwarded_for.split(",")):
            hop = host_of(entry)
            if not self._trusted(hop):
                return hop
        return hop

    def _trusted(self, text: str) -> bool:
        address = parse_ip(text)
        # an unparseable hop ("unknown", junk) is nobody we trust: it ends the walk
        return address is not None and any(address in network for network in self.networks)


NO_PROXIES = TrustedProxies()


def trusted_proxies(specs: Iterable[str]) -> TrustedProxies:
    """Networks from CIDR or address strings; ValueError names the first that is neither."""
    networks = []
    for spec in specs:
        text = spec.strip()
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"not a network or address: {spec!r} (e.g. 10.0.0.0/8, 2001:db8::/32)") from None
    return TrustedProxies(tuple(networks))


def host_of(entry: str) -> str:
    """An `X-Forwarded-For` entry without its port: `[2001:db8::1]:443` -> `2001:db8::1`."""
    text = entry.strip()
    if text.startswith("["):
        return text[1:].split("]", 1)[0]
    if text.count(":") == 1:  # a.b.c.d:port; a bare IPv6 address has several colons
        return text.split(":", 1)[0]
    return text
