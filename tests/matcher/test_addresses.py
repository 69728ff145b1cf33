"""Client addresses as log fields carry them, and the UTC day of a request (`matcher.addresses`)."""
from __future__ import annotations

import ipaddress
import re
from datetime import date, datetime, timedelta, timezone

import pytest

from hypothesis import example, given, settings
from hypothesis import strategies as st

from matcher.addresses import address_text, parse_ip, parse_network, request_day, reverse_dns_problem


def test_parse_ip_unwraps_ipv4_mapped_addresses():
    assert str(parse_ip("::ffff:192.0.2.7")) == "192.0.2.7"
    assert str(parse_ip(" 2001:db8::1 ")) == "2001:db8::1"
    assert parse_ip("example.com") is None
    assert parse_ip("1" * 10_000) is None


def test_a_port_after_the_address_is_not_part_of_it():
    assert str(parse_ip("89.160.20.156:9989")) == "89.160.20.156"
    assert str(parse_ip("[2001:db8::1]:443")) == "2001:db8::1"
    assert str(parse_ip("[::ffff:192.0.2.7]:80")) == "192.0.2.7"
    assert str(parse_ip("2001:db8::1:443")) == "2001:db8::1:443"  # unbracketed: all of it is the address
    assert parse_ip("89.160.20.156:") is None and parse_ip("89.160.20.156:123456") is None
    assert parse_ip("example.com:80") is None


@pytest.mark.parametrize("logged, spelled", [
    ("::ffff:127.0.0.1", "127.0.0.1"),  # a dual-stack socket's IPv4 peer
    ("::FFFF:7f00:1", "127.0.0.1"),
    ("89.160.20.156:9989", "89.160.20.156"),
    ("[2001:DB8::1]:443", "2001:db8::1"),
    ("[::ffff:192.0.2.7]:80", "192.0.2.7"),
    ("fe80::1%eth0", "fe80::1%eth0"),
    ("192.0.2.7", "192.0.2.7"),
    ("unknown", "unknown"),
    ("-", "-"),
    ("2001:db8::zz", "2001:db8::zz"),  # names no address: kept as logged
])
def test_a_logged_client_is_written_as_the_address_it_names(logged, spelled):
    assert address_text(logged) == spelled


@pytest.mark.parametrize("text, address", [
    ("192.0.2.1:8080", "192.0.2.1"),
    ("[2001:db8::1]:443", "2001:db8::1"),
    ("[2001:DB8:0::1]", "2001:db8::1"),
    ("[::ffff:192.0.2.7]:80", "192.0.2.7"),
    ("fe80::1%eth0", "fe80::1%eth0"),
    ("[fe80::1%eth0]:443", "fe80::1%eth0"),
])
def test_ports_brackets_and_zone_ids_are_read_one_way(text, address):
    assert str(parse_ip(text)) == address


@pytest.mark.parametrize("text", ["192.0.2.1:", "192.0.2.1:http", "[2001:db8::1]x", "[2001:db8::1", "192.0.2.1:123456"])
def test_a_port_that_is_no_port_makes_no_address(text):
    assert parse_ip(text) is None


def test_a_zone_id_has_no_reverse_dns_and_a_plain_address_has():
    assert "zone id" in reverse_dns_problem(parse_ip("fe80::1%eth0"))
    assert reverse_dns_problem(parse_ip("fe80::1")) is None
    assert reverse_dns_problem(parse_ip("192.0.2.1")) is None


def test_a_mapped_network_is_its_ipv4_network():
    assert parse_network("::ffff:10.0.0.0/104") == ipaddress.ip_network("10.0.0.0/8")
    assert parse_network("::ffff:192.0.2.1") == ipaddress.ip_network("192.0.2.1/32")
    assert parse_network("2001:db8::/32") == ipaddress.ip_network("2001:db8::/32")
    assert parse_network("::/0") == ipaddress.ip_network("::/0")  # broader than the mapped block: kept


def reference_parse_ip(text: str):
    """A log field's address by `ipaddress` alone, as `parse_ip` defines it: brackets, then a
    port after them or after an IPv4 address, are dropped."""
    candidate = text.strip()
    if candidate.startswith("["):
        inside, closed, port = candidate[1:].partition("]")
        if not closed or (port and not re.fullmatch(r":[0-9]{1,5}", port)):
            return None
        candidate = inside
    elif candidate.count(":") == 1:
        candidate, _, port = candidate.partition(":")
        if not re.fullmatch(r"[0-9]{1,5}", port):
            return None
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


_octet_like = st.one_of(st.integers(0, 300).map(str), st.text("0123456789", max_size=4), st.sampled_from(["0x1", "٤", " 1", "1 ", ""]))


@settings(max_examples=2000)
@given(st.one_of(
    st.lists(_octet_like, min_size=1, max_size=6).map(".".join),
    st.tuples(st.lists(_octet_like, min_size=1, max_size=6).map(".".join), st.text("0123456789:[]", max_size=7)).map("".join),
    st.text(max_size=20),
))
@example("01.2.3.4")
@example("1.2.3.4\x00")
@example("[::ffff:1.2.3.4]")
@example("1.2.3.4:80")
@example("[::1]:0")
@example("[1.2.3.4]:99999")
@example("[::1]:8080")
@example("1.2.3.4:٤")
def test_parse_ip_takes_the_addresses_ipaddress_takes(text):
    assert parse_ip(text) == reference_parse_ip(text)


def test_the_request_day_is_the_utc_day():
    east = timezone(timedelta(hours=5))
    assert request_day(datetime(2026, 6, 1, 1, 0, tzinfo=east)) == date(2026, 5, 31)
    west = timezone(timedelta(hours=-3))
    assert request_day(datetime(2026, 5, 31, 22, 0, tzinfo=west)) == date(2026, 6, 1)
    assert request_day(datetime(2026, 5, 31, 23, 59, 59, 999_999, tzinfo=timezone.utc)) == date(2026, 5, 31)
    assert request_day(datetime(2026, 5, 31, 23, 59)) == date(2026, 5, 31)  # naive: taken as UTC
    assert request_day(date(2026, 6, 1)) == date(2026, 6, 1)


offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda minutes: timezone(timedelta(minutes=minutes)))


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)), offsets)
def test_the_request_day_is_the_date_of_the_same_moment_written_in_utc(local, offset):
    moment = local.replace(tzinfo=offset)
    utc = (local - offset.utcoffset(None)).replace(tzinfo=timezone.utc)
    assert request_day(moment) == utc.date()


def test_truncated_keeps_the_network_a_provider_hands_out():
    from matcher.addresses import truncated

    assert truncated("198.51.100.213") == "198.51.100.0/24"
    assert truncated("::ffff:198.51.100.213") == "198.51.100.0/24"
    assert truncated("2001:db8:aaaa:bbbb::1") == "2001:db8:aaaa::/48"
    assert truncated("[2001:db8::1]") == "2001:db8::/48"
    assert truncated("unknown") == "unknown"
