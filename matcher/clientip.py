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

from matcher.addresses import Network, parse_ip, parse_network

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
            hop = _hop(entry)
            if not self._trusted(hop):
                return hop
        return hop

    def _trusted(self, text: str) -> bool:
        address = parse_ip(text)
        # an unparseable hop ("unknown", junk) is nobody we trust: it ends the walk
        return address is not None and any(address in network for network in self.networks)


NO_PROXIES = TrustedProxies()


# A proxy is trusted to name the client; trusting a network this broad would let most of the
# internet name any address it likes through X-Forwarded-For. Networks a site runs itself
# (RFC 1918, unique-local) may be any size.
_BROADEST_PUBLIC_PREFIX = {4: 8, 6: 19}
_PRIVATE = tuple(ipaddress.ip_network(text) for text in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))


def trusted_proxies(specs: Iterable[str]) -> TrustedProxies:
    """Networks from CIDR or address strings, read as `addresses.parse_network` reads them;
    ValueError names the first that is not a network or is too broad to trust."""
    return TrustedProxies(tuple(_trusted_network(spec) for spec in specs))


def _trusted_network(spec: str) -> Network:
    try:
        network = parse_network(spec)
    except ValueError:
        raise ValueError(f"not a network or address: {spec!r} (e.g. 10.0.0.0/8, 2001:db8::/32)") from None
    broadest = _BROADEST_PUBLIC_PREFIX[network.version]
    private = any(network.version == block.version and network.subnet_of(block) for block in _PRIVATE)
    if not private and network.prefixlen < broadest:
        raise ValueError(
            f"trusted proxy network {spec.strip()!r} is too broad: any client in it could name its own "
            f"address in X-Forwarded-For; list the proxies' own networks (public ones /{broadest} or narrower)"
        )
    return network


def _hop(entry: str) -> str:
    """An `X-Forwarded-For` entry as an address (`[2001:db8::1]:443` -> `2001:db8::1`), or as
    written when it names none."""
    address = parse_ip(entry)
    return entry.strip() if address is None else str(address)
