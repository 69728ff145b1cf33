"""Envelopes (syslog, CRI, docker json-file) taken off before the format reads the line, and found
by the detector."""
from __future__ import annotations

import json

import pytest

from helpers import GOOGLEBOT
from matcher.logformats import LogParseError, parser_for
from matcher.logformats.detect import chosen_format, rank_formats

COMBINED = f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"'
FASTLY = json.dumps({"timestamp": "2026-11-02T10:00:00+0000", "client_ip": "66.249.66.1", "url": "/a",
                     "request_method": "GET", "request_user_agent": GOOGLEBOT})

WRAPPED = [
    ("syslog+combined", f"Nov  2 10:00:00 web1 nginx: {COMBINED}"),
    ("syslog+combined", f"<190>Nov 12 10:00:00 web1 apache2[812]: {COMBINED}"),
    # RFC 3164's header with an RFC 3339 time (rsyslog's RSYSLOG_FileFormat, syslog-ng's iso)
    ("syslog+combined", f"2026-11-02T11:00:00+01:00 web1 nginx[812]: {COMBINED}"),
    ("syslog+combined", f"<190>2026-11-02T10:00:00.123456Z web1 nginx: {COMBINED}"),
    ("syslog+fastly", f"<134>1 2026-11-02T10:00:00Z cache-fra19 fastly-logs - - - {FASTLY}"),
    ("syslog+fastly", f'<134>1 2026-11-02T10:00:00Z h app 12 ID47 [exampleSDID@32473 iut="3" eventSource="App"] {FASTLY}'),
    ("cri+combined", f"2026-11-02T10:00:00.123456789Z stdout F {COMBINED}"),
    ("docker+combined", json.dumps({"log": COMBINED + "\n", "stream": "stdout", "time": "2026-11-02T10:00:00.1Z"})),
]


@pytest.mark.parametrize(("name", "line"), WRAPPED)
def test_the_line_inside_the_envelope_is_read_as_if_unwrapped(name, line):
    inner = name.partition("+")[2]
    plain = COMBINED if inner == "combined" else FASTLY
    assert parser_for(name)(line) == parser_for(inner)(plain)


@pytest.mark.parametrize(("name", "line"), WRAPPED)
def test_the_detector_finds_the_envelope_and_the_format_inside(name, line):
    chosen = chosen_format(rank_formats([line] * 5))
    assert chosen is not None and chosen.name.partition("+")[0] == name.partition("+")[0]
    assert parser_for(chosen.name)(line).path == "/a"


@pytest.mark.parametrize(("name", "line"), [
    ("syslog+combined", COMBINED),
    ("cri+combined", COMBINED),
    ("docker+combined", COMBINED),
    ("docker+combined", json.dumps({"log": 7})),
])
def test_a_line_without_its_envelope_is_a_dead_letter(name, line):
    with pytest.raises(LogParseError) as caught:
        parser_for(name)(line)
    assert caught.value.reason == "no-envelope"


def test_a_plain_file_is_not_taken_for_an_enveloped_one():
    assert chosen_format(rank_formats([COMBINED] * 5)).name == "combined"
