"""Every preset read field by field from its fixture (tests/data/logformats/<preset>.log, lines
laid out as each vendor documents them): what each line becomes, or why it becomes none."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from helpers import GOOGLEBOT
from matcher.logformats import ZONELESS_FORMATS, LogParseError, parser_for
from matcher.logformats.detect import chosen_format, rank_formats
from matcher.logformats.timestamps import time_zone

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "logformats"
UTC = timezone.utc


def at(second: int, micros: int = 0) -> datetime:
    return datetime(2026, 11, 2, 10, 0, second, micros, tzinfo=UTC)


# Formats named with their fields: the fixture's field list.
NAMED_WITH_FIELDS = {
    "cloudfront_realtime": "cloudfront_realtime:timestamp,c-ip,time-to-first-byte,sc-status,sc-bytes,cs-method,"
    "cs-protocol,cs-host,cs-uri-stem,cs-bytes,x-edge-location,x-edge-request-id,x-host-header,time-taken,"
    "cs-protocol-version,c-ip-version,cs-user-agent,cs-referer,cs-cookie,cs-uri-query,x-edge-response-result-type,"
    "x-forwarded-for",
}


# (ts, client_ip, host, method, target, path, status, size, referer, user_agent, forwarded_for), or the reason
EXPECTED = {
    "aws_alb": [
        (at(0, 186641), "66.249.66.1", "www.example.com", "GET", "http://www.example.com:80/a?b=1", "/a?b=1", 200, 366, None, GOOGLEBOT, None),
        (at(1), "2001:db8::1", "www.example.com", "GET", "https://www.example.com:443/p", "/p", 200, 57, None, "curl/7.46.0", None),
        "no-request",  # "- - - ": the load balancer could not read a request
    ],
    "aws_elb": [
        (at(0, 945958), "66.249.66.1", "www.example.com", "GET", "http://www.example.com:80/a", "/a", 200, 29, None, GOOGLEBOT, None),
        "authority-form",
    ],
    "aws_s3": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 113, None, GOOGLEBOT, None),
        (at(1), "192.0.2.3", "amzn-s3-demo-bucket1.s3.us-west-1.amazonaws.com", "GET", "/amzn-s3-demo-bucket1?logging",
         "/amzn-s3-demo-bucket1?logging", 200, 242, None, "S3Console/0.4", None),
    ],
    "haproxy": [
        (at(0, 655000), "66.249.66.1", "default.test", "GET", "/a?b=1", "/a?b=1", 200, 2750, None, "", None),
        (at(1), "198.51.100.7", "default.test", "GET", "/", "/", 302, 196, None, "", None),
        "not-http",  # <BADREQ>: the connection sent no valid request before the timeout
    ],
    "traefik": [
        (at(0), "66.249.66.1", "default.test", "GET", "/a?b=1", "/a?b=1", 200, 512, None, GOOGLEBOT, None),
        (datetime(2026, 11, 2, 9, 0, 1, tzinfo=UTC), "192.0.2.5", "default.test", "GET", "/p", "/p", 404, 19,
         "https://www.example.com/", "curl/8.5.0", None),
        # an empty Referer written bare, as Traefik writes it
        (at(2), "203.0.113.9", "default.test", "GET", "/en/", "/en/", 200, 2814, None, "Android", None),
    ],
    "squid": [
        (at(0, 779000), "66.249.66.1", "www.example.com", "GET", "http://www.example.com/a?b=1", "/a?b=1", 200, 411, None, "", None),
        "authority-form",
        # Apache Traffic Server's `squid` format: one field more
        (at(2, 2000), "198.51.100.4", "static.example.com", "GET", "http://static.example.com/app.js", "/app.js", 304, 0,
         None, "", None),
    ],
    "varnishncsa": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "http://www.example.com/a?b=1", "/a?b=1", 200, 512, None, GOOGLEBOT, None),
    ],
    "w3c": [
        "directive", "directive", "directive", "directive",
        # IIS writes a space as "+" and a "+" as itself: ";++http" is "; +http"
        (at(0), "66.249.66.1", "default.test", "GET", "/a?b=1", "/a?b=1", 200, None, None, GOOGLEBOT, None),
        "directive", "directive", "directive", "directive",  # a restart, with other fields
        (at(0) + timedelta(minutes=5, seconds=1), "10.0.0.9", "www.example.com", "GET", "/p", "/p", 404, 1245, "https://www.example.com/", "curl/8.5.0", "192.0.2.5"),
    ],
    "cloudfront": [
        "directive", "directive",
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 2390282, None, GOOGLEBOT, None),
        (at(1), "2001:db8::9", "www.example.com", "GET", "/p", "/p", 0, 0, "https://www.example.com/", "curl/8.5.0", "192.0.2.5"),
    ],
    # cs-uri-stem holds the query already: cs-uri-query is not added to it; the host is cs-host, not
    # x-host-header (the distribution's name in real-time logs)
    "cloudfront_realtime": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 2390, None, GOOGLEBOT, None),
        (at(1, 250000), "2001:db8::9", "www.example.com", "GET", "/p", "/p", 0, 0, "https://www.example.com/",
         "curl/8.5.0", "192.0.2.5"),
    ],
    "vhost_common": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 512, None, "", None),
        (at(1), "192.0.2.5", "shop.example.net", "GET", "/p", "/p", 404, 0, None, "", None),  # `-`: no body sent
        "no-request",
    ],
    "gandi": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 512, None, GOOGLEBOT, None),
        (at(1), "192.0.2.5", "www.example.com", "GET", "/p", "/p", 404, 19, "https://www.example.com/", "curl/8.5.0", None),
        "no-request",
    ],
    "ovh": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 512, None, GOOGLEBOT, None),
        (at(1), "192.0.2.5", "shop.example.net", "GET", "/p", "/p", 404, 19, "https://www.example.com/", "curl/8.5.0", None),
    ],
    "icecast2": [
        (at(0), "66.249.66.1", "default.test", "GET", "/stream.mp3", "/stream.mp3", 200, 5120, None, GOOGLEBOT, None),
        (at(1), "192.0.2.5", "default.test", "GET", "/live.ogg?type=.ogg", "/live.ogg?type=.ogg", 200, 81920,
         "https://www.example.com/", "curl/8.5.0", None),
    ],
    "caddy": [
        (at(0, 524102), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 10900, None, GOOGLEBOT, None),
        (at(1), "192.0.2.5", "www.example.com", "GET", "/p", "/p", 404, 0, "https://www.example.com/", "curl/8.5.0", None),
    ],
    "traefik_json": [
        (at(0, 123456), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 512, None, GOOGLEBOT, None),
        (at(1), "2001:db8::5", "www.example.com", "GET", "/p", "/p", 404, 19, None, "curl/8.5.0", None),
    ],
    "nginx_json": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 512, None, GOOGLEBOT, None),
        (at(1), "192.0.2.5", "www.example.com", "GET", "/p", "/p", 404, 19, "https://www.example.com/", "curl/8.5.0", None),
        "no-request",
    ],
    # no method logged: each line is a request whose method is unknown
    "matomo_json": [
        (at(0), "66.249.66.1", "www.example.com", None, "/a?b=1", "/a?b=1", 200, 512, None, GOOGLEBOT, None),
        (at(1), "192.0.2.5", "shop.example.net", None, "/p", "/p", 404, 19, "https://www.example.com/", "curl/8.5.0", None),
    ],
    # Python's http.server: the local time with a space before the clock and no zone; the note it
    # writes before a request it answers with an error is no request line
    "python_http": [
        (at(0), "66.249.66.1", "default.test", "GET", "/a?b=1", "/a?b=1", 200, 0, None, "", None),
        "no-match",
        (at(1), "::ffff:192.0.2.5", "default.test", "GET", "/p", "/p", 404, 469, None, "", None),
    ],
    "fastly": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 512, None, GOOGLEBOT, None),
        (at(1), "192.0.2.5", "www.example.com", "GET", "/p", "/p", 404, None, "https://www.example.com/", "curl/8.5.0", None),
    ],
    "akamai_ds2": [
        (at(0), "66.249.66.1", "www.example.com", "GET", "/a?b=1", "/a?b=1", 200, 4995, None, GOOGLEBOT, None),
        (at(1, 250000), "192.0.2.5", "www.example.com", "GET", "/p", "/p", 404, None, "https://www.example.com/", "curl/8.5.0", None),
    ],
}


def _read(name: str, zone=UTC) -> list:
    parse = parser_for(NAMED_WITH_FIELDS.get(name, name), default_host="default.test", zone=zone)
    results = []
    for line in (FIXTURES / f"{name}.log").read_bytes().decode("utf-8").splitlines():
        try:
            record = parse(line)
        except LogParseError as error:
            results.append(error.reason)
            continue
        results.append((record.ts, record.client_ip, record.host, record.method, record.target, record.path,
                        record.status, record.size, record.referer, record.user_agent, record.forwarded_for))
    return results


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_line_of_the_preset_fixture_reads_field_by_field(name):
    assert _read(name) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - set(NAMED_WITH_FIELDS)))  # a field list is never guessed
def test_auto_detection_names_the_fixture_format(name):
    lines = (FIXTURES / f"{name}.log").read_bytes().splitlines()
    chosen = chosen_format(rank_formats(lines))
    # w3c and cloudfront read each other's files alike;
    # OVH's layout is lighttpd's default
    same = {"cloudfront": {"w3c", "cloudfront"}, "ovh": {"lighttpd", "ovh"}}
    assert chosen is not None and chosen.name in same.get(name, {name})


@pytest.mark.parametrize("header", [
    "Feb  6 12:14:14 lb1 haproxy[14389]: ",
    "<134>Feb  6 12:14:14 lb1 haproxy[14389]: ",
    "2015-08-26T02:09:48+02:00 lb1 haproxy[14389]: ",  # rsyslog's RSYSLOG_FileFormat
    "2015-08-26T00:09:48.123456Z lb1 haproxy: ",
])
def test_a_haproxy_line_behind_a_syslog_header_reads_as_without_it(header):
    line = FIXTURES.joinpath("haproxy.log").read_text().splitlines()[1]
    assert parser_for("haproxy")(header + line) == parser_for("haproxy")(line)


def test_a_time_without_a_zone_is_read_in_the_log_timezone():
    assert ZONELESS_FORMATS == {"haproxy", "python_http"}
    paris = _read("haproxy", ZoneInfo("Europe/Paris"))
    assert paris[0][0] == at(0, 655000) - timedelta(hours=1)
    assert _read("haproxy", time_zone("-05:00"))[1][0] == at(1) + timedelta(hours=5)
    assert _read("python_http", ZoneInfo("Europe/Paris"))[2][0] == at(1) - timedelta(hours=1)


@pytest.mark.parametrize("text", ["Mars/Olympus", "+25:00", ""])
def test_an_unknown_zone_is_refused(text):
    with pytest.raises(ValueError, match="unknown time zone"):
        time_zone(text)


def test_a_w3c_line_before_any_fields_directive_reads_with_the_default_fields():
    iis = "2026-11-02 10:00:00 10.0.0.4 GET /a - 443 - 66.249.66.1 curl/8.5.0 - 200 0 0 15"
    assert parser_for("w3c")(iis).path == "/a"
    with pytest.raises(LogParseError) as caught:
        parser_for("w3c")(iis + " extra")
    assert caught.value.reason == "no-match"


def test_quoted_w3c_values_may_hold_the_separator():
    parse = parser_for("w3c")
    with pytest.raises(LogParseError):
        parse('#Fields: date time c-ip cs-method cs-uri cs(User-Agent) sc-status')
    record = parse('2026-11-02 10:00:00 66.249.66.1 GET "https://www.example.com/a b" "Googlebot 2.1" 200')
    assert (record.host, record.path, record.user_agent) == ("www.example.com", "/a b", "Googlebot 2.1")


def test_w3c_fields_that_log_no_method_still_log_the_request():
    """SHOUTcast's listener log names no cs-method: its lines are requests whose method is unknown;
    a line whose cs-method is `-` received none."""
    parse = parser_for("w3c")
    with pytest.raises(LogParseError):
        parse("#Fields: c-ip c-dns date time cs-uri-stem c-status cs(User-Agent) sc-bytes x-duration avgbandwidth")
    record = parse("66.249.66.1 crawl.example 2026-11-02 10:00:00 /stream 200 Mozilla/5.0+(compatible;+Googlebot/2.1) 1024 10 800")
    assert (record.method, record.path, record.user_agent) == (None, "/stream", "Mozilla/5.0 (compatible; Googlebot/2.1)")
    with pytest.raises(LogParseError):
        parse("#Fields: date time c-ip cs-method cs-uri-stem cs(User-Agent)")
    with pytest.raises(LogParseError) as caught:
        parse("2026-11-02 10:00:00 66.249.66.1 - /a curl/8.5.0")
    assert caught.value.reason == "no-request"


def test_an_incapsula_cs_uri_without_its_scheme_is_its_host_and_path():
    """Incapsula quotes every value and writes cs-uri as host then path, with no scheme."""
    parse = parser_for("w3c")
    with pytest.raises(LogParseError):
        parse('#Fields: date time c-ip cs-uri cs-method cs(User-Agent) sc-status')
    record = parse('"2026-11-02" "10:00:00" "66.249.66.1" "www.example.com:8443/a/page.php?b=1" "GET" "Googlebot/2.1" "200"')
    assert (record.host, record.path, record.target) == (
        "www.example.com", "/a/page.php?b=1", "www.example.com:8443/a/page.php?b=1")
    # A value that does not begin with a host name and a slash is still no target.
    with pytest.raises(LogParseError) as caught:
        parse('"2026-11-02" "10:00:00" "66.249.66.1" "page.php" "GET" "Googlebot/2.1" "200"')
    assert caught.value.reason == "bad-target"
