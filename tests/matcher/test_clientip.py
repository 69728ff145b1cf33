"""The client behind proxies (`matcher.clientip`): X-Forwarded-For read from the right, only as far
as the hops are proxies the site trusts."""
from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from matcher.clientip import NO_PROXIES, TrustedProxies, trusted_proxies

PROXIES = trusted_proxies(["10.0.0.0/8", "2001:db8:ff::/48", "203.0.113.5"])


@pytest.mark.parametrize(
    "connecting, forwarded_for, client",
    [
        ("10.0.0.1", "192.0.2.10", "192.0.2.10"),
        ("10.0.0.1", "198.51.100.7, 192.0.2.10", "192.0.2.10"),  # right-most untrusted
        ("10.0.0.1", "192.0.2.10, 10.9.9.9, 203.0.113.5", "192.0.2.10"),  # proxy chain skipped
        ("10.0.0.1", "192.0.2.10:4711", "192.0.2.10"),
        ("10.0.0.1", "[2001:db8::10]:443", "2001:db8::10"),
        ("2001:db8:ff::1", "2001:db8::10", "2001:db8::10"),
        ("10.0.0.1", "unknown, 10.0.0.2", "unknown"),  # junk ends the walk: no client known
        ("10.0.0.1", "10.0.0.3, 10.0.0.2", "10.0.0.3"),  # all trusted: the furthest hop
        ("10.0.0.1", None, "10.0.0.1"),
        ("192.0.2.99", "192.0.2.10", "192.0.2.99"),  # not from a proxy: the header is the client's own
        ("::ffff:10.0.0.1", "192.0.2.10", "192.0.2.10"),
    ],
)
def test_the_client_is_the_right_most_untrusted_address(connecting, forwarded_for, client):
    assert PROXIES.client(connecting, forwarded_for) == client


def test_without_trusted_proxies_the_connecting_address_is_the_client():
    assert NO_PROXIES.client("10.0.0.1", "192.0.2.10") == "10.0.0.1"


def test_a_bad_proxy_network_is_a_clear_error():
    with pytest.raises(ValueError, match="not a network or address: '10.0.0.0/33'"):
        trusted_proxies(["10.0.0.0/33"])


def test_a_network_may_be_written_with_host_bits_or_as_one_address():
    proxies = trusted_proxies([" 10.1.2.3/16 ", "192.0.2.1", "2001:db8:ff::/48"])
    assert proxies == TrustedProxies((
        ipaddress.ip_network("10.1.0.0/16"), ipaddress.ip_network("192.0.2.1/32"), ipaddress.ip_network("2001:db8:ff::/48"),
    ))
    assert proxies.client("192.0.2.1", "198.51.100.7") == "198.51.100.7"
    assert proxies.client("192.0.2.2", "198.51.100.7") == "192.0.2.2"  # the /32 is that address alone
    assert trusted_proxies([]) == NO_PROXIES


def test_the_first_bad_network_is_named_with_an_example_of_a_good_one():
    with pytest.raises(ValueError) as caught:
        trusted_proxies(["10.0.0.0/8", "proxy.example", "also bad"])
    assert str(caught.value) == "not a network or address: 'proxy.example' (e.g. 10.0.0.0/8, 2001:db8::/32)"


def test_a_mapped_network_holds_the_clients_it_was_written_for():
    proxies = trusted_proxies(["::ffff:10.0.0.0/104"])
    assert proxies.networks == (ipaddress.ip_network("10.0.0.0/8"),)
    assert proxies.client("::ffff:10.0.0.5", "66.249.66.1") == "66.249.66.1"
    assert proxies.client("10.0.0.5", "66.249.66.1") == "66.249.66.1"


@pytest.mark.parametrize("spec", ["0.0.0.0/0", "::/0", "::ffff:0.0.0.0/96", "64.0.0.0/7", "2001::/16", "2000::/3"])
def test_a_public_network_too_broad_to_trust_is_refused(spec):
    with pytest.raises(ValueError, match=f"trusted proxy network '{re.escape(spec)}' is too broad"):
        trusted_proxies([spec])


@pytest.mark.parametrize("spec", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fd00::/8", "66.0.0.0/8", "2600::/19"])
def test_private_networks_of_any_size_and_public_ones_up_to_the_bound_are_trusted(spec):
    assert trusted_proxies([spec]).networks == (ipaddress.ip_network(spec),)


# Against a reference that lists the chain's hosts and reads them from the right: addresses whose
# trust is known by construction, written the ways X-Forwarded-For entries come.

NETWORKS = TrustedProxies((ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("2001:db8:ff::/48")))
TRUSTED = ("10.0.0.2", "10.9.9.9", "2001:db8:ff::5", "::ffff:10.0.0.7")
UNTRUSTED = ("192.0.2.10", "198.51.100.7", "2001:db8::10", "unknown", "")


def _spellings(host: str) -> st.SearchStrategy[str]:
    if ":" in host:  # IPv6: bare, bracketed, bracketed with a port
        forms = [host, f"[{host}]", f"[{host}]:443"]
    elif host and host[0].isdigit():
        forms = [host, f"{host}:4711"]
    else:
        forms = [host]
    return st.sampled_from(forms).flatmap(lambda form: st.sampled_from([form, f" {form}", f"{form} "]))


hops = st.sampled_from(TRUSTED + UNTRUSTED).flatmap(lambda host: st.tuples(st.just(host), _spellings(host)))


def reference_client(connecting: str, header: str | None, chain: list[tuple[str, str]]) -> str:
    """The right-most host of the chain not trusted; all trusted: the left-most; no header (or an
    empty one), or a connecting address that is no trusted proxy: the connecting address."""
    if not header or connecting not in TRUSTED:
        return connecting
    untrusted = [host for host, _ in chain if host not in TRUSTED]
    hop = untrusted[-1] if untrusted else chain[0][0]
    return "10.0.0.7" if hop == "::ffff:10.0.0.7" else hop  # a hop is named as its address


@given(st.sampled_from(TRUSTED + UNTRUSTED[:3]), st.none() | st.lists(hops, min_size=1, max_size=5))
@example("10.0.0.2", [("", "")])  # an empty header is no header
@example("10.0.0.2", [("10.9.9.9", "10.9.9.9:4711"), ("", " ")])
def test_the_client_agrees_with_the_reference(connecting, chain):
    header = None if chain is None else ",".join(spelled for _, spelled in chain)
    assert NETWORKS.client(connecting, header) == reference_client(connecting, header, chain or [])
    assert NO_PROXIES.client(connecting, header) == connecting
