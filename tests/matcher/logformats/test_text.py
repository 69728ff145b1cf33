"""The Apache and nginx text formats (`matcher.logformats.text`): the fast pattern reads a line as the
general one does, and the skim of a line names its sender, time and User-Agent exactly as the full
parse would, or declines."""
from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from helpers import GOOGLEBOT
from matcher.logformats import LogParseError, Skim, TextLayout, TextParser, parser_for


def combined(request: str = "GET / HTTP/1.1", *, time: str = "10/Oct/2026:13:55:36 -0700",
             ip: str = "66.249.66.1", tail: str = f'"-" "{GOOGLEBOT}"') -> str:
    return f'{ip} - - [{time}] "{request}" 200 512 {tail}'


@settings(max_examples=300, deadline=None)
@given(
    path=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters='"'), max_size=30),
    user_agent=st.text(st.characters(min_codepoint=0x20, max_codepoint=0x24F, blacklist_characters='"'), max_size=40),
    forwarded=st.one_of(st.none(), st.sampled_from(["-", "10.0.0.1", "66.249.66.1, 10.0.0.1"])),
)
@example(path="a", user_agent="ends in a backslash \\", forwarded=None)
@example(path="a", user_agent="A\\", forwarded="B")
def test_fast_pattern_reads_lines_exactly_as_the_general_one(path: str, user_agent: str, forwarded: str | None):
    tail = f'"-" "{user_agent}"' + ("" if forwarded is None else f' "{forwarded}"')
    line = combined(f"GET /{path} HTTP/1.1", tail=tail)
    layout = TextLayout.of()
    general_only = TextParser("combined", TextLayout(layout.general, layout.general), None)
    fast = TextParser("combined", layout, None)
    try:
        expected = general_only(line)
    except LogParseError as error:
        with pytest.raises(LogParseError) as caught:
            fast(line)
        assert caught.value.reason == error.reason
    else:
        assert fast(line) == expected


def test_the_skim_of_a_plain_line_is_what_the_full_parse_reads():
    parse = parser_for("combined")
    line = combined("GET /a?b=1 HTTP/1.1", tail=f'"-" "{GOOGLEBOT}" "66.249.66.1, 10.0.0.2"')
    skim = parse.skim(line)
    record = parse(line)
    assert isinstance(skim, Skim)
    assert (skim.client_ip, skim.forwarded_for, skim.ts, skim.user_agent) == (
        record.client_ip, record.forwarded_for, record.ts, record.user_agent,
    )
    assert parse.record(skim.match) == record


def test_a_skim_reads_a_dash_as_nothing():
    skim = parser_for("combined").skim(combined(tail='"-" "-" "-"'))
    assert (skim.user_agent, skim.forwarded_for) == ("", None)


@pytest.mark.parametrize(
    "line",
    [
        combined(r"GET /caf\xC3\xA9 HTTP/1.1"),  # an escape: only the full parse undoes it
        combined(tail=r'"-" "Bot \"quoted\""'),
        combined("GET http://www.example.com/a HTTP/1.1"),  # absolute form: not the plain layout
        combined("GET /old"),  # HTTP/0.9
        combined(time="32/Oct/2026:13:55:36 -0700"),  # the time would not parse
        combined(time="01/Jan/0001:00:00:00 +0100"),  # nor would this one, once in UTC
        "",
        "hello world",
    ],
)
def test_a_skim_declines_any_line_it_cannot_vouch_for(line):
    assert parser_for("combined").skim(line) is None


def test_a_json_line_is_never_skimmed():
    line = '{"t": "2026-10-10T20:55:36Z", "ip": "66.249.66.1", "r": "GET / HTTP/1.1"}'
    assert parser_for("jsonl", mapping={"ts": "t", "client_ip": "ip", "request": "r"}).skim(line) is None


pieces = st.sampled_from([
    "66.249.66.1", " ", "-", '"', "[", "]", "10/Oct/2026:13:55:36 -0700", "32/Oct/2026:13:55:36 -0700",
    "GET", "/a", "http://x.test/a", "HTTP/1.1", "200", "512", "\\", "\\x41", "Bot/1.0", "\ufeff", ",", "(0 s)", "(",
])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["combined", "host_combined", "combined_xrt", "common", "vhost_common", "gandi", "ovh", "icecast2"]),
       st.lists(pieces, max_size=24).map("".join))
@example("combined", combined())
@example("host_combined", "example.com " + combined())
@example("vhost_common", "example.com " + combined().split(' "-"')[0])
@example("gandi", "example.com " + combined().replace("] ", "] (0 s) "))
@example("ovh", combined().replace(" - - ", " example.com - "))
@example("icecast2", combined() + " 12")
def test_whenever_a_line_is_skimmed_it_parses_to_the_same_fields(name, line):
    parse = parser_for(name)
    skim = parse.skim(line)
    if skim is None:
        return
    record = parse(line)  # a skimmed line surely parses
    assert (skim.client_ip, skim.forwarded_for, skim.ts, skim.user_agent) == (
        record.client_ip, record.forwarded_for, record.ts, record.user_agent,
    )
    assert parse.record(skim.match) == record


def test_a_layout_of_the_common_format_has_no_user_agent_field():
    parse = TextParser("common", TextLayout.of(combined=False), None)
    line = '192.0.2.10 - frank [10/Oct/2026:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326'
    assert parse(line).user_agent == "" and parse.skim(line).user_agent == ""
    with pytest.raises(LogParseError):
        parse(combined())
