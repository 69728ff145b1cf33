"""Forward-confirmed reverse DNS on answers built here (`matcher.reverse_dns`): what proves a claim,
what disproves it, what leaves it open, and the evidence each says. The whole identity verdict,
ranges first and DNS after, is tested in test_identity.py."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matcher.addresses import parse_ip
from matcher.reverse_dns import DnsAnswer, Lookup, confirm_reverse_dns, under_suffix

V4 = parse_ip("192.0.2.10")
V6 = parse_ip("2001:db8::10")
SUFFIXES = ("googlebot.com", "google.com")
WHEN = "2026-11-02T10:00:00Z"


def answer(*ptr: str, forward: dict | None = None, error: str | None = None, ip: str = "192.0.2.10",
           when: str = WHEN) -> DnsAnswer:
    """`forward` maps a name to its addresses, or to an error code."""
    lookups = tuple(
        (name, Lookup(error=value) if isinstance(value, str) else Lookup(tuple(value)))
        for name, value in (forward or {}).items()
    )
    return DnsAnswer(ip, Lookup(tuple(ptr), error), lookups, when)


def test_a_name_under_a_suffix_that_resolves_back_proves_the_claim():
    good = answer("crawl-192-0-2-10.googlebot.com", forward={"crawl-192-0-2-10.googlebot.com": ["192.0.2.10"]})
    assert confirm_reverse_dns(good, V4, SUFFIXES) == (
        "verified", f"PTR crawl-192-0-2-10.googlebot.com -> A 192.0.2.10 (DNS {WHEN})"
    )


def test_ipv6_is_confirmed_by_aaaa_records_in_any_spelling():
    good = answer("a.googlebot.com", forward={"a.googlebot.com": ["2001:DB8:0:0::10"]}, ip="2001:db8::10")
    assert confirm_reverse_dns(good, V6, SUFFIXES) == ("verified", f"PTR a.googlebot.com -> AAAA 2001:DB8:0:0::10 (DNS {WHEN})")


def test_the_time_of_the_answer_is_left_out_when_unknown():
    assert confirm_reverse_dns(answer(error="nxdomain", when=""), V4, SUFFIXES) == ("spoofed", "PTR of 192.0.2.10: nxdomain")


@pytest.mark.parametrize(
    ("dns", "evidence"),
    [
        (answer(error="nxdomain"), "PTR of 192.0.2.10: nxdomain"),
        (answer(), "PTR of 192.0.2.10: no-answer"),  # an empty answer says there is no PTR
        (answer("host.example.net"), "PTR host.example.net not under googlebot.com, google.com"),
        (answer("a.googlebot.com", forward={"a.googlebot.com": ["192.0.2.11"]}),
         "PTR a.googlebot.com -> A 192.0.2.11, not 192.0.2.10"),
        (answer("a.googlebot.com", forward={"a.googlebot.com": []}), "PTR a.googlebot.com -> A none, not 192.0.2.10"),
        (answer("a.googlebot.com", forward={"a.googlebot.com": "no-answer"}), "PTR a.googlebot.com -> A no-answer"),
        (answer("a.googlebot.com", "b.google.com", forward={"a.googlebot.com": ["192.0.2.11"], "b.google.com": "nxdomain"}),
         "PTR a.googlebot.com -> A 192.0.2.11, not 192.0.2.10; PTR b.google.com -> A nxdomain"),
    ],
)
def test_dns_that_says_no_disproves_the_claim(dns, evidence):
    assert confirm_reverse_dns(dns, V4, SUFFIXES) == ("spoofed", f"{evidence} (DNS {WHEN})")


@pytest.mark.parametrize(
    ("dns", "evidence"),
    [
        (answer(error="timeout"), "PTR of 192.0.2.10: timeout"),
        (answer(error="servfail"), "PTR of 192.0.2.10: servfail"),
        (answer("a.googlebot.com"), "PTR a.googlebot.com -> A not-resolved"),  # the name was never looked up
        (answer("a.googlebot.com", forward={"a.googlebot.com": "refused"}), "PTR a.googlebot.com -> A refused"),
        # one name refuted, one undecided: undecided, and the undecided is named first
        (answer("a.googlebot.com", "b.googlebot.com", forward={"a.googlebot.com": ["192.0.2.11"], "b.googlebot.com": "timeout"}),
         "PTR b.googlebot.com -> A timeout; PTR a.googlebot.com -> A 192.0.2.11, not 192.0.2.10"),
    ],
)
def test_dns_that_cannot_say_leaves_the_claim_open(dns, evidence):
    assert confirm_reverse_dns(dns, V4, SUFFIXES) == ("unverified", f"{evidence} (DNS {WHEN})")


def test_names_outside_the_suffixes_are_not_confirmed_even_when_they_resolve_back():
    dns = answer("crawl.evilgooglebot.com", "a.googlebot.com",
                 forward={"crawl.evilgooglebot.com": ["192.0.2.10"], "a.googlebot.com": ["192.0.2.11"]})
    assert confirm_reverse_dns(dns, V4, SUFFIXES)[0] == "spoofed"
    assert confirm_reverse_dns(dns, V4, ("evilgooglebot.com",))[0] == "verified"


@pytest.mark.parametrize(
    ("name", "under"),
    [
        ("googlebot.com", True),  # the suffix itself
        ("crawl-1.googlebot.com", True),
        ("a.b.googlebot.com", True),
        ("evilgooglebot.com", False),  # not at a label boundary
        ("googlebot.com.example.net", False),
        ("googlebot.co", False),
        ("", False),
    ],
)
def test_under_suffix_is_at_a_label_boundary(name, under):
    assert under_suffix(name, ("googlebot.com",)) is under


def test_no_suffix_puts_no_name_under_it():
    assert not under_suffix("crawl.googlebot.com", ())


labels = st.text("abg-", min_size=1, max_size=4)
names = st.lists(labels, min_size=1, max_size=4).map(".".join)


@given(names, st.lists(names, max_size=3))
def test_under_suffix_agrees_with_comparing_labels(name, suffixes):
    # The reference: the name's last labels are the suffix's labels.
    def ends_with_labels(suffix: str) -> bool:
        wanted = suffix.split(".")
        return name.split(".")[-len(wanted):] == wanted

    assert under_suffix(name, suffixes) == any(ends_with_labels(suffix) for suffix in suffixes)
