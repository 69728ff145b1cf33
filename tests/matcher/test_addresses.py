"""Client addresses as log fields carry them, and the UTC day of a request (`matcher.addresses`)."""
from __future__ import annotations

import ipaddress
from datetime import date, datetime, timedelta, timezone

from hypothesis import example, given, settings
from hypothesis import strategies as st

from matcher.addresses import parse_ip, request_day


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


def reference_parse_ip(text: str):
    """A log field's address by `ipaddress` alone, as `parse_ip` defines it."""
    candidate = text.strip()
    host, colon, port = candidate.rpartition(":")
    if colon and port.isascii() and port.isdigit() and len(port) <= 5 and (
        host.startswith("[") and host.endswith("]") or (host and set(host) <= set("0123456789.") and 7 <= len(host) <= 15)
    ):
        candidate = host
    if candidate.startswith("[") and candidate.endswith("]"):
        candidate = candidate[1:-1]
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
