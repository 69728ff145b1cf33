"""CloudFront real-time logs named with their field list: each record read where its fields sit, and
a list that cannot give a verdict, or that CloudFront cannot have written, refused at once."""
from __future__ import annotations

import argparse
from datetime import datetime, timezone

import pytest

from helpers import GOOGLEBOT
from matcher.logformats import LogParseError, parser_for
from pipeline.cli.arguments import log_format

FEW = "cloudfront_realtime:timestamp,c-ip,cs-method,cs-host,cs-uri-stem,cs-user-agent"


def test_a_short_field_list_reads_its_records():
    record = parser_for(FEW)(f"1793613600.5\t66.249.66.1\tGET\twww.example.com\t/a?b=1\t{GOOGLEBOT.replace(' ', '%20')}")
    assert (record.ts, record.client_ip, record.host, record.path, record.user_agent, record.status) == (
        datetime(2026, 11, 2, 10, 0, 0, 500000, tzinfo=timezone.utc), "66.249.66.1", "www.example.com", "/a?b=1",
        GOOGLEBOT, None)


def test_a_plus_is_kept_and_percent_escapes_undone():
    record = parser_for(FEW)("1793613600.000\t66.249.66.1\tGET\t-\t/a%20b\tBot+1.0%2Fx")
    assert (record.user_agent, record.path, record.host) == ("Bot+1.0/x", "/a%20b", None)


@pytest.mark.parametrize(("line", "reason"), [
    ("1793613600.000\t66.249.66.1\tGET\twww.example.com\t/a", "no-match"),  # a field short
    ("2026-11-02T10:00:00Z\t66.249.66.1\tGET\twww.example.com\t/a\tcurl", "bad-timestamp"),
    ("1793613600.000\t66.249.66.1\t-\twww.example.com\t/a\tcurl", "no-request"),
])
def test_a_record_that_does_not_fit_the_list_is_a_dead_letter(line, reason):
    with pytest.raises(LogParseError) as caught:
        parser_for(FEW)(line)
    assert caught.value.reason == reason


@pytest.mark.parametrize(("fields", "said"), [
    ("timestamp,c-ip,cs-method,cs-uri-stem", "lacks the User-Agent"),
    ("c-ip,cs-method,cs-uri-stem,cs-user-agent", "lacks the time"),
    ("timestamp,cs-method,cs-host,cs-user-agent", "lacks the client address, the request path"),
    # the standard logs' name for the User-Agent is no real-time field: read past, so the list lacks it
    ("timestamp,c-ip,cs-method,cs-uri-stem,cs(User-Agent)", "lacks the User-Agent"),
    ("timestamp,c-ip,,cs-method,cs-uri-stem,cs-user-agent", "an empty field name"),
    ("timestamp,c-ip,cs-uri-stem,cs-method,cs-user-agent", "CloudFront writes cs-method before cs-uri-stem"),
    ("timestamp,c-ip,c-ip,cs-method,cs-uri-stem,cs-user-agent", "'c-ip' is named twice"),
])
def test_a_list_that_cannot_work_is_refused_at_launch_in_one_line(fields, said):
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        log_format(f"cloudfront_realtime:{fields}")
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_field_the_list_does_not_know_is_read_past():
    """AWS adds real-time fields now and then; a configuration that has one still reads."""
    parse = parser_for("cloudfront_realtime:timestamp,c-ip,cs-method,asn,cs-uri-stem,cs-user-agent")
    record = parse("1793613600.000\t66.249.66.1\tGET\t15169\t/a\tcurl/8.5.0")
    assert (record.path, record.user_agent) == ("/a", "curl/8.5.0")
