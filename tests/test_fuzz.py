"""Fuzzing: arbitrary and mutated bytes into every parser of hostile input and every table reader.

Each harness states the only outcome allowed besides a result: a parser's own error type (a dead
letter), or for a table its one error type (exit 2). Anything else is a crash. Records that come
out must be writable as UTF-8 JSON, as the sinks write them. The example budget is fixed so that
CI runs the whole file in well under a minute; CRAWL_AUDIT_FUZZ_EXAMPLES raises it for a longer
run. Inputs that once crashed stay here as explicit examples.
"""
from __future__ import annotations

import ipaddress
import json
import os
from datetime import date, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from config.registry import load_registry
from config.snapshots import load_ranges
from helpers import GOOGLEBOT
from matcher import directives, records, robots
from matcher.directives import PageDirectivesError
from matcher.history import RobotsTableError
from matcher.ip_ranges import BROADEST_PREFIX, RangeIndex, parse_snapshot
from pipeline.evidence.page_directives import read_page_directives
from matcher.line_auditor import LineAuditor, host_versions
from matcher.logformats import FORMATS, LogParseError, parser_for
from matcher.logformats.format_string import compile_format
from matcher.logformats.json_text import json_bytes_text, loads_logged
from matcher.logformats.pattern_check import check_pattern
from pipeline.evidence.resolvers import read_snapshot
from pipeline.graph.read_logs import LONG_LINE_PREFIX_BYTES, log_lines, split_lines
from pipeline.evidence.robots_table import read_robots_table

BUDGET = settings(
    max_examples=int(os.environ.get("CRAWL_AUDIT_FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FIELD_MAP = {"ts": "ts", "client_ip": "ip", "request": "req", "user_agent": "ua", "host": "host",
             "status": "status", "size": "size", "x_robots_tag": "xrt"}

# One well-formed line per format: mutations of these reach far deeper than random bytes.
SEEDS = {
    "common": '66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET /a?b=1 HTTP/1.1" 200 512',
    "combined": f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET /a HTTP/1.1" 200 512 "-" "{GOOGLEBOT}"',
    "vhost_combined": f'example.com:443 66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET http://x.test/a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
    "host_combined": f'example.com 66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" "1.2.3.4"',
    "combined_xrt": f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" "noindex"',
    "jsonl": json.dumps({"ts": "2026-11-02T10:00:00+01:00", "ip": "66.249.66.1", "req": "GET /a HTTP/1.1",
                         "ua": GOOGLEBOT, "host": "example.com", "status": 200, "size": 5, "xrt": ["noindex"]}),
    "cloudflare": json.dumps({"EdgeStartTimestamp": 1793613600, "ClientIP": "66.249.66.1", "ClientRequestHost": "example.com",
                              "ClientRequestMethod": "GET", "ClientRequestURI": "/a", "EdgeResponseStatus": 200,
                              "ClientRequestUserAgent": GOOGLEBOT}),
    "gcp_lb": json.dumps({"timestamp": "2026-11-02T10:00:00.123456789Z", "httpRequest": {
        "remoteIp": "66.249.66.1", "requestMethod": "GET", "requestUrl": "https://example.com/a", "status": 200,
        "userAgent": GOOGLEBOT}}),
    "vhost_common": 'example.com 66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET /a?b=1 HTTP/1.1" 200 512',
    "gandi": f'example.com 66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] (0 s) "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
    "lighttpd": f'66.249.66.1 example.com - [02/Nov/2026:10:00:00 +0100] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
    "ovh": f'66.249.66.1 example.com:443 - [02/Nov/2026:10:00:00 +0100] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
    "icecast2": f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET /live.ogg HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" 3600',
    "varnishncsa": f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET http://example.com/a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
    "w3c": f"2026-11-02 09:00:00 10.0.0.4 GET /a b=1 443 - 66.249.66.1 {GOOGLEBOT.replace(' ', '+')} - 200 0 0 15",
    "cloudfront": "\t".join([
        "2026-11-02", "09:00:00", "SEA19-C1", "5", "66.249.66.1", "GET", "d1.cloudfront.net", "/a", "200", "-",
        GOOGLEBOT.replace(" ", "%20"), "b=1", "-", "Hit", "id", "example.com", "https", "160", "0.1", "-", "TLSv1.3",
        "TLS_AES_128_GCM_SHA256", "Hit", "HTTP/2.0", "-", "-", "11040", "0.1", "Hit", "text/html", "78", "-", "-",
    ]),
    "aws_alb": f'http 2026-11-02T09:00:00.186641Z app/lb/50dc 66.249.66.1:2817 10.0.1.252:48160 0.000 0.001 0.000 200 200 34 366 "GET http://example.com:80/a HTTP/1.1" "{GOOGLEBOT}" - - arn "Root=1" "-" "-" 0',
    "aws_elb": f'2026-11-02T09:00:00.945958Z lb 66.249.66.1:2817 10.0.0.1:80 0.000073 0.001048 0.000057 200 200 0 29 "GET http://example.com:80/a HTTP/1.1" "{GOOGLEBOT}" - -',
    "aws_s3": f'79a5 bucket [02/Nov/2026:10:00:00 +0100] 66.249.66.1 - 3E57 WEBSITE.GET.OBJECT a "GET /a HTTP/1.1" 200 - 113 113 7 - "-" "{GOOGLEBOT}" - s9lz - - - example.com - - -',
    "haproxy": 'Nov  2 09:00:00 lb haproxy[1]: 66.249.66.1:33317 [02/Nov/2026:09:00:00.655] in st/s1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {example.com} {} "GET /a HTTP/1.1"',
    "python_http": '::ffff:66.249.66.1 - - [02/Nov/2026 09:00:00] "GET /a?b=1 HTTP/1.1" 200 -',
    "traefik": f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0100] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" 1 "web@docker" "http://172.18.0.3:80" 3ms',
    "squid": "1793613600.779    180 66.249.66.1 TCP_MISS/200 411 GET http://example.com/a - HIER_DIRECT/93.184.216.34 text/html",
    "caddy": json.dumps({"ts": 1793613600.52, "request": {"client_ip": "66.249.66.1", "method": "GET", "host": "example.com",
                         "uri": "/a", "headers": {"User-Agent": [GOOGLEBOT]}}, "status": 200, "size": 5}),
    "traefik_json": json.dumps({"StartUTC": "2026-11-02T09:00:00.123456789Z", "ClientHost": "66.249.66.1", "RequestHost": "example.com",
                                "RequestMethod": "GET", "RequestPath": "/a", "DownstreamStatus": 200, "request_User-Agent": GOOGLEBOT}),
    "nginx_json": json.dumps({"time_iso8601": "2026-11-02T10:00:00+01:00", "remote_addr": "66.249.66.1", "request": "GET /a HTTP/1.1",
                              "status": "200", "body_bytes_sent": "5", "http_user_agent": GOOGLEBOT, "host": "example.com"}),
    "matomo_json": json.dumps({"ip": "66.249.66.1", "host": "example.com", "path": "/a", "status": "200", "referrer": "",
                               "user_agent": GOOGLEBOT, "length": 5, "date": "2026-11-02T10:00:00+01:00"}),
    "fastly": json.dumps({"timestamp": "2026-11-02T09:00:00+0000", "client_ip": "66.249.66.1", "host": "example.com", "url": "/a",
                          "request_method": "GET", "request_user_agent": GOOGLEBOT, "response_status": 200}),
    "akamai_ds2": json.dumps({"reqTimeSec": "1793613600", "cliIP": "66.249.66.1", "reqHost": "example.com", "reqMethod": "GET",
                              "reqPath": "/a", "queryStr": "b=1", "statusCode": "200", "UA": "Googlebot%2F2.1+%28%2Bhttp%3A%2F%2Fwww.google.com%2Fbot.html%29"}),
}
assert set(SEEDS) == set(FORMATS)
# The server's own format strings, each with a line it writes.
FORMAT_STRINGS = {
    'apache:%v:%p %a %l %u %{%Y-%m-%d %H:%M:%S}t "%r" %>s %O "%{Referer}i" "%{User-Agent}i" %D "%{X-Forwarded-For}i"':
        f'example.com:443 66.249.66.1 - - 2026-11-02 10:00:00 "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" 1234 "1.2.3.4"',
    'nginx:$host $remote_addr - $remote_user [$time_iso8601] "$request_method" "$request_uri" $status $body_bytes_sent "$http_user_agent" $msec':
        f'example.com 66.249.66.1 - - [2026-11-02T10:00:00+01:00] "GET" "/a" 200 5 "{GOOGLEBOT}" 1793613600.123',
}
FORMAT_STRINGS["cloudfront_realtime:timestamp,c-ip,sc-status,sc-bytes,cs-method,cs-host,cs-uri-stem,cs-user-agent,"
               "cs-referer,x-forwarded-for"] = "\t".join([
    "1793613600.123", "66.249.66.1", "200", "5", "GET", "example.com", "/a?b=1", GOOGLEBOT.replace(" ", "%20"), "-", "-",
])
# Formats inside envelopes.
FORMAT_STRINGS.update({
    "syslog+combined": f"<190>Nov  2 10:00:00 web1 nginx: {SEEDS['combined']}",
    "cri+w3c": f"2026-11-02T10:00:00.1Z stdout F {SEEDS['w3c']}",
    "docker+nginx_json": json.dumps({"log": SEEDS["nginx_json"] + "\n", "stream": "stdout"}),
})
SEEDS.update(FORMAT_STRINGS)

# Pieces that sit on the edges of what the parsers accept.
PIECES = [
    "\r", "\n", "\r\n", "\x00", "\x1b[2J", '"', '\\"', "\\", "\\x16\\x03", "\\ud800", "\ud800", "\udfff", "\ufeff",
    "[", "]", "{", "}", "[01/Jan/0001:00:00:00 +0100]", "31/Dec/9999:23:59:59 -0100", "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-01:00", "99999999999999999999", "1e400", "-1", "NaN", "%", "%2F", "*", "$", "::ffff:1.2.3.4",
    " ", "\t", "Crawl-delay: 99999999999999", "User-agent: *", "Disallow: /*x*y", "é", "\U0001f600", "-",
]


@st.composite
def mutated(draw, seed: str) -> str:
    """`seed` with a few spans replaced by edge pieces or arbitrary text."""
    text = seed
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 12)))
        insert = draw(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)))
        text = text[:start] + insert + text[end:]
    return text


def lines_for(name: str):
    return st.one_of(mutated(SEEDS[name]), st.text(max_size=200),
                     st.binary(max_size=200).map(lambda raw: raw.decode("utf-8", "backslashreplace")))


def _writable(record: dict) -> None:
    """What the JSON sink does with a record: it must not fail."""
    json.dumps(records.to_json_ready(record, records.TABLES["verdicts"]), ensure_ascii=False).encode("utf-8")


def _parse_or_dead_letter(parse, line: str) -> None:
    try:
        record = parse(line)
    except LogParseError as error:
        assert error.reason and isinstance(error.message, str)
        return
    assert record.ts.tzinfo is not None
    for text in (record.host or "", record.client_ip, record.method or "", record.target, record.path,
                 record.referer or "", record.user_agent, record.forwarded_for or "", *record.x_robots_tag):
        text.encode("utf-8")


@pytest.mark.parametrize("name", [*FORMATS, *FORMAT_STRINGS])
def test_every_log_format_parser_takes_any_line(name):
    parse = parser_for(name, "default.test", FIELD_MAP if name == "jsonl" else None)

    @BUDGET
    @given(lines_for(name))
    @example('{"ts":"0001-01-01T00:00:00+01:00","ip":"1","req":"GET / HTTP/1.1"}')
    @example('{"ts":"2026-01-01T00:00:00Z","ip":"1","req":"GET /\\ud800 HTTP/1.1","ua":"\\udfff"}')
    @example('x 1 - - [01/Jan/0001:00:00:00 +0100] "GET / HTTP/1.1" 200 5 "-" "-"')
    @example('x 1 - - [31/Dec/9999:23:59:59 -0100] "GET / HTTP/1.1" 200 5 "-" "-"')
    def check(line):
        _parse_or_dead_letter(parse, line)

    check()


REGISTRY = load_registry()
RANGES = load_ranges(Path(__file__).resolve().parent.parent / "samples" / "ranges", REGISTRY)
ROBOTS_BY_HOST = {
    "example.com": host_versions([
        _version for _version in read_robots_table(
            str(Path(__file__).resolve().parent.parent / "samples" / "robots" / "history.jsonl"))
        if _version.host == "www.example.com"
    ]),
}


@pytest.mark.parametrize("name", ["host_combined", "jsonl"])
def test_the_per_line_audit_writes_every_record_it_makes(name):
    auditor = LineAuditor(
        log_format=name, default_host="example.com", field_map=FIELD_MAP if name == "jsonl" else None,
        registry=REGISTRY, ranges=RANGES, error_limit=timedelta(days=30), grace=timedelta(days=1),
    )

    @BUDGET
    @given(st.lists(lines_for(name), min_size=1, max_size=4))
    @example([SEEDS[name].replace("02/Nov/2026:10:00:00 +0100", "31/Dec/9999:23:59:59 +0000")])
    @example([SEEDS[name].replace("02/Nov/2026:10:00:00 +0100", "01/Jan/0001:00:00:00 +0000")])
    def check(lines):
        outcomes = list(auditor.audit_lines("fuzz.log", 1, lines, ROBOTS_BY_HOST, None))
        assert len(outcomes) == len(lines)  # every line accounted for
        for kind, record in outcomes:
            if kind == "verdict":
                _writable(record)
            elif record is not None:
                json.dumps(record, ensure_ascii=False).encode("utf-8")

    check()


@BUDGET
@given(st.one_of(
    st.binary(max_size=2000),
    mutated("User-agent: Googlebot\nCrawl-delay: 5\nDisallow: /private/*.php$\nAllow: /private/ok\n\n"
            "User-agent: *\nDisallow: /tmp/\nSitemap: https://x.test/s.xml\n").map(lambda t: t.encode("utf-8", "surrogatepass")),
))
@example(b"User-agent: *\nCrawl-delay: 99999999999999\n")
@example(b"User-agent: *\rDisallow: /\r")
def test_the_robots_parser_takes_any_bytes(body):
    parsed = robots.parse(body)
    for path in ("/", "/private/a.php", "/tmp/x", "/%2A$", "/robots.txt"):
        decision = parsed.decide("Googlebot/2.1", path, REGISTRY)
        assert isinstance(decision.allowed, bool)
        delay = None if decision.group is None else decision.group.crawl_delay
        assert delay is None or delay >= 0
    for diagnostic in parsed.diagnostics:
        str(diagnostic.message).encode("utf-8")


@BUDGET
@given(st.one_of(
    st.text(max_size=200),
    mutated("noindex, nofollow, max-snippet:20, unavailable_after: 2026-12-01T00:00:00+01:00, googlebot: noarchive"),
))
@example("unavailable_after: 0001-01-01T00:00:00+01:00")
@example("unavailable_after: Fri, 31 Dec 9999 23:59:59 -0100")
def test_the_page_directives_parser_takes_any_text(value):
    for parsed in (directives.parse_x_robots_tag(value), directives.parse_meta("robots", value),
                   directives.parse_meta(value, "noindex")):
        assert isinstance(parsed, directives.Directives)


def _table_bytes(seed_rows: list[dict]):
    seed = "".join(json.dumps(row) + "\n" for row in seed_rows)
    return st.one_of(
        st.binary(max_size=600),
        mutated(seed).map(lambda text: text.encode("utf-8", "surrogatepass")),
    )


ROBOTS_ROWS = [
    {"host": "example.com", "effective_from": "2026-11-02T09:00:00Z", "status": 200, "body": "User-agent: *\n"},
    {"host": "example.com", "effective_from": "2026-11-03T09:00:00+01:00", "status": 503},
    {"host": "example.com", "effective_from": "2026-11-04T09:00:00Z", "status": "unreachable"},
    {"host": "example.com", "effective_from": "2026-11-05T09:00:00Z", "status": 200, "body_file": "body.txt"},
]


@BUDGET
@given(_table_bytes(ROBOTS_ROWS))
@example(b'{"host":"a","effective_from":"0001-01-01T00:00:00+01:00","status":404}\n')
@example(b'{"host":"a","effective_from":"2026-01-01T00:00:00Z","status":200,"body_file":null}\n')
@example(b'{"host":"a","effective_from":"2026-01-01T00:00:00Z","status":200,"body_file":"../x"}\n')
@example(b'{"host":"\\ud800","effective_from":"2026-01-01T00:00:00Z","status":404}\n')
def test_the_robots_table_reader_takes_any_bytes(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("robots")
    (folder / "body.txt").write_bytes(b"User-agent: *\nDisallow: /\n")
    (folder / "table.jsonl").write_bytes(data)
    try:
        versions = read_robots_table(str(folder / "table.jsonl"))
    except RobotsTableError as error:
        str(error).encode("utf-8", "backslashreplace")
        return
    for version in versions:
        assert version.effective_from.tzinfo is timezone.utc


PAGE_ROWS = [
    {"host": "example.com", "path": "/a", "effective_from": "2026-11-02T09:00:00Z", "x_robots_tag": ["noindex"],
     "meta_robots": [{"name": "robots", "content": "nofollow"}]},
]


@BUDGET
@given(_table_bytes(PAGE_ROWS))
@example(b'{"host":"a","path":"/","effective_from":"0001-01-01T00:00:00+01:00","x_robots_tag":[],"meta_robots":[]}\n')
def test_the_page_directives_table_reader_takes_any_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("pages") / "pages.jsonl"
    path.write_bytes(data)
    try:
        read_page_directives(str(path))
    except PageDirectivesError:
        pass


DNS_ROWS = [
    {"ip": "66.249.66.1", "ptr": ["crawl-66-249-66-1.googlebot.com"],
     "forward": {"crawl-66-249-66-1.googlebot.com": ["66.249.66.1"]}, "resolved_at": "2026-11-02T00:00:00Z"},
    {"ip": "203.0.113.9", "ptr_error": "nxdomain"},
]


@BUDGET
@given(_table_bytes(DNS_ROWS))
@example(b"[" * 100_000)
@example(b'{"ip":"1.2.3.4","ptr":["\\ud800"]}\n')
def test_the_dns_snapshot_reader_takes_any_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("dns") / "dns.jsonl"
    path.write_bytes(data)
    try:
        answers = read_snapshot(str(path))
    except ValueError:
        return
    for address in answers:
        address.encode("utf-8")


RANGE_DOCUMENT = {"creationTime": "2026-10-30T00:00:00Z",
                  "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}


@BUDGET
@given(_table_bytes([RANGE_DOCUMENT]))
@example(b"[" * 100_000)
@example(b'{"prefixes":[{"ipv4Prefix":"0.0.0.0/0"},{"ipv6Prefix":"::/0"}]}')
def test_the_range_snapshot_reader_takes_any_bytes(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("ranges")
    (root / "google-common-crawlers").mkdir()
    (root / "google-common-crawlers" / "2026-10-30.json").write_bytes(data)
    index = load_ranges(root, REGISTRY)
    assert isinstance(index, RangeIndex)
    snapshot = index.snapshot_at("google-common-crawlers", date(2026, 11, 1))
    if snapshot is None:
        assert index.problems  # a file that is not used is reported, never dropped in silence
    else:
        _within_bound(snapshot)


@BUDGET
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                    max_leaves=30))
@example({"prefixes": [{"ipv4Prefix": "1.0.0.0/7"}, {"ipv6Prefix": "2000::/18"}, {"ipv4Prefix": "66.249.64.0/19"}]})
def test_parse_snapshot_takes_any_json_value(document):
    snapshot, problems = parse_snapshot("google-common-crawlers", "Google", date(2026, 11, 1), document)
    assert snapshot is not None or problems
    if snapshot is not None:
        _within_bound(snapshot)


def _within_bound(snapshot) -> None:
    """No kept prefix is broader than BROADEST_PREFIX (a level's shift is 32 or 128 minus its
    length), and the kept prefixes of each version cover no more than one such prefix in all."""
    for version, levels in snapshot.table.levels.items():
        host_bits = (32 if version == 4 else 128) - BROADEST_PREFIX[version]
        assert all(shift <= host_bits for shift, _ in levels)
        bits = 32 if version == 4 else 128
        kept = [ipaddress.ip_network((number << shift, bits - shift)) for shift, keys in levels for number in keys]
        assert sum(n.num_addresses for n in ipaddress.collapse_addresses(kept)) <= 1 << host_bits


@BUDGET
@given(st.lists(st.binary(max_size=40), max_size=8))
@example([b"a\r", b"\nb\rc\r\r\n", b"d"])
@example([b"\r", b"\n", b"\n"])
@example([b"\r", b"", b"\n"])
def test_split_lines_agrees_with_universal_newlines_whatever_the_chunking(chunks):
    data = b"".join(chunks)
    # bytes.splitlines ends lines at exactly LF, CR LF and lone CR, over the whole input at once
    assert list(split_lines(chunks)) == data.splitlines()


@BUDGET
@given(st.lists(st.sampled_from([b"ab", b"abcdefgh", b"\r", b"\n", b"\r\n", b"xyz\n"]), max_size=12), st.integers(1, 9))
def test_a_line_over_the_limit_is_its_prefix_and_length_whatever_the_chunking(pieces, limit):
    data = b"".join(pieces)
    expected = [
        line if len(line) <= limit else (line[:LONG_LINE_PREFIX_BYTES], len(line)) for line in data.splitlines()
    ]
    got = [line if isinstance(line, bytes) else (line.prefix, line.length) for line in split_lines(pieces, limit)]
    assert got == expected


FORMAT_PIECES = {
    "apache": ["%h", "%a", "%{c}a", "%l", "%u", "%t", "%{%F %T}t", "%{%d/%b/%Y:%T %z}t", "%{msec}t", "%{%e}t",
               '"%r"', "%r", "%m", "%U", "%q", "%U%q", "%>s", "%b", "%O", "%v", "%p", "%D", '"%{User-Agent}i"',
               "%{Referer}i", "%%", "%{%Q}t", '\\"', " ", ":", "/", "[", "]", '"', "-", "://"],
    "nginx": ["$remote_addr", "$remote_port", "$time_local", "$time_iso8601", "$msec", '"$request"', "$request",
              "$request_method", "$request_uri", "$scheme", "$host", "$status", "$body_bytes_sent",
              '"$http_user_agent"', "${http_referer}", "$remote_user", " ", ":", "://", "/", "[", "]", '"', "-"],
}


@st.composite
def format_strings(draw):
    kind = draw(st.sampled_from(sorted(FORMAT_PIECES)))
    pieces = draw(st.lists(st.one_of(st.sampled_from(FORMAT_PIECES[kind]), st.text(max_size=3)), min_size=1, max_size=12))
    return kind, "".join(pieces)


@BUDGET
@given(format_strings(), st.data())
@example(("nginx", '$remote_addr [$time_local] "$request_method $scheme://$host$request_uri $server_protocol"'), None)
@example(("apache", '%h%l %t "%r"'), None)
def test_the_format_string_compiler_takes_any_format(spec, data):
    """A format either compiles to a pattern the static check passes, or is refused in one line;
    the lines of a compiled format, and mutations of them, are read or dead letters."""
    kind, text = spec
    try:
        layout = compile_format(kind, text)
    except ValueError as error:
        assert "\n" not in str(error)
        return
    check_pattern(layout.pattern.pattern)
    if data is not None:
        line = data.draw(st.one_of(st.text(max_size=80), mutated(text)))
        _parse_or_dead_letter(parser_for(f"{kind}:{text}"), line)


json_entries = st.dictionaries(st.text(max_size=8), st.text(max_size=20), min_size=1, max_size=4)


@BUDGET
@given(json_entries, st.data())
@example({"ua": "Googlebot/2.1"}, None)
def test_a_raw_byte_inside_a_json_string_is_read_as_its_escape(entry, data):
    """Any byte that is not UTF-8, put anywhere inside a string of a JSON entry, is read back as
    `\\xNN` at that place; the entry is never lost."""
    key = sorted(entry)[0]
    value = entry[key]
    at = 0 if data is None else data.draw(st.integers(0, len(value)))
    byte = 0xFF if data is None else data.draw(st.integers(0x80, 0xFF).filter(lambda b: b not in range(0xC2, 0xF5)))
    raw = json.dumps({key: "\x00MARK\x00"}, ensure_ascii=False).encode("utf-8", "surrogatepass")
    raw = raw.replace(b"\\u0000MARK\\u0000", json.dumps(value[:at])[1:-1].encode("utf-8", "surrogatepass")
                      + bytes([byte]) + json.dumps(value[at:])[1:-1].encode("utf-8", "surrogatepass"))
    assert loads_logged(raw.decode("utf-8", "backslashreplace")) == {key: f"{value[:at]}\\x{byte:02x}{value[at:]}"}


@BUDGET
@given(st.lists(st.one_of(json_entries.map(lambda e: json.dumps(e).encode()), st.binary(max_size=60)), min_size=1,
                max_size=6), st.integers(1, 64))
@example([b'{"a": "' + b"x" * 200 + b'"}', b'{"b": "\xff"}'], 16)
@example([b"[1,", b"2]"], 3)
def test_json_lines_are_read_as_lines_or_a_whole_export_and_never_lose_one(entries, chunk):
    data = b"\n".join(entries) + b"\n"
    chunks = [data[start:start + chunk] for start in range(0, len(data), chunk)]
    try:
        got = list(log_lines(chunks))
    except ValueError:
        return  # an export that breaks off: the reader makes it the file's dead letter
    if got != data.splitlines():
        whole = json_bytes_text(data)
        assert whole.lstrip("\ufeff \t\r\n")[:1] in "[{"  # only something that parses as an export
        for line in got:
            loads_logged(line.decode("utf-8", "backslashreplace"))
