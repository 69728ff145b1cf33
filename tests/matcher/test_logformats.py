"""Access-log parsing through its entry point (`matcher.logformats.parser_for`): every format and
preset, time zones, targets, escapes, dead-letter reasons. The parts are tested beside it, in
tests/matcher/logformats/."""
from __future__ import annotations

import json
import pickle
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import BINGBOT, GOOGLEBOT
from matcher.hosts import host_key
from matcher.logformats import FORMATS, LogParseError, LogRecord, is_not_request, parser_for

UTC = timezone.utc
# 2026-10-10T13:55:36-07:00
INSTANT = datetime(2026, 10, 10, 20, 55, 36, tzinfo=UTC)
INSTANT_UNIX = 1791665736


def combined(request: str = "GET / HTTP/1.1", *, time: str = "10/Oct/2026:13:55:36 -0700",
             ip: str = "66.249.66.1", tail: str = f'"-" "{GOOGLEBOT}"') -> str:
    return f'{ip} - - [{time}] "{request}" 200 512 {tail}'


def reason_of(parse, line: str) -> str:
    with pytest.raises(LogParseError) as caught:
        parse(line)
    return caught.value.reason


# ------------------------------------------------------------ text formats


def test_nginx_combined_with_ipv6_client():
    line = ('2001:db8:85a3::8a2e:370:7334 - - [10/Oct/2026:20:55:36 +0000] '
            f'"GET /robots.txt HTTP/1.1" 200 431 "-" "{BINGBOT}"')
    record = parser_for("combined")(line)
    assert record == LogRecord(
        ts=INSTANT, host=None, client_ip="2001:db8:85a3::8a2e:370:7334", method="GET",
        target="/robots.txt", path="/robots.txt", status=200, size=431, referer=None,
        user_agent=BINGBOT,
    )
    assert record.ts.tzinfo is UTC


def test_combined_keeps_referer_and_fills_default_host():
    line = combined("GET /a?b=1 HTTP/2.0", tail=f'"https://www.google.com/" "{GOOGLEBOT}"')
    record = parser_for("combined", default_host="WWW.Example.COM:443")(line)
    assert record.referer == "https://www.google.com/"
    assert record.host == "www.example.com"
    assert (record.method, record.path) == ("GET", "/a?b=1")


def test_apache_common_has_no_referer_or_user_agent():
    line = '192.0.2.10 - frank [10/Oct/2026:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326'
    record = parser_for("common")(line)
    assert (record.client_ip, record.path, record.status, record.size) == ("192.0.2.10", "/apache_pb.gif", 200, 2326)
    assert (record.referer, record.user_agent, record.ts) == (None, "", INSTANT)


def test_common_rejects_a_combined_line():
    assert reason_of(parser_for("common"), combined()) == "no-match"


def test_apache_vhost_combined_with_port():
    line = (f'WWW.Example.com:443 66.249.66.1 - - [10/Oct/2026:13:55:36 -0700] '
            f'"GET /products?id=7 HTTP/1.1" 200 5120 "-" "{GOOGLEBOT}"')
    record = parser_for("vhost_combined", default_host="other.example")(line)
    assert (record.host, record.client_ip, record.path, record.ts) == (
        "www.example.com", "66.249.66.1", "/products?id=7", INSTANT)


def test_vhost_combined_without_port_as_suse_writes_it():
    line = f'www.example.com 66.249.66.1 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "-" "{GOOGLEBOT}"'
    assert parser_for("vhost_combined")(line).host == "www.example.com"


def test_nginx_host_combined():
    line = f'shop.example.org 203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "HEAD /cart HTTP/1.1" 304 0 "-" "{BINGBOT}"'
    record = parser_for("host_combined")(line)
    assert (record.host, record.client_ip, record.method, record.status, record.size) == (
        "shop.example.org", "203.0.113.9", "HEAD", 304, 0)


def test_host_field_dash_falls_back_to_default_host():
    line = f'- 203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.0" 200 1 "-" "{BINGBOT}"'
    assert parser_for("host_combined", default_host="example.com")(line).host == "example.com"
    assert parser_for("host_combined")(line).host is None


@pytest.mark.parametrize(("field", "host"), [
    ("WWW.Example.COM.:8080", "www.example.com"),
    ("[2001:DB8:0::1]:443", "[2001:db8::1]"),
    ("2001:db8::1", "[2001:db8::1]"),
    ("example.com:https", "example.com:https"),  # not a port
    ("example.com:\u0663", "example.com:\u0663"),  # nor are digits other than ASCII
])
def test_the_host_field_is_kept_in_the_form_robots_tables_are_keyed_by(field, host):
    line = f'{field} 203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.0" 200 1 "-" "{BINGBOT}"'
    assert parser_for("host_combined")(line).host == host == host_key(field)


@pytest.mark.parametrize("field", ["-", ".", ":443", "..:80"])
def test_a_host_field_with_nothing_of_a_host_falls_back_to_the_default_host_never_the_target(field):
    line = f'{field} 203.0.113.9 - - [10/Oct/2026:13:55:36 -0700] "GET http://Shop.Example/x HTTP/1.1" 200 1 "-" "-"'
    record = parser_for("host_combined")(line)
    assert (record.host, record.target_host) == (None, "shop.example")
    assert parser_for("host_combined", default_host="Site.Example")(line).host == "site.example"
    assert parser_for("host_combined")(line.replace("http://Shop.Example", "")).host is None


def test_nginx_main_format_trailing_forwarded_for():
    parse = parser_for("combined")
    with_chain = parse(combined(tail=f'"-" "{GOOGLEBOT}" "66.249.66.1, 10.0.0.2"'))
    assert with_chain.forwarded_for == "66.249.66.1, 10.0.0.2"
    assert parse(combined(tail=f'"-" "{GOOGLEBOT}" "-"')).forwarded_for is None
    assert parse(combined()).forwarded_for is None


def test_unknown_trailing_content_is_not_silently_dropped():
    line = combined(tail=f'"-" "{GOOGLEBOT}" cf_ray=8c2f0a1b2c3d4e5f-FRA')
    assert reason_of(parser_for("combined"), line) == "no-match"


def test_combined_xrt_reads_the_header_value():
    parse = parser_for("combined_xrt")
    record = parse(combined("GET /report.pdf HTTP/1.1", tail=f'"-" "{GOOGLEBOT}" "googlebot: noindex, nofollow"'))
    assert record.x_robots_tag == ("googlebot: noindex, nofollow",)
    assert record.forwarded_for is None
    assert parse(combined(tail=f'"-" "{GOOGLEBOT}" "-"')).x_robots_tag == ()


def test_combined_xrt_with_forwarded_for_before_the_header():
    line = combined(tail=f'"-" "{GOOGLEBOT}" "198.51.100.4" "noindex"')
    record = parser_for("combined_xrt")(line)
    assert (record.forwarded_for, record.x_robots_tag) == ("198.51.100.4", ("noindex",))


def test_combined_xrt_requires_the_header_field():
    assert reason_of(parser_for("combined_xrt"), combined()) == "no-match"


# -------------------------------------------------------------- timestamps


@pytest.mark.parametrize(("logged", "utc"), [
    ("10/Oct/2026:13:55:36 -0700", datetime(2026, 10, 10, 20, 55, 36, tzinfo=UTC)),
    ("10/Oct/2026:13:55:36 +0530", datetime(2026, 10, 10, 8, 25, 36, tzinfo=UTC)),
    ("10/Oct/2026:13:55:36 +0000", datetime(2026, 10, 10, 13, 55, 36, tzinfo=UTC)),
    ("31/Dec/2026:23:30:00 -0700", datetime(2027, 1, 1, 6, 30, tzinfo=UTC)),
    ("01/Jan/2027:02:00:00 +0530", datetime(2026, 12, 31, 20, 30, tzinfo=UTC)),
    ("29/Feb/2028:12:00:00 -0945", datetime(2028, 2, 29, 21, 45, tzinfo=UTC)),
])
def test_clf_time_converts_to_utc(logged: str, utc: datetime):
    assert parser_for("combined")(combined(time=logged)).ts == utc


@pytest.mark.parametrize("logged", [
    "32/Oct/2026:13:55:36 -0700",
    "29/Feb/2026:13:55:36 -0700",
    "10/Foo/2026:13:55:36 -0700",
    "10/Oct/2026:24:00:00 -0700",
    "10/Oct/2026:13:61:36 -0700",
    "10/Oct/2026:13:55:36",
    "10/Oct/2026:13:55:36 -07:00",
    "2026-10-10T13:55:36Z",
    "",
])
def test_bad_clf_time(logged: str):
    assert reason_of(parser_for("combined"), combined(time=logged)) == "bad-timestamp"


# ------------------------------------------------------------ request line


def test_absolute_form_target_gives_its_path_and_keeps_its_host_as_evidence_only():
    line = combined("GET http://WWW.Example.com:8080/p%20x?q=1 HTTP/1.1")
    record = parser_for("combined", default_host="fallback.example")(line)
    assert record.target == "http://WWW.Example.com:8080/p%20x?q=1"
    assert (record.path, record.host, record.target_host) == ("/p%20x?q=1", "fallback.example", "www.example.com")


@pytest.mark.parametrize(("target", "path"), [
    ("http://example.com", "/"),
    ("https://example.com?x=1", "/?x=1"),
    ("HTTPS://user@example.com/a/b", "/a/b"),
])
def test_absolute_form_without_path(target: str, path: str):
    record = parser_for("combined")(combined(f"GET {target} HTTP/1.1"))
    assert (record.path, record.host, record.target_host) == (path, None, "example.com")


def test_line_host_wins_over_the_absolute_target_host():
    line = ('site.example 192.0.2.1 - - [10/Oct/2026:13:55:36 -0700] '
            '"GET http://other.example/x HTTP/1.1" 200 1 "-" "-"')
    record = parser_for("host_combined")(line)
    assert (record.host, record.path, record.target_host) == ("site.example", "/x", "other.example")


def test_a_json_target_url_names_the_host_of_a_layout_that_logs_none_a_logged_host_wins():
    mapping = {"ts": "t", "client_ip": "ip", "method": "m", "target": "u"}
    line = json.dumps({"t": 1, "ip": "192.0.2.1", "m": "GET", "u": "http://other.example/x"})
    record = parser_for("jsonl", default_host="site.example", mapping=mapping)(line)
    assert (record.host, record.target_host) == ("other.example", "other.example")
    own_host = parser_for("gcp_lb", mapping={"host": "httpRequest.serverName"})
    entry = {**GCP_ENTRY, "httpRequest": {**GCP_ENTRY["httpRequest"], "serverName": "lb.example"}}
    assert own_host(json.dumps(entry)).host == "lb.example"


def test_percent_encoded_path_is_kept_as_written():
    target = "/caf%C3%A9/%7euser/a%2Fb?q=%2F&r=%zz"
    assert parser_for("combined")(combined(f"GET {target} HTTP/1.1")).path == target


def test_http09_request_line_without_version():
    record = parser_for("combined")(combined("GET /old"))
    assert (record.method, record.target) == ("GET", "/old")


def test_target_with_a_space_is_kept_whole():
    assert parser_for("combined")(combined("GET /a b HTTP/1.1")).path == "/a b"


def test_nginx_escaped_bytes_in_target():
    parse = parser_for("combined")
    assert parse(combined(r"GET /caf\xC3\xA9 HTTP/1.1")).path == "/café"
    # Not UTF-8: escaped the way robots.txt normalization escapes raw bytes.
    assert parse(combined(r"GET /caf\xE9 HTTP/1.1")).path == "/caf%E9"


@pytest.mark.parametrize(("request_line", "reason"), [
    ("-", "no-request"),
    ("", "no-request"),
    (r"\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03\xA5\x8B", "not-http"),
    (r"\x16\x03\x01", "not-http"),
    (r"\x00\x00\x00", "not-http"),
    ("GET", "bad-request-line"),
    ("GET  /double-space HTTP/1.1", "bad-request-line"),
    ("CONNECT example.com:443 HTTP/1.1", "authority-form"),
    ("CONNECT [2001:db8::1]:443 HTTP/1.1", "authority-form"),
    ("OPTIONS * HTTP/1.1", "asterisk-form"),
    ("GET ftp://example.com/file HTTP/1.1", "bad-target"),
    ("SSH-2.0-OpenSSH_9.6", "bad-request-line"),
])
def test_requests_that_are_not_page_fetches_are_dead_letters(request_line: str, reason: str):
    line = f'198.51.100.23 - - [10/Oct/2026:13:55:36 +0000] "{request_line}" 400 157 "-" "-"'
    assert reason_of(parser_for("combined"), line) == reason


@pytest.mark.parametrize(("request_line", "not_request"), [
    ("-", True), (r"\x16\x03\x01", True), ("CONNECT example.com:443 HTTP/1.1", True), ("OPTIONS * HTTP/1.1", True),
    ("GET", False), ("GET ftp://example.com/file HTTP/1.1", False), ("SSH-2.0-OpenSSH_9.6", False),
])
def test_lines_the_server_wrote_without_a_request_for_a_resource_are_not_requests(request_line, not_request):
    line = f'198.51.100.23 - - [10/Oct/2026:13:55:36 +0000] "{request_line}" 408 0 "-" "-"'
    assert is_not_request(reason_of(parser_for("combined"), line)) is not_request


# ----------------------------------------------------------------- escapes


def test_apache_escaped_quotes_in_user_agent():
    ua = r'Mozilla/5.0 \"quoted\" (compatible; FooBot/1.2; back\\slash)'
    record = parser_for("combined")(combined(tail=f'"-" "{ua}"'))
    assert record.user_agent == 'Mozilla/5.0 "quoted" (compatible; FooBot/1.2; back\\slash)'


def test_escaped_quote_in_request_and_referer():
    line = combined(r'GET /search?q=\"robots\" HTTP/1.1', tail=r'"https://e.example/?q=\"x\"" "UA"')
    record = parser_for("combined")(line)
    assert record.path == '/search?q="robots"'
    assert record.referer == 'https://e.example/?q="x"'


def test_unescaped_quote_is_malformed_not_an_extra_field():
    # Under Apache's escaping `"A\" "B"` is one field holding `A" ` and a stray `B"`.
    assert reason_of(parser_for("combined"), combined(tail='"-" "A\\" "B"')) == "no-match"


def test_field_ending_in_an_escaped_backslash():
    record = parser_for("combined")(combined(tail='"-" "Bot\\\\" "10.0.0.1"'))
    assert (record.user_agent, record.forwarded_for) == ("Bot\\", "10.0.0.1")


def test_nginx_hex_escapes_in_user_agent():
    record = parser_for("combined")(combined(tail=r'"-" "Bot \x22quoted\x22 caf\xC3\xA9 \xFF"'))
    assert record.user_agent == 'Bot "quoted" café \\xff'


# ---------------------------------------------------------- line hygiene


def test_trailing_carriage_return_and_stray_whitespace():
    parse = parser_for("combined")
    assert parse("  " + combined() + " \t\r\n") == parse(combined())


def test_byte_order_mark_on_the_first_line():
    assert parser_for("combined")("\ufeff" + combined()).path == "/"


@pytest.mark.parametrize("name", ["combined", "common", "jsonl", "cloudflare"])
@pytest.mark.parametrize("line", ["", "\n", "  \r\n"])
def test_blank_lines(name: str, line: str):
    parse = parser_for(name, mapping={"ts": "t", "client_ip": "ip", "request": "r"} if name == "jsonl" else None)
    assert reason_of(parse, line) == "blank"


@pytest.mark.parametrize("line", [
    combined()[:60],                                     # truncated mid-request
    combined()[: len(combined()) - 5],                   # truncated mid user agent
    "hello world",
    "\x00\x00\x00\x00",
    '66.249.66.1 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" OK 512 "-" "-"',
    '66.249.66.1 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 12k "-" "-"',
    '66.249.66.1 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 ' + "9" * 5000 + ' "-" "-"',
])
def test_garbage_and_truncated_lines(line: str):
    assert reason_of(parser_for("combined"), line) == "no-match"


def test_dash_status_and_size():
    line = '192.0.2.10 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" - - "-" "-"'
    record = parser_for("combined")(line)
    # Apache writes `-` for a response without a body: it sent 0 bytes.
    assert (record.status, record.size, record.referer, record.user_agent) == (None, 0, None, "")


# ------------------------------------------------------------ JSON formats


def cloudflare_line(**overrides: object) -> str:
    record: dict[str, object] = {
        "ClientIP": "66.249.66.1",
        "ClientRequestHost": "www.example.com",
        "ClientRequestMethod": "GET",
        "ClientRequestURI": "/search?q=a%20b",
        "ClientRequestReferer": "",
        "ClientRequestUserAgent": GOOGLEBOT,
        "EdgeResponseBytes": 2048,
        "EdgeResponseStatus": 200,
        "EdgeStartTimestamp": INSTANT_UNIX * 1_000_000_000 + 123456789,
        "RayID": "8c2f0a1b2c3d4e5f",
        "VerifiedBotCategory": "Search Engine Crawler",
    }
    record.update(overrides)
    return json.dumps(record)


@pytest.mark.parametrize(("encoded", "expected"), [
    (INSTANT_UNIX * 1_000_000_000 + 123456789, INSTANT + timedelta(microseconds=123456)),  # unixnano
    (INSTANT_UNIX, INSTANT),                                                               # unix
    ("2026-10-10T20:55:36Z", INSTANT),                                                     # rfc3339
    ("2026-10-10T22:55:36.5+02:00", INSTANT + timedelta(milliseconds=500)),
])
def test_cloudflare_logpush_timestamp_encodings(encoded: object, expected: datetime):
    record = parser_for("cloudflare")(cloudflare_line(EdgeStartTimestamp=encoded))
    assert record.ts == expected


def test_cloudflare_logpush_fields():
    record = parser_for("cloudflare")(cloudflare_line())
    assert record == LogRecord(
        ts=INSTANT + timedelta(microseconds=123456), host="www.example.com", client_ip="66.249.66.1",
        method="GET", target="/search?q=a%20b", path="/search?q=a%20b", status=200, size=2048,
        referer=None, user_agent=GOOGLEBOT,
    )


def test_cloudflare_custom_response_header_field():
    line = cloudflare_line(ResponseHeaders={"x-robots-tag": "noindex"})
    assert parser_for("cloudflare")(line).x_robots_tag == ("noindex",)


def test_cloudflare_without_host_uses_default():
    line = cloudflare_line(ClientRequestHost="")
    assert parser_for("cloudflare", default_host="example.net")(line).host == "example.net"


GCP_ENTRY = {
    "httpRequest": {
        "latency": "0.058927s",
        "referer": "https://www.google.com/",
        "remoteIp": "2001:4860:4801:10::1",
        "requestMethod": "GET",
        "requestSize": "257",
        "requestUrl": "https://WWW.Example.com/console/?a=1",
        "responseSize": "1467",
        "serverIp": "10.0.0.5",
        "status": 302,
        "userAgent": GOOGLEBOT,
    },
    "insertId": "1c2d3e4f5a6b7c",
    "jsonPayload": {
        "@type": "type.googleapis.com/google.cloud.loadbalancing.type.LoadBalancerLogEntry",
        "statusDetails": "response_sent_by_backend",
    },
    "logName": "projects/demo/logs/requests",
    "receiveTimestamp": "2026-10-10T20:55:37.001Z",
    "resource": {"type": "http_load_balancer", "labels": {"forwarding_rule_name": "fr-https"}},
    "severity": "INFO",
    "timestamp": "2026-10-10T20:55:36.123456789Z",
}


def test_gcp_load_balancer_entry():
    record = parser_for("gcp_lb")(json.dumps(GCP_ENTRY))
    assert record == LogRecord(
        ts=INSTANT + timedelta(microseconds=123456), host="www.example.com", client_ip="2001:4860:4801:10::1",
        method="GET", target="https://WWW.Example.com/console/?a=1", path="/console/?a=1", status=302,
        size=1467, referer="https://www.google.com/", user_agent=GOOGLEBOT, target_host="www.example.com",
    )


def test_gcp_entry_without_user_agent_or_referer():
    entry = json.loads(json.dumps(GCP_ENTRY))
    del entry["httpRequest"]["userAgent"], entry["httpRequest"]["referer"]
    record = parser_for("gcp_lb")(json.dumps(entry))
    assert (record.user_agent, record.referer) == ("", None)


def test_gcp_entry_that_is_not_a_request_log():
    entry = {"timestamp": "2026-10-10T20:55:36Z", "textPayload": "backend health changed"}
    assert reason_of(parser_for("gcp_lb"), json.dumps(entry)) == "missing-field"


NGINX_JSON_MAPPING = {
    "ts": "time_local", "client_ip": "remote_addr", "request": "request", "status": "status",
    "size": "body_bytes_sent", "host": "http_host", "user_agent": "http_user_agent",
    "forwarded_for": "http_x_forwarded_for",
}


def test_jsonl_with_nginx_json_log_mapping():
    line = json.dumps({
        "time_local": "10/Oct/2026:13:55:36 -0700", "remote_addr": "10.0.0.3", "request": "GET /x?y=1 HTTP/1.1",
        "status": "200", "body_bytes_sent": "93", "http_host": "Example.com:8443",
        "http_user_agent": 'Bot "with quotes"', "http_x_forwarded_for": "66.249.66.1",
    })
    record = parser_for("jsonl", mapping=NGINX_JSON_MAPPING)(line)
    assert (record.ts, record.host, record.method, record.path, record.status, record.size) == (
        INSTANT, "example.com", "GET", "/x?y=1", 200, 93)
    assert (record.user_agent, record.forwarded_for) == ('Bot "with quotes"', "66.249.66.1")


def test_jsonl_nested_paths_list_index_and_float_epoch():
    mapping = {
        "ts": "ts", "client_ip": "request.client_ip", "host": "request.host", "method": "request.method",
        "target": "request.uri", "status": "status", "user_agent": "request.headers.User-Agent.0",
        "x_robots_tag": "resp_headers.X-Robots-Tag",
    }
    line = json.dumps({
        "ts": INSTANT_UNIX + 0.25, "status": 200,
        "request": {"client_ip": "192.0.2.5", "host": "example.com", "method": "GET", "uri": "/a",
                    "headers": {"User-Agent": ["FooBot/1.0"]}},
        "resp_headers": {"X-Robots-Tag": ["noindex", "bingbot: noarchive"]},
    })
    record = parser_for("jsonl", mapping=mapping)(line)
    assert record.ts == INSTANT + timedelta(milliseconds=250)
    assert (record.client_ip, record.user_agent) == ("192.0.2.5", "FooBot/1.0")
    assert record.x_robots_tag == ("noindex", "bingbot: noarchive")


def test_preset_mapping_can_be_extended():
    parse = parser_for("cloudflare", mapping={"forwarded_for": "RequestHeaders.x-forwarded-for"})
    line = cloudflare_line(RequestHeaders={"x-forwarded-for": "203.0.113.1"})
    assert parse(line).forwarded_for == "203.0.113.1"


@pytest.mark.parametrize(("line", "reason"), [
    ('{"ClientIP": "66.249.66.1", "EdgeStartTim', "bad-json"),
    ("not json at all", "bad-json"),
    ('["ClientIP", "66.249.66.1"]', "bad-json"),
    ("[" * 100_000, "bad-json"),
    (cloudflare_line(ClientIP=None), "missing-field"),
    (cloudflare_line(EdgeStartTimestamp=""), "missing-field"),
    (cloudflare_line(ClientRequestURI=""), "missing-field"),
    (cloudflare_line(EdgeStartTimestamp="yesterday"), "bad-timestamp"),
    (cloudflare_line(EdgeStartTimestamp="2026-10-10T20:55:36"), "bad-timestamp"),
    (cloudflare_line(EdgeStartTimestamp=True), "bad-timestamp"),
    (cloudflare_line(EdgeStartTimestamp=float("inf")), "bad-timestamp"),
    (cloudflare_line(EdgeStartTimestamp=10**30), "bad-timestamp"),
    (cloudflare_line(EdgeStartTimestamp="9" * 5000), "bad-timestamp"),
    (cloudflare_line(EdgeResponseStatus="OK"), "bad-status"),
    (cloudflare_line(EdgeResponseStatus=1200), "bad-status"),
    (cloudflare_line(EdgeResponseBytes="12k"), "bad-field"),
    (cloudflare_line(EdgeResponseBytes="9" * 5000), "bad-field"),
    (cloudflare_line(ClientIP=["66.249.66.1"]), "bad-field"),
    (cloudflare_line(ResponseHeaders={"x-robots-tag": 7}), "bad-field"),
    (cloudflare_line(ClientRequestURI="*"), "asterisk-form"),
    (cloudflare_line(ClientRequestURI="a/b"), "bad-target"),
])
def test_bad_json_lines(line: str, reason: str):
    assert reason_of(parser_for("cloudflare"), line) == reason


def test_jsonl_request_dash_is_no_request():
    line = json.dumps({"time_local": "10/Oct/2026:13:55:36 -0700", "remote_addr": "192.0.2.1", "request": "-"})
    assert reason_of(parser_for("jsonl", mapping=NGINX_JSON_MAPPING), line) == "no-request"


# ------------------------------------------------------------- entry point


_CLF = '66.249.66.1 - - [10/Oct/2026:20:55:36 +0000] "GET /a?x=1 HTTP/1.1" 200 5'
# One request, written the way each format writes it.
_ONE_REQUEST = {
    "combined": f'{_CLF} "-" "{GOOGLEBOT}"',
    "common": _CLF,
    "vhost_combined": f'www.example.com:443 {_CLF} "-" "{GOOGLEBOT}"',
    "host_combined": f'www.example.com {_CLF} "-" "{GOOGLEBOT}"',
    "combined_xrt": f'{_CLF} "-" "{GOOGLEBOT}" "-"',
    "vhost_common": f"www.example.com {_CLF}",
    "gandi": f'www.example.com {_CLF.replace("] ", "] (0 s) ")} "-" "{GOOGLEBOT}"',
    "lighttpd": f'{_CLF.replace(" - - ", " www.example.com - ")} "-" "{GOOGLEBOT}"',
    "ovh": f'{_CLF.replace(" - - ", " www.example.com - ")} "-" "{GOOGLEBOT}"',
    "icecast2": f'{_CLF} "-" "{GOOGLEBOT}" 12',
    "jsonl": json.dumps({"t": "2026-10-10T20:55:36Z", "ip": "66.249.66.1", "r": "GET /a?x=1 HTTP/1.1", "ua": GOOGLEBOT}),
    "cloudflare": cloudflare_line(EdgeStartTimestamp=INSTANT_UNIX * 1_000_000_000, ClientRequestURI="/a?x=1"),
    "gcp_lb": json.dumps({
        "timestamp": "2026-10-10T20:55:36Z",
        "httpRequest": {"remoteIp": "66.249.66.1", "requestMethod": "GET", "requestUrl": "https://www.example.com/a?x=1",
                        "status": 200, "userAgent": GOOGLEBOT},
    }),
    "varnishncsa": f'66.249.66.1 - - [10/Oct/2026:20:55:36 +0000] "GET http://www.example.com/a?x=1 HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
    "w3c": f"2026-10-10 20:55:36 10.0.0.4 GET /a x=1 443 - 66.249.66.1 {GOOGLEBOT.replace('+', '%2B').replace(' ', '+')} - 200 0 0 15",
    "cloudfront": "\t".join([
        "2026-10-10", "20:55:36", "SEA19-C1", "5", "66.249.66.1", "GET", "d1.cloudfront.net", "/a", "200", "-",
        GOOGLEBOT.replace(" ", "%20"), "x=1", "-", "Hit", "id", "www.example.com", "https", "160", "0.1", "-", "TLSv1.3",
        "TLS_AES_128_GCM_SHA256", "Hit", "HTTP/2.0", "-", "-", "11040", "0.1", "Hit", "text/html", "78", "-", "-",
    ]),
    "aws_alb": f'http 2026-10-10T20:55:36Z app/lb/50dc 66.249.66.1:2817 - -1 -1 -1 200 - 34 366 "GET http://www.example.com:80/a?x=1 HTTP/1.1" "{GOOGLEBOT}" - - arn "Root=1" "-" "-" 0',
    "aws_elb": f'2026-10-10T20:55:36Z lb 66.249.66.1:2817 - -1 -1 -1 200 - 0 29 "GET http://www.example.com:80/a?x=1 HTTP/1.1" "{GOOGLEBOT}" - -',
    "aws_s3": f'79a5 bucket [10/Oct/2026:20:55:36 +0000] 66.249.66.1 - 3E57 WEBSITE.GET.OBJECT a "GET /a?x=1 HTTP/1.1" 200 - 113 113 7 - "-" "{GOOGLEBOT}" -',
    "haproxy": '66.249.66.1:33317 [10/Oct/2026:20:55:36.000] in st/s1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 "GET /a?x=1 HTTP/1.1"',
    "python_http": '66.249.66.1 - - [10/Oct/2026 20:55:36] "GET /a?x=1 HTTP/1.1" 200 -',
    "traefik": f'66.249.66.1 - - [10/Oct/2026:20:55:36 +0000] "GET /a?x=1 HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" 1 "r@docker" "-" 0ms',
    "squid": "1791665736.000 180 66.249.66.1 TCP_MISS/200 411 GET /a?x=1 - HIER_DIRECT/93.184.216.34 text/html",
    "caddy": json.dumps({"ts": INSTANT_UNIX, "request": {"client_ip": "66.249.66.1", "method": "GET", "uri": "/a?x=1",
                         "headers": {"User-Agent": [GOOGLEBOT]}}, "status": 200}),
    "traefik_json": json.dumps({"StartUTC": "2026-10-10T20:55:36Z", "ClientHost": "66.249.66.1", "RequestMethod": "GET",
                                "RequestPath": "/a?x=1", "request_User-Agent": GOOGLEBOT}),
    "nginx_json": json.dumps({"time_local": "10/Oct/2026:20:55:36 +0000", "remote_addr": "66.249.66.1", "request_method": "GET",
                              "request_uri": "/a?x=1", "http_user_agent": GOOGLEBOT}),
    "matomo_json": json.dumps({"ip": "66.249.66.1", "host": "www.example.com", "path": "/a?x=1", "status": "200",
                               "user_agent": GOOGLEBOT, "date": "2026-10-10T20:55:36+00:00"}),
    "fastly": json.dumps({"time_start": "2026-10-10T20:55:36Z", "client_ip": "66.249.66.1", "request": "GET", "url": "/a?x=1",
                          "request_user_agent": GOOGLEBOT}),
    "akamai_ds2": json.dumps({"reqTimeSec": str(INSTANT_UNIX), "cliIP": "66.249.66.1", "reqMethod": "GET", "reqPath": "/a",
                              "queryStr": "x=1", "UA": GOOGLEBOT.replace("+", "%2B").replace(" ", "+")}),
}
# Formats that log no User-Agent by default, and those that log no method.
_NO_USER_AGENT = {"common", "vhost_common", "haproxy", "python_http", "squid"}
_NO_METHOD = {"matomo_json"}


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_reads_the_same_request(name):
    mapping = {"ts": "t", "client_ip": "ip", "request": "r", "user_agent": "ua"} if name == "jsonl" else None
    record = parser_for(name, mapping=mapping)(_ONE_REQUEST[name])
    method = None if name in _NO_METHOD else "GET"
    assert (record.ts, record.client_ip, record.method, record.path) == (INSTANT, "66.249.66.1", method, "/a?x=1")
    assert record.user_agent == ("" if name in _NO_USER_AGENT else GOOGLEBOT)


def test_unknown_format_lists_the_known_ones():
    with pytest.raises(ValueError, match="known formats: combined, common") as caught:
        parser_for("apache")
    assert not isinstance(caught.value, LogParseError)


@pytest.mark.parametrize(("name", "mapping", "message"), [
    ("jsonl", None, "needs a field mapping"),
    ("combined", {"ts": "t"}, "takes no field mapping"),
    ("jsonl", {"ts": "t", "client_ip": "ip", "request": "r", "colour": "c"}, "unknown mapping fields"),
    ("jsonl", {"ts": "t", "client_ip": "ip", "method": "m"}, "needs 'ts', 'client_ip'"),
    ("jsonl", {"ts": "t", "client_ip": "ip..x", "request": "r"}, "dotted field path"),
])
def test_bad_parser_configuration(name: str, mapping: dict[str, str] | None, message: str):
    with pytest.raises(ValueError, match=message):
        parser_for(name, mapping=mapping)


# ------------------------------------------------------- records and errors


def test_parsers_pickle_for_workers():
    parse = pickle.loads(pickle.dumps(parser_for("gcp_lb", default_host="example.com")))
    assert parse(json.dumps(GCP_ENTRY)).host == "www.example.com"


@settings(max_examples=400, deadline=None)
@given(line=st.text(max_size=300))
def test_any_text_either_parses_or_raises_a_parse_error(line: str):
    for name in FORMATS:
        mapping = {"ts": "t", "client_ip": "ip", "request": "r"} if name == "jsonl" else None
        try:
            parser_for(name, mapping=mapping)(line)
        except LogParseError:
            pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(fields=st.fixed_dictionaries({}, optional={
    "EdgeStartTimestamp": json_values, "ClientIP": json_values, "ClientRequestMethod": json_values,
    "ClientRequestURI": json_values, "ClientRequestHost": json_values, "EdgeResponseStatus": json_values,
    "EdgeResponseBytes": json_values, "ResponseHeaders": json_values, "ClientRequestUserAgent": json_values,
}))
def test_any_json_object_either_parses_or_raises_a_parse_error(fields: dict[str, object]):
    try:
        record = parser_for("cloudflare")(json.dumps(fields))
    except LogParseError:
        return
    assert record.ts.tzinfo is not None and record.path
