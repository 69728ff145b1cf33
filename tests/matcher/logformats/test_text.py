"""The Apache and nginx text formats (`matcher.logformats.text`): the fast pattern reads a line as the
general one does, and the skim of a line names its sender, time and User-Agent exactly as the full
parse would, or declines."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from helpers import GOOGLEBOT
from matcher.logformats import FORMATS, LogParseError, Skim, TextLayout, TextParser, parser_for
from matcher.logformats.fields import cleaned_line
from matcher.logformats.presets import LAYOUTS
from matcher.logformats.text import TEXT_LAYOUTS, line_pattern


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


# ---------------------------------------------------------------- one pattern per text format, run by RE2

REPO_ROOT = Path(__file__).resolve().parents[3]
# Nginx Proxy Manager's stock format
NPM = ('nginx:[$time_local] $upstream_cache_status $upstream_status $status - $request_method $scheme $host '
       '"$request_uri" [Client $remote_addr] [Length $body_bytes_sent] [Gzip $gzip_ratio] [Sent-to $server] '
       '"$http_user_agent" "$http_referer"')
# format strings of every shape the compiler writes: quoted, up to a text, last on the line, side by
# side, times of each kind
FORMAT_STRINGS = (
    'apache:%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"',
    'apache:%v:%p %a %l %u %{%Y-%m-%d %H:%M:%S}t "%r" %>s %O "%{Referer}i" "%{User-Agent}i" %D',
    "apache:%a [%{msec}t] %m %U%q %>s",
    "apache:%{sec}t.%{msec_frac}t %h %m %U%q %>s",
    'apache:%h [%{%d/%b/%Y:%H:%M:%S}t.%{msec_frac}t %{%z}t] "%r" %>s [%{X-Forwarded-For}i] %{User-Agent}i',
    'nginx:$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" '
    '"$http_user_agent" "$http_x_forwarded_for"',
    'nginx:$remote_addr [$time_local] "$request_method $scheme://$host$request_uri $server_protocol" $status',
    'nginx:$remote_addr $time_local "$request" $status up=$upstream_addr rt=$request_time ua=$http_user_agent',
    "nginx:$time_iso8601 app[router]: at=info method=$request_method path=$request_uri host=$host "
    "fwd=$remote_addr status=$status bytes=$body_bytes_sent protocol=$scheme",
    NPM,
    "nginx:$remote_addr [$time_local] $request $status $http_user_agent",
)
WRITTEN = [
    # lines of every preset's shape, with the values servers leave empty or write oddly
    f'www.example.com:443 66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
    f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a\\"b HTTP/1.1" 200 - "-" "{GOOGLEBOT}" "10.0.0.1, 10.0.0.2"',
    f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "-" 408 0 "-" "-" "noindex"',
    '66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5',
    f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5 "https://www.example.com/" "{GOOGLEBOT}"',
    'www.example.com 66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 5',
    f'www.example.com:443 66.249.66.1 - - 2026-11-02 11:00:00 "GET /a HTTP/1.1" 200 512 "-" "{GOOGLEBOT}" 1234',
    f'www.example.com: 66.249.66.1 - - 2026-11-02 11:00:00 "GET /a HTTP/1.1" 200  "-" "{GOOGLEBOT}" -',
    f'66.249.66.1 www.example.com - [02/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "{GOOGLEBOT}" 3600',
    f'www.example.com 66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] (0 s) "GET / HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"',
    '66.249.66.1 [02/Nov/2026:11:00:00.250 +0100] "GET /a HTTP/1.1" 200 [203.0.113.9, 10.0.0.1] Mozilla/5.0 (X11)',
    '66.249.66.1 02/Nov/2026:10:00:00 +0000 "GET /a HTTP/1.1" 200 up=10.0.0.1:80, 10.0.0.2:80 rt=0.001 ua=curl/8 (x)',
    '66.249.66.1 [02/Nov/2026:10:00:00 +0000] "GET https://example.com/p HTTP/1.1" 200',
    "66.249.66.1 [1793613600000] GET /a?b=1 200",
    "1793613600.123 66.249.66.1 GET /a?b=1 200",
    f"66.249.66.1 [02/Nov/2026:10:00:00 +0000] GET /a?b=1 HTTP/1.1 200 {GOOGLEBOT}",
    "66.249.66.1 [02/Nov/2026:10:00:00 +0000] - 408 -",
    "2026-11-02T10:00:00.123456+00:00 app[router]: at=info method=GET path=\"/a\" host=www.example.com "
    'fwd="66.249.66.1" status=200 bytes=13 protocol=https',
    "2026-11-02T10:00:00.123456+00:00 app[router]: at=info method=GET path=/a host= fwd=- status= bytes=- protocol=",
    "1793613600.123 42 66.249.66.1 TCP_MISS/200 512 GET http://www.example.com/a - DIRECT/10.0.0.1 text/html",
    f'http 2026-11-02T10:00:00.186641Z app/lb/50dc 66.249.66.1:2817 10.0.1.252:48160 0.000 0.001 0.000 200 200 34 366 '
    f'"GET http://www.example.com:80/a?b=1 HTTP/1.1" "{GOOGLEBOT}" - - arn:aws:x "Root=1-5833" "-" "-" 0',
    f'2026-11-02T10:00:00.945958Z my-lb 66.249.66.1:2817 - -1 -1 -1 503 0 0 0 "GET http://www.example.com:80/a HTTP/1.1" '
    f'"{GOOGLEBOT}" - -',
    f'79a59df9 bucket [02/Nov/2026:10:00:00 +0000] 66.249.66.1 - 3E57 WEBSITE.GET.OBJECT a "GET /a?b=1 HTTP/1.1" 200 - '
    f'113 113 7 - "-" "{GOOGLEBOT}" - s9lz= - - - www.example.com - - - us-east-1',
    'Nov  2 10:00:00 localhost haproxy[14389]: 66.249.66.1:33317 [02/Nov/2026:10:00:00.655] http-in static/srv1 '
    '10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {www.example.com|Googlebot} {} "GET /a?b=1 HTTP/1.1"',
    '198.51.100.8:33319 [02/Nov/2026:10:00:02.000] http-in http-in/<NOSRV> -1/-1/-1/-1/5000 408 212 - - cR-- '
    '1/1/0/0/0 0/0 "<BADREQ>"',
    f'66.249.66.1 - - [02/Nov/2026:10:00:00 +0000] "GET /a?b=1 HTTP/1.1" 200 512 "-" "{GOOGLEBOT}" 1 "web@docker" '
    '"http://172.18.0.3:80" 3ms',
    '[07/Dec/2026:10:00:00 +0000] - - 499 - GET https example.com "/x" [Client 1.2.3.4] [Length 0] [Gzip -] '
    '[Sent-to 10.0.0.1, 10.0.0.2] "" "-"',
    "", "-", '"', '" "', "\\", "caf\u00e9 \u2028 \U0001f600 [x] \"y\"",
]


def _corpus() -> list[str]:
    import gzip

    lines = list(WRITTEN)
    for path in sorted((REPO_ROOT / "samples" / "logs").glob("*.gz")):
        with gzip.open(path, "rt", encoding="utf-8", errors="backslashreplace") as handle:
            lines += [line for _, line in zip(range(300), handle)]
    for path in sorted((REPO_ROOT / "tests" / "data" / "logformats").glob("*.log")):
        lines += path.read_text(encoding="utf-8", errors="backslashreplace").splitlines()
    cleaned = []
    for line in lines:
        try:
            cleaned.append(cleaned_line(line))
        except LogParseError:
            pass
    return cleaned


def _one_pattern_formats() -> list[str]:
    names = []
    for name in FORMATS:
        try:
            line_pattern(name)
        except ValueError:
            continue
        names.append(name)
    return names


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return _corpus()


def test_every_text_preset_and_apache_nginx_format_is_one_pattern():
    assert set(_one_pattern_formats()) == set(TEXT_LAYOUTS) | set(LAYOUTS) | {"varnishncsa"}


@pytest.mark.parametrize("name", [*_one_pattern_formats(), *FORMAT_STRINGS])
def test_re2_reads_each_line_into_the_same_groups_as_the_parser(name, corpus):
    import pyarrow as pa
    import pyarrow.compute as pc

    pattern = line_pattern(name)
    assert pattern.groupindex and pattern.groups == len(pattern.groupindex), "every group is named, each name once"
    vectorized = pc.extract_regex(pa.array(corpus, pa.string()), pattern=pattern.pattern).to_pylist()
    matched = 0
    for line, theirs in zip(corpus, vectorized):
        ours = pattern.match(line)
        if ours is None:
            assert theirs is None, line
            continue
        matched += 1
        # a group that took no part in the match is None here and "" there
        assert theirs == {group: value or "" for group, value in ours.groupdict().items()}, line
    assert matched, f"no line of the corpus is in {name}"
