"""The server's own format string (`apache:` LogFormat, `nginx:` log_format) compiled into a
layout: it reads what the server wrote, field by field, as the named formats do."""
from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import GOOGLEBOT, REPO
from matcher.logformats import PASTE_YOUR_FORMAT, LogParseError, is_zoneless, parser_for
from matcher.logformats.format_string import TIME_DIRECTIVES, compile_format
from matcher.logformats.pattern_check import check_pattern

UTC = timezone.utc
AT = datetime(2026, 11, 2, 10, 0, 0, tzinfo=UTC)
APACHE_COMBINED = 'apache:%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"'
NGINX_MAIN = ('nginx:$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
              '"$http_referer" "$http_user_agent" "$http_x_forwarded_for"')


def fields(record):
    return (record.ts, record.host, record.client_ip, record.method, record.target, record.path, record.status,
            record.size, record.referer, record.user_agent, record.forwarded_for)


def outcome(parse, line):
    try:
        return fields(parse(line))
    except LogParseError as error:
        return error.reason


texts = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=30)
requests = st.one_of(
    st.builds(lambda m, p: f"{m} /{p} HTTP/1.1", st.sampled_from(["GET", "HEAD", "POST"]), texts.map(lambda t: t.replace('"', "%22"))),
    st.sampled_from(["-", "OPTIONS * HTTP/1.1", "CONNECT x.test:443 HTTP/1.1", r"\x16\x03\x01", r"GET /a\"b HTTP/1.1"]),
)
quoted = st.one_of(st.just("-"), texts.map(lambda t: t.replace("\\", "\\\\").replace('"', '\\"')))


@settings(max_examples=300, deadline=None)
@given(request=requests, status=st.sampled_from(["200", "404", "-"]), size=st.sampled_from(["0", "512", "-"]),
       referer=quoted, user_agent=st.one_of(quoted, st.just(GOOGLEBOT)), forwarded=quoted)
def test_the_apache_and_nginx_format_strings_read_lines_as_the_named_formats_do(
    request, status, size, referer, user_agent, forwarded
):
    combined = f'66.249.66.1 - - [02/Nov/2026:11:00:00 +0100] "{request}" {status} {size} "{referer}" "{user_agent}"'
    assert outcome(parser_for(APACHE_COMBINED), combined) == outcome(parser_for("combined"), combined)
    main = f'{combined} "{forwarded}"'
    assert outcome(parser_for(NGINX_MAIN), main) == outcome(parser_for("combined"), main)


def test_apache_vhost_headers_times_and_durations():
    spec = 'apache:%v:%p %a %l %u %{%Y-%m-%d %H:%M:%S}t "%r" %>s %O "%{Referer}i" "%{User-Agent}i" %D "%{X-Forwarded-For}i" %{Host}i'
    line = f'www.example.com:443 66.249.66.1 - - 2026-11-02 11:00:00 "GET /a?b=1 HTTP/1.1" 200 512 "-" "{GOOGLEBOT}" 1234 "198.51.100.1" other.example'
    record = parser_for(spec, zone=timezone(timedelta(hours=1)))(line)
    assert fields(record) == (AT, "www.example.com", "66.249.66.1", "GET", "/a?b=1", "/a?b=1", 200, 512, None,
                              GOOGLEBOT, "198.51.100.1")
    assert is_zoneless(spec) and not is_zoneless(APACHE_COMBINED)


def test_apache_method_path_and_query_instead_of_the_request_line_and_epoch_times():
    spec = "apache:%a [%{msec}t] %m %U%q %>s"
    record = parser_for(spec)("66.249.66.1 [1793613600000] GET /a?b=1 200")
    assert (record.ts, record.method, record.path, record.status) == (AT, "GET", "/a?b=1", 200)


def test_nginx_iso_time_host_and_msec():
    spec = 'nginx:$host $remote_addr [$time_iso8601] "$request" $status $bytes_sent "$http_user_agent" $msec'
    line = f'www.example.com 66.249.66.1 [2026-11-02T11:00:00+01:00] "GET /a HTTP/2.0" 200 5 "{GOOGLEBOT}" 1793613600.123'
    record = parser_for(spec)(line)
    assert (record.ts, record.host, record.path, record.user_agent) == (AT, "www.example.com", "/a", GOOGLEBOT)
    msec_only = parser_for('nginx:$remote_addr $msec "$request_method" "$request_uri"')
    assert msec_only('66.249.66.1 1793613600.250 "GET" "/p"').ts == AT + timedelta(milliseconds=250)


def test_a_client_address_with_its_port_is_the_address():
    assert parser_for('nginx:$remote_addr:$remote_port [$time_local] "$request"')(
        '66.249.66.1:5000 [02/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1"').client_ip == "66.249.66.1"
    record = parser_for('apache:%{c}a %h %t "%r"')('10.0.0.1 [2001:db8::1]:443 [02/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1"')
    assert record.client_ip == "2001:db8::1"


@pytest.mark.parametrize(("spec", "missing"), [
    ('apache:%l %t "%r"', "the client address"),
    ('apache:%h "%r"', "the time"),
    ("apache:%h %t %>s", "the request"),
    ('nginx:$remote_addr "$request"', "the time"),
    ("nginx:$remote_addr $time_local $request_method", "the request"),
])
def test_a_format_that_cannot_give_a_verdict_is_refused_with_what_it_lacks(spec, missing):
    with pytest.raises(ValueError, match=missing):
        parser_for(spec)


def test_unsupported_time_directives_and_kinds_are_refused():
    with pytest.raises(ValueError, match="%Q is not supported"):
        parser_for('apache:%h %{%Q}t "%r"')
    with pytest.raises(ValueError, match="apache:FORMAT or nginx:FORMAT"):
        parser_for('caddy:%h %t "%r"')


def test_trailing_content_the_format_does_not_name_is_no_match():
    with pytest.raises(LogParseError) as caught:
        parser_for(APACHE_COMBINED)(f'66.249.66.1 - - [02/Nov/2026:11:00:00 +0100] "GET / HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" extra')
    assert caught.value.reason == "no-match"


def test_the_paste_your_format_hint_points_at_a_section_that_exists():
    page, anchor = PASTE_YOUR_FORMAT.rsplit("see ", 1)[1].split("#")
    headings = [line.lstrip("#").strip() for line in (REPO / page).read_text().splitlines() if line.startswith("## ")]
    anchors = {"".join(c for c in heading.lower() if c.isalnum() or c in " -").replace(" ", "-") for heading in headings}
    assert anchor in anchors


@pytest.mark.parametrize(
    ("spec", "logged", "read"),
    [
        (APACHE_COMBINED + ' "%{Content-Usage}o"', '"train-ai=n, search=y"', "train-ai=n, search=y"),
        (APACHE_COMBINED + ' "%{content-usage}o"', '"-"', None),
        (APACHE_COMBINED + ' "%{X-Other}o"', '"train-ai=n"', None),  # another response header is skipped
        (NGINX_MAIN + ' "$sent_http_content_usage"', '"train-ai=n"', "train-ai=n"),
        (NGINX_MAIN + ' "$sent_http_content_usage"', '"-"', None),
    ],
)
def test_the_content_usage_response_header_is_read_from_its_directive(spec, logged, read):
    parse = parser_for(spec, "www.example.com")
    forwarded = ' "-"' if spec.startswith("nginx") else ""
    line = f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"{forwarded} {logged}'
    assert parse(line).content_usage == read


@pytest.mark.parametrize(
    ("spec", "logged", "read"),
    [
        (APACHE_COMBINED + ' "%{Retry-After}o"', '"120"', "120"),
        (APACHE_COMBINED + ' "%{retry-after}o"', '"Mon, 02 Nov 2026 10:02:00 GMT"', "Mon, 02 Nov 2026 10:02:00 GMT"),
        (APACHE_COMBINED + ' "%{Retry-After}o"', '"-"', None),
        (NGINX_MAIN + ' "$sent_http_retry_after"', '"30"', "30"),
    ],
)
def test_the_retry_after_response_header_is_read_from_its_directive(spec, logged, read):
    parse = parser_for(spec, "www.example.com")
    forwarded = ' "-"' if spec.startswith("nginx") else ""
    line = f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 429 5 "-" "{GOOGLEBOT}"{forwarded} {logged}'
    assert parse(line).retry_after == read


FULL_URL = 'nginx:$remote_addr [$time_local] "$request_method $scheme://$host$request_uri $server_protocol" $status'


def test_a_host_written_against_the_path_ends_where_the_path_begins():
    record = parser_for(FULL_URL)(
        '66.249.66.1 [02/Nov/2026:10:00:00 +0000] "GET https://example.com/private/b/ HTTP/1.1" 200')
    assert (record.host, record.path, record.method) == ("example.com", "/private/b/", "GET")


@pytest.mark.parametrize("spec", ['apache:%h%l %t "%r"', 'nginx:$remote_addr$remote_user [$time_local] "$request"',
                                  'apache:%h %{sec}t%{%F}t "%r"'])
def test_directives_side_by_side_that_no_character_separates_are_refused_by_name(spec):
    with pytest.raises(ValueError, match="side by side with nothing between them"):
        parser_for(spec)


@pytest.mark.parametrize("spec", [
    FULL_URL, APACHE_COMBINED, NGINX_MAIN, "apache:%a [%{msec}t] %m %U%q %>s", "apache:%h%t \"%r\"",
    'apache:%v:%p %a %l %u %{%Y-%m-%d %H:%M:%S}t "%r" %>s %O "%{Referer}i" "%{User-Agent}i" %D',
    'nginx:$host $remote_addr - $remote_user [$time_iso8601] "$request_method" "$request_uri" $status $msec',
])
def test_every_compiled_format_splits_a_line_one_way(spec):
    kind, _, text = spec.partition(":")
    check_pattern(compile_format(kind, text).pattern.pattern)


MOMENT = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)


@pytest.mark.parametrize("letter", sorted(TIME_DIRECTIVES))
def test_every_time_directive_a_format_accepts_is_read(letter):
    # the date and clock in full, with the directive under test: the line is what strftime writes
    written = f"%Y-%m-%d %H:%M:%S %{letter}"
    spec = f'apache:%h [%{{{written}}}t] "%r"'
    line = f'66.249.66.1 [{MOMENT.strftime(written)}] "GET / HTTP/1.1"'
    assert parser_for(spec)(line).ts == MOMENT


@pytest.mark.parametrize(("written", "stamp"), [
    ("%F %T", "2026-02-03 04:05:06"), ("%d/%b/%Y:%T %z", "03/Feb/2026:05:05:06 +0100"),
    ("%e %b %Y %T", " 3 Feb 2026 04:05:06"), ("%Y %j %R", "2026 034 04:05"), ("%D %T %Z", "02/03/26 04:05:06 GMT"),
])
def test_shorthand_and_padded_time_directives_read_lines(written, stamp):
    record = parser_for(f'apache:%h [%{{{written}}}t] "%r"')(f'66.249.66.1 [{stamp}] "GET / HTTP/1.1"')
    assert record.ts == MOMENT.replace(second=0 if "%R" in written else 6)


@pytest.mark.parametrize("written", ["%H:%M:%S", "%Y-%m %T", "%a %T"])
def test_a_time_that_does_not_write_the_date_is_refused(written):
    with pytest.raises(ValueError, match="not supported|does not write the date"):
        parser_for(f'apache:%h [%{{{written}}}t] "%r"')


def test_epoch_times_are_read_in_the_unit_the_format_names_and_refused_past_9999():
    spec = 'apache:%h %{msec}t "%r"'
    assert parser_for(spec)('66.249.66.1 253402300799999 "GET / HTTP/1.1"').ts.year == 9999
    with pytest.raises(LogParseError) as caught:
        parser_for(spec)('66.249.66.1 253402300800000 "GET / HTTP/1.1"')
    assert caught.value.reason == "bad-timestamp"


def test_an_apache_log_format_pasted_with_its_escaped_quotes_reads_lines():
    line = f'66.249.66.1 - - [02/Nov/2026:11:00:00 +0100] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"'
    for pasted in (r'apache:%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\"',
                   r'apache:"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\""'):
        assert fields(parser_for(pasted)(line)) == fields(parser_for(APACHE_COMBINED)(line))


ADVERSARY = """
import sys, time
from matcher.logformats import LogParseError, parser_for
specs, pieces, size = sys.argv[1].split("\\n"), ["a", "a://", "/", ":", '"', '\\\\"', " ", "a ", "?", "["], 65536
shapes = ["{b}", '66.249.66.1 [02/Nov/2026:10:00:00 +0000] "GET http://{b}', 'x:1 1.2.3.4 - - [02/Nov/2026:10:00:00 +0000] "{b}']
for spec in specs:
    parse = parser_for(spec)
    for piece in pieces:
        for shape in shapes:
            try:
                parse(shape.format(b=piece * (size // len(piece)))[:size])
            except LogParseError:
                pass
print("done")
"""


@pytest.mark.slow
def test_a_long_adversarial_line_is_read_in_linear_time():
    specs = [FULL_URL, 'apache:%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"',
             'nginx:$remote_addr:$remote_port [$time_local] "$request" $status', NGINX_MAIN]
    # 30 s is hundreds of times what these lines take; a pattern that backtracks takes minutes
    done = subprocess.run([sys.executable, "-c", ADVERSARY, "\n".join(specs)], capture_output=True, text=True,
                          timeout=30, cwd=Path(__file__).resolve().parents[3])
    assert done.stdout.strip() == "done", done.stderr
