"""A layout inferred from lines no known format reads: per writer, the value printed for
`--log-format` reads the writer's lines back into the right fields."""
from __future__ import annotations

import json
import shlex
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import GOOGLEBOT
from matcher.logformats import parser_for
from matcher.logformats.detect import Candidate, chosen_format, rank_formats
from matcher.logformats.inference import InferredFormat, detected_format, infer_layout, inferred_choice

UTC = timezone.utc
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
# (client, host, method, path, status, user agent): the requests each writer below logs
REQUESTS = [
    ("66.249.66.1", "www.example.com", "GET", "/robots.txt", 200, GOOGLEBOT),
    ("40.77.167.5", "shop.example.com", "GET", "/private/a?x=1", 404, BINGBOT),
    ("203.0.113.9", "www.example.com", "POST", "/cart", 302, BROWSER),
    ("66.249.66.2", "api.example.com", "HEAD", "/", 200, GOOGLEBOT),
    ("198.51.100.23", "www.example.com", "GET", "/p?id=7&s=2", 500, BROWSER),
    ("40.77.167.6", "shop.example.com", "GET", "/sitemap.xml", 304, BINGBOT),
]
START = datetime(2026, 12, 7, 10, 0, 0, 123000, tzinfo=UTC)


def moment(index: int) -> datetime:
    return START + timedelta(seconds=61 * index)


def envoy(index, client, host, method, path, status, agent):
    # Envoy's default text format (%START_TIME% ... "%UPSTREAM_HOST%"), the client in X-Forwarded-For
    at = moment(index).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return (f'[{at}] "{method} {path} HTTP/1.1" {status} - 0 {index * 100 + 17} {index + 3} {index + 1} '
            f'"{client}" "{agent}" "cc21d9b0-cf5c-432b-8c7e-98aeb79{index:05d}" "{host}" "10.0.2.{index}:80"')


def heroku(index, client, host, method, path, status, agent):
    # the router's line as `heroku logs` prints it; the router logs no User-Agent
    at = moment(index).astimezone(timezone(timedelta(hours=1))).isoformat(timespec="microseconds")
    return (f"{at} heroku[router]: at=info method={method} path=\"{path}\" host={host} "
            f"request_id=8601b555-6a54-4398-9ab6-53c3ea3f{index:04d} fwd=\"{client}\" dyno=web.{index % 2 + 1} "
            f"connect={index}ms service={index * 7}ms status={status} bytes={index * 100} protocol=https")


def clf_time(index: int) -> str:
    return moment(index).strftime("%d/%b/%Y:%H:%M:%S +0000")


def traefik(index, client, host, method, path, status, agent):
    # Traefik's CLF: combined + request count, router, backend URL, duration
    return (f'{client} - - [{clf_time(index)}] "{method} {path} HTTP/1.1" {status} {index * 10} "-" "{agent}" '
            f'{index + 1} "{host.split(".")[0]}@docker" "http://172.17.0.{index}:80" {index + 2}ms')


def varnish(index, client, host, method, path, status, agent):
    # varnishncsa's default: combined, the request's URL absolute
    return (f'{client} - - [{clf_time(index)}] "{method} http://{host}{path} HTTP/1.1" {status} {index} '
            f'"https://{host}/" "{agent}"')


def lighttpd(index, client, host, method, path, status, agent):
    # lighttpd's default accesslog.format: %h %V %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"
    return f'{client} {host} - [{clf_time(index)}] "{method} {path} HTTP/1.1" {status} {index} "-" "{agent}"'


def logfmt(index, client, host, method, path, status, agent):
    at = moment(index).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return (f'time={at} level=info remote_ip={client} host={host} method={method} uri={path} status={status} '
            f'bytes={index * 3} duration={index}.{index}ms user_agent="{agent}"')


def caddy(index, client, host, method, path, status, agent):
    return json.dumps({
        "level": "info", "ts": moment(index).timestamp(), "logger": "http.log.access.log0", "msg": "handled request",
        "request": {"remote_ip": "10.0.0.1", "remote_port": "41342", "client_ip": client, "proto": "HTTP/2.0",
                    "method": method, "host": host, "uri": path,
                    "headers": {"User-Agent": [agent], "Accept": ["*/*"]}},
        "bytes_read": 0, "duration": 0.0009, "size": 512 + index, "status": status,
        "resp_headers": {"Server": ["Caddy"], "Content-Type": ["text/html"]},
    })


def zeek(index, client, host, method, path, status, agent):
    # Zeek's http.log as JSON: flat keys holding dots (`id.orig_h`)
    return json.dumps({
        "ts": moment(index).timestamp(), "uid": f"CHhAvVGS1DHFjwGM{index}", "id.orig_h": client, "id.orig_p": 46378,
        "id.resp_h": "10.0.0.5", "id.resp_p": 80, "trans_depth": 1, "method": method, "host": host, "uri": path,
        "version": "1.1", "user_agent": agent, "request_body_len": 0, "response_body_len": 512, "status_code": status,
        "status_msg": "OK",
    })


def drain(index, client, host, method, path, status, agent):
    # a platform's log drain: its own deployment host, path and status around the request's own
    return json.dumps({
        "id": f"{index}-abc", "host": "my-app-abc123.vercel.app", "timestamp": int(moment(index).timestamp() * 1000),
        "type": "request", "statusCode": 200, "path": "/api/handler",
        "proxy": {"timestamp": int(moment(index).timestamp() * 1000), "method": method, "scheme": "https", "host": host,
                  "path": path, "userAgent": [agent], "referer": "", "statusCode": status, "clientIp": client},
    })


# writer -> (its lines' writer, whether its lines name the host, carry a User-Agent, write fractions of seconds)
WRITERS = {
    "envoy": (envoy, True, True, True), "heroku": (heroku, True, False, True), "traefik": (traefik, False, True, False),
    "varnish": (varnish, False, True, False), "lighttpd": (lighttpd, True, True, False),
    "logfmt": (logfmt, True, True, True), "caddy": (caddy, True, True, True), "zeek": (zeek, True, True, True),
    "drain": (drain, True, True, True),
}


def written(writer) -> list[str]:
    return [writer(index, *request) for index, request in enumerate(REQUESTS)]


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_the_inferred_layout_reads_every_line_of_each_writer_into_its_fields(name):
    writer, names_host, has_agent, fractions = WRITERS[name]
    lines = written(writer)
    inferred = infer_layout(lines)
    assert inferred is not None and (inferred.read, inferred.sample) == (len(lines), len(lines))
    parse = parser_for(inferred.name, mapping=inferred.field_map)
    for index, (line, (client, host, method, path, status, agent)) in enumerate(zip(lines, REQUESTS)):
        record = parse(line)
        # Caddy and Zeek write unix seconds as floats: the microseconds may round
        expected = moment(index) if fractions else moment(index).replace(microsecond=0)
        assert abs(record.ts - expected) < timedelta(microseconds=2), line
        assert (record.client_ip, record.method, record.path, record.status) == (client, method, path, status)
        assert record.host == (host if names_host else None)
        assert record.user_agent == (agent if has_agent else "")
        if name == "varnish":
            assert record.target_host == host


@pytest.mark.parametrize(("name", "value"), [
    ("envoy", 'apache:[%{%Y-%m-%dT%H:%M:%S.%f%z}t] "%r" %>s %{field4}e %b %{field6}e %{field7}e %{field8}e "%h" '
              '"%{User-Agent}i" "%{field11}e" "%{Host}i" "%{field13}e"'),
    ("heroku", 'apache:%{%Y-%m-%dT%H:%M:%S.%f%z}t %{field2}e at=%{at}e method=%m path="%U%q" host=%{Host}i '
               'request_id=%{request_id}e fwd="%h" dyno=%{dyno}e connect=%{connect}e service=%{service}e '
               'status=%>s bytes=%b protocol=%{protocol}e'),
    # a referer logged as "-" on every line says nothing of what it is: matched and skipped
    ("lighttpd", 'apache:%h %{Host}i %{field3}e %t "%r" %>s %b "%{field8}e" "%{User-Agent}i"'),
])
def test_the_value_printed_names_each_field_where_the_writer_put_it(name, value):
    assert infer_layout(written(WRITERS[name][0])).name == value


def test_json_fields_are_found_by_key_name_and_value_at_any_depth():
    assert dict(infer_layout(written(caddy)).field_map) == {
        "ts": "ts", "client_ip": "request.client_ip", "host": "request.host", "method": "request.method",
        "target": "request.uri", "status": "status", "size": "size", "user_agent": "request.headers.User-Agent.0",
    }
    zeek_map = infer_layout(written(zeek)).field_map
    assert (zeek_map["client_ip"], zeek_map["status"], zeek_map["size"]) == ("[id.orig_h]", "status_code",
                                                                               "response_body_len")


def test_the_option_printed_is_one_a_shell_passes_back_unchanged():
    text = infer_layout(written(envoy))
    arguments = shlex.split(text.option())
    assert arguments == ["--log-format", text.name]
    json_arguments = shlex.split(infer_layout(written(zeek)).option())
    assert json_arguments[:3] == ["--log-format", "jsonl", "--field-map"]
    assert json.loads(json_arguments[3])["client_ip"] == "[id.orig_h]"


def test_lines_of_another_shape_are_not_read_and_count_against_the_share():
    lines = written(heroku)
    # the router's error lines add keys before the method: its value takes them in, the request is read
    error = ('2026-12-07T10:30:00.000000+00:00 heroku[router]: at=error code=H12 desc="Request timeout" method=GET '
             'path="/slow" host=www.example.com request_id=x fwd="66.249.66.1" dyno=web.1 connect=0ms '
             'service=30000ms status=503 bytes=0 protocol=https')
    # the app's own lines in the same stream are no request
    app = "2026-12-07T10:30:01.000000+00:00 app[web.1]: Started GET \"/slow\" for 66.249.66.1"
    inferred = infer_layout([*lines, error, app])
    assert (inferred.read, inferred.sample) == (len(lines) + 1, len(lines) + 2)
    assert parser_for(inferred.name)(error).status == 503
    assert str(inferred).startswith("no known format; inferred --log-format 'apache:")
    assert str(inferred).endswith(f"({len(lines) + 1} of {len(lines) + 2} lines read, 88%)")


@pytest.mark.parametrize(("stamp", "directive", "utc"), [
    ("2026-12-07T11:00:00.5+01:00", "%{%Y-%m-%dT%H:%M:%S.%f%z}t", datetime(2026, 12, 7, 10, 0, 0, 500000, UTC)),
    ("2026-12-07 10:00:00,250Z", "%{%Y-%m-%d %H:%M:%S,%f%z}t", datetime(2026, 12, 7, 10, 0, 0, 250000, UTC)),
    ("2026-12-07T05:00:00-0500", "%{%Y-%m-%dT%H:%M:%S%z}t", datetime(2026, 12, 7, 10, tzinfo=UTC)),
    ("2026/12/07 10:00:00", "%{%Y/%m/%d %H:%M:%S}t", datetime(2026, 12, 7, 10, tzinfo=UTC)),
    ("07/Dec/2026:11:00:00 +0100", "%{%d/%b/%Y:%H:%M:%S %z}t", datetime(2026, 12, 7, 10, tzinfo=UTC)),
    ("[07/Dec/2026:11:00:00 +0100]", "%t", datetime(2026, 12, 7, 10, tzinfo=UTC)),
    ("1796637600", "%{sec}t", datetime(2026, 12, 7, 10, tzinfo=UTC)),
    ("1796637600123", "%{msec}t", datetime(2026, 12, 7, 10, 0, 0, 123000, UTC)),
    ("1796637600123456", "%{usec}t", datetime(2026, 12, 7, 10, 0, 0, 123456, UTC)),
    ("1796637600.123", "%{sec}t.%{msec_frac}t", datetime(2026, 12, 7, 10, 0, 0, 123000, UTC)),
    ("1796637600.123456", "%{sec}t.%{usec_frac}t", datetime(2026, 12, 7, 10, 0, 0, 123456, UTC)),
    # a fraction of another length is matched, not read
    ("1796637600.1234", "%{sec}t.%{fraction}e", datetime(2026, 12, 7, 10, tzinfo=UTC)),
    ("1796637600123.456", "%{msec}t.%{fraction}e", datetime(2026, 12, 7, 10, 0, 0, 123000, UTC)),
])
def test_times_in_each_common_spelling_are_found_and_read(stamp, directive, utc):
    lines = [f'{stamp} 66.249.66.{n} "GET /{n} HTTP/1.1" 200 {n} "{GOOGLEBOT}"' for n in range(5)]
    inferred = infer_layout(lines)
    assert inferred.name == f'apache:{directive} %h "%r" %>s %b "%{{User-Agent}}i"'
    assert parser_for(inferred.name)(lines[0]).ts == utc


def test_unix_seconds_whose_fraction_varies_in_length_keep_the_seconds():
    # a writer that leaves out trailing zeros: no one fraction directive reads most lines
    lines = [f'1796637600.{fraction} 66.249.66.{n} "GET /{n} HTTP/1.1" 200'
             for n, fraction in enumerate(("123", "12", "123456", "5", "1234"))]
    inferred = infer_layout(lines)
    assert inferred.name == 'apache:%{sec}t.%{fraction}e %h "%r" %>s'
    assert inferred.read == len(lines)


def test_uwsgi_lines_give_their_asctime_and_the_status_in_parentheses():
    lines = [f"[pid: 881|app: 0|req: {n}/{n}] 66.249.66.{n} () {{38 vars in 69{n} bytes}} [Mon Dec  7 10:00:0{n} 2026] "
             f"GET /{n} => generated 4{n} bytes in 1{n} msecs (HTTP/1.{n % 2} {status}) 9 headers in 37{n} bytes "
             f"(1 switches on core {n})" for n, status in enumerate((200, 404, 200, 301, 200))]
    inferred = infer_layout(lines)
    assert (inferred.read, inferred.sample) == (5, 5)
    assert "[%{%a %b %e %H:%M:%S %Y}t]" in inferred.name and "%>s)" in inferred.name
    records = [parser_for(inferred.name)(line) for line in lines]
    assert [(r.client_ip, r.path, r.status) for r in records][1] == ("66.249.66.1", "/1", 404)
    assert records[2].ts == datetime(2026, 12, 7, 10, 0, 2, tzinfo=UTC)


def test_lines_inside_an_envelope_give_their_own_time_not_the_envelope_s():
    # the kubelet's CRI frame carries the time the line was written out, seconds after the request
    lines = [f"2026-12-07T10:05:0{index}.000000000Z stdout F {written(envoy)[index]}" for index in range(len(REQUESTS))]
    inferred = infer_layout(lines)
    assert inferred.name.startswith("cri+apache:[%{") and (inferred.read, inferred.sample) == (len(lines), len(lines))
    assert parser_for(inferred.name)(lines[1]).ts == moment(1)


def test_a_status_of_0_among_statuses_is_read_as_0():
    # Envoy writes 0 where the client left before any response
    lines = [f'[2026-12-07T10:00:0{n}.000Z] "GET /{n} HTTP/1.1" {status} "66.249.66.{n}" "{GOOGLEBOT}"'
             for n, status in enumerate((0, 200, 200, 404, 200))]
    inferred = infer_layout(lines)
    assert (inferred.read, inferred.sample) == (5, 5)
    assert [parser_for(inferred.name)(line).status for line in lines] == [0, 200, 200, 404, 200]


def test_addresses_with_a_port_and_forwarded_for_lists_are_told_apart():
    lines = [f'[2026-12-07T10:00:0{n}Z] [2001:db8::{n}]:443 "GET /{n} HTTP/1.1" 200 "66.249.66.{n}, 10.0.0.{n}"'
             for n in range(5)]
    inferred = infer_layout(lines)
    assert inferred.name == 'apache:[%{%Y-%m-%dT%H:%M:%S%z}t] %h "%r" %>s "%{X-Forwarded-For}i"'
    record = parser_for(inferred.name)(lines[1])
    assert (record.client_ip, record.forwarded_for) == ("2001:db8::1", "66.249.66.1, 10.0.0.1")


def test_no_layout_is_inferred_without_a_client_a_time_and_a_request():
    assert infer_layout(["hello world", "nothing here"]) is None
    assert infer_layout([f'66.249.66.{n} "GET / HTTP/1.1" 200' for n in range(3)]) is None  # no time
    assert infer_layout([json.dumps({"ts": 1796637600, "uri": "/"})]) is None  # no client
    assert infer_layout(["", "  "]) is None


def test_lines_built_to_be_deep_long_or_oddly_keyed_are_left_out_of_the_inference():
    deep = "{" + '"a":{' * 5000 + "}" * 5001
    odd_keys = [json.dumps({"..": "1.2.3.4", ".x": 1, **json.loads(line)}) for line in written(zeek)]
    inferred = infer_layout([*odd_keys, deep])
    assert (inferred.read, inferred.sample, inferred.field_map["client_ip"]) == (6, 7, "[id.orig_h]")
    long = written(envoy)[0] + ' "x"' * 20_000
    inferred = infer_layout([long, *written(envoy)])
    assert (inferred.read, inferred.sample) == (6, 7) and inferred.name.endswith('"%{field13}e"')


COMBINED = [f'66.249.66.{n} - - [{clf_time(n)}] "GET /{n} HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"' for n in range(6)]


def test_auto_keeps_a_preset_that_reads_the_lines_and_infers_only_where_none_does():
    assert detected_format(COMBINED) == Candidate("combined", 6, 6)
    found = detected_format(written(envoy))
    assert isinstance(found, InferredFormat) and found.read == 6
    assert detected_format(["hello world"] * 4) is None
    # a preset that reads as many lines as the inferred layout is taken before it
    assert inferred_choice(infer_layout(COMBINED), rank_formats(COMBINED)) is None


def test_an_inferred_layout_is_taken_by_the_rule_every_candidate_is_taken_by():
    half = written(envoy)[:3] + ["garbage line"] * 4
    inferred = infer_layout(half)
    assert (inferred.read, inferred.sample) == (3, 7)
    contest = sorted((*rank_formats(half), inferred), key=lambda candidate: -candidate.read)
    assert (inferred_choice(inferred, rank_formats(half)) is inferred) == (chosen_format(contest) is inferred)


# ------------------------------------------------------------------ any layout of the fields

AGENTS = (GOOGLEBOT, BINGBOT, BROWSER, "curl/8.5.0", "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)")
HOSTS = ("www.example.com", "shop.example.org", "a-b.example.net", "static.cdn.example.com")
# spelling -> how a moment is written in it, and what of it is read back
SPELLINGS = {
    "clf": (lambda at: at.strftime("[%d/%b/%Y:%H:%M:%S +0000]"), lambda at: at.replace(microsecond=0)),
    "iso_fraction_offset": (lambda at: at.astimezone(timezone(timedelta(hours=-5))).isoformat(timespec="microseconds"), lambda at: at),
    "iso_z_millis": (lambda at: at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z",
                     lambda at: at.replace(microsecond=at.microsecond // 1000 * 1000)),
    "epoch_seconds": (lambda at: str(int(at.timestamp())), lambda at: at.replace(microsecond=0)),
    "epoch_millis": (lambda at: str(int(at.timestamp()) * 1000 + at.microsecond // 1000),
                     lambda at: at.replace(microsecond=at.microsecond // 1000 * 1000)),
}
# field -> its key when the writer names its values
KEYS = {"ts": "time", "client_ip": "ip", "request": "request", "method": "method", "target": "path",
        "status": "status", "size": "bytes", "user_agent": "ua", "referer": "referer", "host": "host",
        "id": "request_id", "duration": "duration"}

requests_drawn = st.tuples(
    st.datetimes(datetime(2002, 1, 1), datetime(2090, 1, 1), timezones=st.just(UTC)),
    st.ip_addresses(v=4).map(str),
    st.sampled_from(sorted(("GET", "HEAD", "POST"))),
    st.from_regex(r"/[a-z0-9._~-]{0,12}(\?[a-z]=[0-9]{1,3})?", fullmatch=True),
    st.integers(100, 599),
    st.integers(1000, 10**8),
    st.sampled_from(AGENTS),
    st.sampled_from(HOSTS),
)


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    spelling=st.sampled_from(sorted(SPELLINGS)),
    apart=st.booleans(),
    keyed=st.booleans(),
    rows=st.lists(requests_drawn, min_size=5, max_size=12),
)
def test_fields_in_any_order_are_inferred_and_read_back(data, spelling, apart, keyed, rows):
    # the request as one quoted line, or its method and target apart (one after the other)
    request = ["method+target"] if apart else ["request"]
    fields = data.draw(st.permutations(["ts", "client_ip", *request, "status", "size", "user_agent", "referer",
                                        "host", "id", "duration"]))
    write_time, read_time = SPELLINGS[spelling]

    def value(field, index, row):
        at, client, method, path, status, size, agent, host = row
        written = {
            "ts": write_time(at), "client_ip": client, "request": f'"{method} {path} HTTP/1.1"',
            "status": str(status), "size": str(size), "user_agent": f'"{agent}"',
            "referer": f'"https://{HOSTS[index % len(HOSTS)]}/from/{index}"', "host": host,
            "id": f"{index:08x}-1b2c-4d5e-8f90-{status:012d}", "duration": f"{size % 997}ms",
        }
        if field == "method+target":
            return f"{KEYS['method']}={method} {KEYS['target']}={path}" if keyed else f"{method} {path}"
        if keyed and field == "ts" and spelling == "clf":
            return f"{KEYS['ts']}={written['ts'][1:-1]!r}".replace("'", '"')
        return f"{KEYS[field]}={written[field]}" if keyed else written[field]

    lines = [" ".join(value(field, index, row) for field in fields) for index, row in enumerate(rows)]
    inferred = infer_layout(lines)
    assert inferred is not None, lines[0]
    assert (inferred.read, inferred.sample) == (len(lines), len(lines)), inferred.name
    parse = parser_for(inferred.name)
    for line, (at, client, method, path, status, size, agent, host) in zip(lines, rows):
        record = parse(line)
        assert (record.ts, record.client_ip, record.method, record.path) == (read_time(at), client, method, path)
        assert (record.status, record.size, record.user_agent, record.host) == (status, size, agent, host), inferred.name


# field -> names JSON writers give it
JSON_NAMES = {
    "ts": ("ts", "time", "timestamp", "@timestamp", "start_time"),
    "client_ip": ("client_ip", "remote_addr", "ip", "clientIP", "src_ip"),
    "method": ("method", "request_method", "verb", "http_method"),
    "target": ("uri", "url", "path", "request_uri", "target"),
    "status": ("status", "status_code", "response_status", "code"),
    "size": ("size", "bytes_sent", "body_bytes_sent", "response_size"),
    "user_agent": ("user_agent", "userAgent", "ua", "http_user_agent", "headers.User-Agent.0"),
    "referer": ("referer", "referrer", "http_referer", "headers.Referer.0"),
    "host": ("host", "authority", "vhost", "server_name"),
}
# how a JSON writer writes the time, and what of it is read back
JSON_TIMES = {
    "seconds": (lambda at: int(at.timestamp()) + at.microsecond // 1000 / 1000, lambda at: at.replace(microsecond=at.microsecond // 1000 * 1000)),
    "milliseconds": (lambda at: int(at.timestamp()) * 1000 + at.microsecond // 1000,
                     lambda at: at.replace(microsecond=at.microsecond // 1000 * 1000)),
    "iso": (lambda at: at.isoformat(timespec="microseconds").replace("+00:00", "Z"), lambda at: at),
}


def _placed(document: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    for step in parents:
        document = document.setdefault(step, {})
    if last.isdecimal():
        raise AssertionError("a list is written whole")
    document[last] = value


@settings(max_examples=40, deadline=None)
@given(
    names=st.fixed_dictionaries({field: st.sampled_from(names) for field, names in JSON_NAMES.items()}),
    nests=st.fixed_dictionaries({field: st.sampled_from(("", "request.", "http.")) for field in JSON_NAMES}),
    time=st.sampled_from(sorted(JSON_TIMES)),
    rows=st.lists(requests_drawn, min_size=5, max_size=12),
)
def test_json_fields_under_any_common_name_and_depth_are_inferred_and_read_back(names, nests, time, rows):
    write_time, read_time = JSON_TIMES[time]
    lines = []
    for index, (at, client, method, path, status, size, agent, host) in enumerate(rows):
        document: dict = {"level": "info", "request_id": f"{index:08x}-1b2c", "duration": size % 997 / 1000}
        values = {"ts": write_time(at), "client_ip": client, "method": method, "target": path, "status": status,
                  "size": size, "user_agent": agent, "referer": f"https://{HOSTS[index % len(HOSTS)]}/from/{index}",
                  "host": host}
        for field, value in values.items():
            name = names[field]
            if name.endswith(".0"):  # a header logged as the list of its values
                name, value = name[:-2], [value]
            _placed(document, nests[field] + name, value)
        lines.append(json.dumps(document))
    inferred = infer_layout(lines)
    assert inferred is not None, lines[0]
    assert (inferred.read, inferred.sample) == (len(lines), len(lines)), inferred.option()
    parse = parser_for(inferred.name, mapping=inferred.field_map)
    for line, (at, client, method, path, status, size, agent, host) in zip(lines, rows):
        record = parse(line)
        assert (record.ts, record.client_ip, record.method, record.path) == (read_time(at), client, method, path)
        assert (record.status, record.size, record.user_agent, record.host) == (status, size, agent, host), \
            inferred.option()


def test_a_json_request_line_is_kept_whole_unless_the_method_and_target_are_logged_apart():
    lines = [json.dumps({"time": f"2026-12-07T10:00:0{n}+00:00", "remote_addr": f"66.249.66.{n}",
                         "request": f"HEAD /{n}?a=1 HTTP/1.1", "request_uri": f"/{n}?a=1", "status": 200})
             for n in range(4)]
    inferred = infer_layout(lines)
    assert dict(inferred.field_map) == {"ts": "time", "client_ip": "remote_addr", "request": "request",
                                        "status": "status"}
    assert parser_for("jsonl", mapping=inferred.field_map)(lines[2]).method == "HEAD"


def test_the_client_is_the_address_whose_port_changes_and_a_mesh_host_may_be_a_bare_name():
    # Envoy in a mesh: upstream host (a fixed port), upstream local (loopback), downstream local
    # (a fixed port), downstream remote (the client, its own ports); the authority a service name
    lines = [f'[2026-12-07T10:00:0{n}.000Z] "GET /{n} HTTP/1.1" 200 - "{GOOGLEBOT}" "reviews:9080" '
             f'"10.0.0.{n}:9080" 127.0.0.6:4{n}123 10.0.0.{n}:9080 66.249.66.{n}:5{n}321' for n in range(5)]
    record = parser_for(infer_layout(lines).name)(lines[3])
    assert (record.client_ip, record.host) == ("66.249.66.3", "reviews")


def test_a_bracket_that_names_its_value_and_fields_between_tabs_are_read():
    labelled = [f'[07/Dec/2026:10:00:0{n} +0000] - 200 GET https www.example.com "/{n}" [Client 66.249.66.{n}] '
                f'[Length {n}] "{GOOGLEBOT}"' for n in range(5)]
    inferred = infer_layout(labelled)
    assert "[Client %h] [Length %b]" in inferred.name
    assert parser_for(inferred.name)(labelled[2]).client_ip == "66.249.66.2"
    tabbed = [f"179663760{n}\t66.249.66.{n}\tGET\twww.example.com\t/{n}\t{GOOGLEBOT}\t200" for n in range(5)]
    record = parser_for(infer_layout(tabbed).name)(tabbed[1])
    assert (record.user_agent, record.status, record.host) == (GOOGLEBOT, 200, "www.example.com")
