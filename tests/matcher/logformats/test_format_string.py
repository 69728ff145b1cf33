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
specs, pieces, size = sys.argv[1].split("\\n"), ["a", "a://", "/", ":", '"', '\\\\"', " ", "a ", "?", "[", " r", " rt", "=\\""], 65536
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
             'nginx:$remote_addr:$remote_port [$time_local] "$request" $status', NGINX_MAIN,
             'nginx:$remote_addr $time_local "$request" $status up=$upstream_addr rt=$request_time ua=$http_user_agent',
             "nginx:$remote_addr $remote_user $http_x_id $time_iso8601 fwd=$http_x_forwarded_for $request_method $request_uri"]
    # 30 s is hundreds of times what these lines take; a pattern that backtracks takes minutes
    done = subprocess.run([sys.executable, "-c", ADVERSARY, "\n".join(specs)], capture_output=True, text=True,
                          timeout=30, cwd=Path(__file__).resolve().parents[3])
    assert done.stdout.strip() == "done", done.stderr


CLF_AT = "[02/Nov/2026:10:00:00 +0000]"


@pytest.mark.parametrize(("spec", "line", "read"), [
    # a header the request did not send is logged empty, unquoted
    ('apache:%h %t "%r" %>s %{X-Request-Id}i "%{User-Agent}i"', f'66.249.66.1 {CLF_AT} "GET /a HTTP/1.1" 200  "{GOOGLEBOT}"',
     (200, GOOGLEBOT)),
    # a status and a scheme the server did not have: `-` or nothing
    ('nginx:$remote_addr $time_local "$request" $status $scheme "$http_user_agent"',
     f'66.249.66.1 {CLF_AT[1:-1]} "GET /a HTTP/1.1"  - "{GOOGLEBOT}"', (None, GOOGLEBOT)),
    ('nginx:$remote_addr [$time_local] "$request" $status $body_bytes_sent "$http_user_agent"',
     f'66.249.66.1 {CLF_AT} "GET /a HTTP/1.1" - - "-"', (None, "")),    # Envoy's 0: no response, the client left first
    ('apache:[%{%Y-%m-%dT%H:%M:%S.%f%z}t] "%r" %>s %b "%h" "%{User-Agent}i"',
     f'[2026-11-02T10:00:00.000Z] "GET /a HTTP/1.1" 0 0 "66.249.66.1" "{GOOGLEBOT}"', (0, GOOGLEBOT)),
])
def test_any_directive_may_be_empty_or_a_dash(spec, line, read):
    record = parser_for(spec)(line)
    assert (record.path, record.status, record.user_agent) == ("/a", *read)


def test_a_directive_before_the_text_after_it_takes_everything_up_to_that_text():
    # an unquoted User-Agent last on the line, and values of several words before a `key=`
    spec = ("nginx:$remote_addr [$time_local] \"$request\" $status upstream=$upstream_addr "
            "rt=$upstream_response_time ua=$http_user_agent")
    line = f'66.249.66.1 {CLF_AT} "GET /a HTTP/1.1" 200 upstream=10.0.0.1:80, 10.0.0.2:80 rt=0.001, 0.002 ua={GOOGLEBOT}'
    record = parser_for(spec)(line)
    assert (record.path, record.status, record.user_agent) == ("/a", 200, GOOGLEBOT)
    # Nginx Proxy Manager's stock format: values between brackets, a list of upstreams among them
    spec = ('nginx:[$time_local] $upstream_cache_status $upstream_status $status - $request_method $scheme $host '
            '"$request_uri" [Client $remote_addr] [Length $body_bytes_sent] [Gzip $gzip_ratio] [Sent-to $server] '
            '"$http_user_agent" "$http_referer"')
    record = parser_for(spec)(f'{CLF_AT} - - 499 - GET https www.example.com "/a" [Client 66.249.66.1] [Length 0] '
                              f'[Gzip -] [Sent-to 10.0.0.1, 10.0.0.2] "{GOOGLEBOT}" "-"')
    assert (record.client_ip, record.host, record.path, record.status) == ("66.249.66.1", "www.example.com", "/a", 499)
    # a request line the format does not quote keeps its spaces
    record = parser_for("nginx:$remote_addr [$time_local] $request $status $http_user_agent")(
        f"66.249.66.1 {CLF_AT} GET /a?b=1 HTTP/1.1 200 {GOOGLEBOT}")
    assert (record.method, record.path, record.status, record.user_agent) == ("GET", "/a?b=1", 200, GOOGLEBOT)
    # a bracketed list ends at its bracket, spaces and all
    spec = 'apache:%h [%{X-Forwarded-For}i] %t "%r"'
    record = parser_for(spec)(f'66.249.66.1 [203.0.113.9, 198.51.100.2] {CLF_AT} "GET /a HTTP/1.1"')
    assert record.forwarded_for == "203.0.113.9, 198.51.100.2"
    # the text after the directive ends it where it first appears
    with pytest.raises(LogParseError):
        parser_for(spec)(f'66.249.66.1 [203.0.113.9] x] {CLF_AT} "GET /a HTTP/1.1"')


def test_a_key_and_its_quoted_value_give_the_value_without_its_quotes():
    # Heroku's router line, as a format string names its fields
    spec = ("nginx:$time_iso8601 app[router]: at=info method=$request_method path=$request_uri host=$host "
            "request_id=$request_id fwd=$http_x_forwarded_for dyno=$dyno connect=$connect service=$service "
            "status=$status bytes=$body_bytes_sent protocol=$scheme")
    line = ('2026-11-02T10:00:00.123456+00:00 app[router]: at=info method=GET path="/a?b=1" host=www.example.com '
            'request_id=5e1f fwd="66.249.66.1, 10.1.2.3" dyno=web.1 connect=0ms service=2ms status=200 bytes=13 '
            'protocol=https')
    spec = spec.replace("fwd=$http_x_forwarded_for", "fwd=$remote_addr")
    record = parser_for(spec)(line.replace('"66.249.66.1, 10.1.2.3"', '"66.249.66.1"'))
    assert (record.client_ip, record.path, record.host, record.status) == ("66.249.66.1", "/a?b=1", "www.example.com", 200)
    assert record.ts == AT + timedelta(microseconds=123456)
    spec = 'nginx:$remote_addr [$time_local] "$request" fwd=$http_x_forwarded_for'
    record = parser_for(spec)(f'66.249.66.1 {CLF_AT} "GET /a HTTP/1.1" fwd="1.2.3.4"')
    assert record.forwarded_for == "1.2.3.4"


@pytest.mark.parametrize(("written", "stamp", "at"), [
    # Apache's manual: the fraction logged by a %{...}t of its own, between the seconds and the zone
    ("%{%d/%b/%Y:%H:%M:%S}t.%{msec_frac}t %{%z}t", "02/Nov/2026:11:00:00.250 +0100", AT + timedelta(milliseconds=250)),
    ("%{begin:%d/%b/%Y:%T}t.%{begin:usec_frac}t %{begin:%z}t", "02/Nov/2026:11:00:00.000250 +0100",
     AT + timedelta(microseconds=250)),
    ("%{%Y-%m-%dT%H:%M:%S.%f%z}t", "2026-11-02T10:00:00.5+00:00", AT + timedelta(milliseconds=500)),
    # a fraction of zero left out, point and all, as Heroku's router and Python's isoformat() do
    ("%{%Y-%m-%dT%H:%M:%S.%f%z}t", "2026-11-02T10:00:00+00:00", AT),
    # Unix seconds and their fraction, as Squid (milliseconds) and Zeek (microseconds) write them
    ("%{sec}t.%{msec_frac}t", "1793613600.250", AT + timedelta(milliseconds=250)),
    ("%{end:sec}t.%{end:usec_frac}t", "1793613600.000250", AT + timedelta(microseconds=250)),
    ("%{%Y-%m-%dT%H:%M:%S%z}t", "2026-11-02T11:00:00+01:00", AT),
    ("%{%Y-%m-%dT%H:%M:%S%z}t", "2026-11-02T10:00:00Z", AT),
])
def test_fractions_of_a_second_and_zones_with_a_colon_are_read(written, stamp, at):
    record = parser_for(f'apache:%h [{written}] "%r"')(f'66.249.66.1 [{stamp}] "GET / HTTP/1.1"')
    assert record.ts == at


@pytest.mark.parametrize("spec", ['apache:%h %t.%{msec_frac}t "%r"', 'apache:%h %{msec}t.%{usec_frac}t "%r"',
                                  'apache:%h %{sec}t %{msec_frac}t "%r"'])
def test_a_fraction_of_a_second_alone_is_refused(spec):
    with pytest.raises(ValueError, match="fraction of a second alone"):
        parser_for(spec)


def test_asctime_with_its_weekday_is_read_in_the_log_timezone():
    # uWSGI's time: asctime's, the day padded with a blank, no zone
    spec = 'apache:%h [%{%a %b %e %H:%M:%S %Y}t] "%r"'
    assert is_zoneless(spec)
    parse = parser_for(spec, zone=timezone(timedelta(hours=1)))
    assert parse('66.249.66.1 [Mon Nov  2 11:00:00 2026] "GET / HTTP/1.1"').ts == AT
    assert parse('66.249.66.1 [Thu Nov 12 11:00:00 2026] "GET / HTTP/1.1"').ts == AT + timedelta(days=10)


def test_unix_seconds_with_a_fraction_take_the_digits_the_format_says():
    parse = parser_for('apache:%h [%{sec}t.%{msec_frac}t] "%r"')
    assert parse('66.249.66.1 [1793613600.250] "GET / HTTP/1.1"').ts == AT + timedelta(milliseconds=250)
    for stamp in ("1793613600", "1793613600.25", "1793613600.250123"):
        with pytest.raises(LogParseError):
            parse(f'66.249.66.1 [{stamp}] "GET / HTTP/1.1"')


@settings(max_examples=400, deadline=None)
@given(literal=st.text(st.sampled_from(" x=]-:"), min_size=1, max_size=5),
       value=st.text(st.sampled_from(" x=]-:ab("), max_size=12))
def test_a_directive_ends_where_the_text_after_it_first_appears(literal, value):
    # the reference: the value is the line up to the first place the text after it appears; a text
    # whose first character comes back in it is looked for up to that character
    again = literal.find(literal[0], 1)
    looked_for = literal[:again] if again > 0 else literal
    spec = f'nginx:$remote_addr [$time_local] "$request" ${{http_user_agent}}{literal}$status'
    line = f'66.249.66.1 {CLF_AT} "GET /a HTTP/1.1" {value}{literal}200'
    if looked_for in value or value.strip() != value or value == "-":
        return  # the value holds the text that ends it, or is one the line's cleaning or `-` changes
    assert parser_for(spec)(line).user_agent == value
