"""JSON-lines formats (`matcher.logformats.json_formats`): a field mapping checked once and split into
paths, and the presets, which pass the same check."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matcher.logformats import JSON_FIELDS, PRESETS, LogParseError, parser_for
from matcher.logformats.json_formats import check_mapping, field_paths

# Zeek's JSON http.log (docs.zeek.org, "http.log"): the connection's endpoints are flat keys with dots.
ZEEK_HTTP = (
    '{"ts":1591367999.305988,"uid":"CMdzit1AMNsmfAIiQc","id.orig_h":"192.168.4.76","id.orig_p":46378,'
    '"id.resp_h":"31.3.245.133","id.resp_p":80,"trans_depth":1,"method":"GET","host":"testmyids.com","uri":"/",'
    '"version":"1.1","user_agent":"curl/7.47.0","request_body_len":0,"response_body_len":39,"status_code":200}'
)
ZEEK_MAP = {
    "ts": "ts", "client_ip": "[id.orig_h]", "method": "method", "host": "host", "target": "uri",
    "status": "status_code", "user_agent": "user_agent",
}


def test_a_mapping_is_split_into_paths_once():
    assert check_mapping({"ts": "time", "client_ip": "request.client.ip", "request": "req"}) == {
        "ts": (("time",),), "client_ip": (("request", "client", "ip"),), "request": (("req",),),
    }


def test_a_path_may_name_alternatives_the_first_present_wins():
    assert check_mapping({"ts": "time|t.0", "client_ip": "ip", "request": "r"})["ts"] == (("time",), ("t", "0"))
    parse = parser_for("jsonl", mapping={"ts": "time|t.0", "client_ip": "ip", "request": "r"})
    line = '{"t": ["2026-11-02T10:00:00Z"], "time": "", "ip": "66.249.66.1", "r": "GET / HTTP/1.1"}'
    assert parse(line).ts.isoformat() == "2026-11-02T10:00:00+00:00"


def test_a_query_field_is_joined_to_the_target():
    parse = parser_for("jsonl", mapping={"ts": "t", "client_ip": "ip", "method": "m", "target": "p", "query": "q"})
    line = '{"t": 1793613600, "ip": "66.249.66.1", "m": "GET", "p": "/a", "q": "b=1"}'
    assert parse(line).path == "/a?b=1"
    assert parse(line.replace('"b=1"', '"-"')).path == "/a"


def test_method_and_target_may_stand_for_the_request_line():
    paths = check_mapping({"ts": "t", "client_ip": "ip", "method": "m", "target": "headers.0"})
    assert paths["target"] == (("headers", "0"),)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_passes_the_check_and_maps_only_known_fields(name):
    paths = check_mapping(PRESETS[name])
    assert set(paths) <= set(JSON_FIELDS)
    assert all(
        paths[field] == tuple(tuple(path.split(".")) for path in source.split("|"))
        for field, source in PRESETS[name].items()
    )


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"ts": "t", "client_ip": "ip", "request": "r", "colour": "c"}, r"unknown mapping fields \['colour'\]"),
        ({"ts": "t", "client_ip": "ip", "request": ""}, "must be a dotted field path, got ''"),
        ({"ts": "t", "client_ip": "ip", "request": "a..b"}, "must be a dotted field path"),
        ({"ts": "t", "client_ip": "ip", "request": ".a"}, "must be a dotted field path"),
        ({"ts": "t", "client_ip": "ip", "request": "a|"}, "must be a dotted field path"),
        ({"ts": "t", "client_ip": "ip", "request": 7}, "must be a dotted field path, got 7"),
        ({"ts": "t", "client_ip": "[id.orig_h", "request": "r"}, r"got '\[id.orig_h' \(a key that holds a dot"),
        ({"ts": "t", "client_ip": "[id.orig_h]x", "request": "r"}, "must be a dotted field path"),
        ({"ts": "t", "client_ip": "[]", "request": "r"}, "must be a dotted field path"),
        ({"ts": "t", "client_ip": 'a.""', "request": "r"}, "must be a dotted field path"),
        ({"client_ip": "ip", "request": "r"}, "a mapping needs 'ts', 'client_ip'"),
        ({"ts": "t", "request": "r"}, "a mapping needs 'ts', 'client_ip'"),
        ({"ts": "t", "client_ip": "ip", "method": "m"}, "'request' or 'target'"),
    ],
)
def test_a_bad_mapping_is_refused_with_what_is_wrong(mapping, message):
    with pytest.raises(ValueError, match=message):
        check_mapping(mapping)


def test_the_content_usage_header_is_a_field_of_the_map_and_of_caddy_s_preset():
    parse = parser_for("jsonl", mapping={"ts": "t", "client_ip": "ip", "request": "r", "content_usage": "h"})
    line = '{"t": 1793613600, "ip": "66.249.66.1", "r": "GET / HTTP/1.1", "h": %s}'
    assert parse(line % '"train-ai=n"').content_usage == "train-ai=n"
    assert parse(line % '["train-ai=n", "search=y"]').content_usage == "train-ai=n, search=y"
    assert parse(line % '"-"').content_usage is None and parse(line % "null").content_usage is None
    caddy = parser_for("caddy")
    record = caddy(
        '{"ts": 1793613600.5, "request": {"client_ip": "66.249.66.1", "method": "GET", "host": "www.example.com",'
        ' "uri": "/a", "headers": {}}, "status": 200, "size": 5, "resp_headers": {"Content-Usage": ["train-ai=n"]}}'
    )
    assert record.content_usage == "train-ai=n"


def test_retry_after_is_a_field_of_the_map():
    parse = parser_for("jsonl", mapping={"ts": "t", "client_ip": "ip", "request": "r", "retry_after": "ra"})
    line = '{"t": 1793613600, "ip": "66.249.66.1", "r": "GET / HTTP/1.1", "ra": %s}'
    assert parse(line % '"120"').retry_after == "120"
    assert parse(line % "null").retry_after is None


def test_a_byte_that_is_not_utf8_in_a_json_string_is_kept_as_text_not_a_broken_entry():
    raw = (b'{"time_iso8601":"2026-11-02T10:00:00+00:00","remote_addr":"203.0.113.9","request":"GET / HTTP/1.1",'
           b'"status":"200","http_user_agent":"Mozilla/5.0 (compatible; Googlebot/2.1\xff)"}')
    record = parser_for("nginx_json")(raw.decode("utf-8", "backslashreplace"))  # as lines are read
    assert record.user_agent == "Mozilla/5.0 (compatible; Googlebot/2.1\\xff)"
    escaped = '{"ts":"2026-11-02T10:00:00Z","ip":"1.2.3.4","req":"GET / HTTP/1.1","ua":"a\\\\x41"}'
    assert parser_for("jsonl", mapping={"ts": "ts", "client_ip": "ip", "request": "req", "user_agent": "ua"})(
        escaped).user_agent == "a\\x41"


def test_a_key_in_brackets_or_quotes_keeps_its_dots_and_bars():
    assert field_paths("[id.orig_h]") == (("id.orig_h",),)
    assert field_paths('"id.orig_h"') == (("id.orig_h",),)
    assert field_paths('conn.[id.orig_h]|"a|b".c|d') == (("conn", "id.orig_h"), ("a|b", "c"), ("d",))
    # as before: a bare key is everything up to the next dot or bar, brackets inside it included
    assert field_paths("request.headers.User-Agent.0|h[0]") == (("request", "headers", "User-Agent", "0"), ("h[0]",))


def _written(key: str) -> str:
    """A key as a field map writes it: bare where it can be, else in brackets, else in quotes."""
    if key[0] not in '["' and "." not in key and "|" not in key:
        return key
    return f"[{key}]" if "]" not in key else f'"{key}"'


@given(st.lists(
    st.lists(st.text(min_size=1).filter(lambda key: not ("]" in key and '"' in key)), min_size=1, max_size=4),
    min_size=1, max_size=3,
))
def test_any_keys_written_for_a_field_map_are_read_back_as_those_keys(paths):
    source = "|".join(".".join(_written(key) for key in path) for path in paths)
    assert field_paths(source) == tuple(tuple(path) for path in paths)


def test_zeek_s_flat_keys_with_dots_are_named_in_brackets():
    record = parser_for("jsonl", mapping=ZEEK_MAP)(ZEEK_HTTP)
    assert (record.client_ip, record.host, record.method, record.path, record.status, record.user_agent) == (
        "192.168.4.76", "testmyids.com", "GET", "/", 200, "curl/7.47.0")
    assert record.ts.isoformat() == "2020-06-05T14:39:59.305988+00:00"
    quoted = parser_for("jsonl", mapping={**ZEEK_MAP, "client_ip": '"id.orig_h"'})
    assert quoted(ZEEK_HTTP).client_ip == "192.168.4.76"
    # nested keys are still reached by dots
    nested = json.dumps({"ts": 1, "id": {"orig_h": "192.0.2.7"}, "method": "GET", "uri": "/"})
    assert parser_for("jsonl", mapping={**ZEEK_MAP, "client_ip": "id.orig_h"})(nested).client_ip == "192.0.2.7"


@pytest.mark.parametrize("name", ["jsonl", "nginx_json", "caddy", "fastly"])
def test_an_absolute_target_names_the_host_of_a_line_that_logs_none(name):
    mapping = {"ts": "t", "client_ip": "ip", "method": "m", "target": "u", "host": "h"}
    parse = parser_for(name, default_host="default.example", mapping=mapping)
    line = {"t": 1793613600, "ip": "66.249.66.1", "m": "GET", "u": "https://www.example.com:443/a?b=1"}
    record = parse(json.dumps(line))
    assert (record.host, record.path, record.target_host) == ("www.example.com", "/a?b=1", "www.example.com")
    assert parse(json.dumps({**line, "h": "-"})).host == "www.example.com"
    # a logged host wins; the target's is kept as evidence
    logged = parse(json.dumps({**line, "h": "shop.example.net"}))
    assert (logged.host, logged.target_host) == ("shop.example.net", "www.example.com")
    # an origin-form target names none: the default host stands
    assert parse(json.dumps({**line, "u": "/a"})).host == "default.example"


def test_akamai_s_path_without_its_leading_slash_is_a_path_under_its_host():
    parse = parser_for("akamai_ds2")
    line = {"reqTimeSec": "1793613600", "cliIP": "66.249.66.1", "reqHost": "www.example.com", "reqMethod": "GET",
            "reqPath": "products/x.html", "queryStr": "b=1", "statusCode": "200", "UA": "Googlebot%2F2.1"}
    record = parse(json.dumps(line))
    assert (record.host, record.target, record.path, record.user_agent) == (
        "www.example.com", "/products/x.html?b=1", "/products/x.html?b=1", "Googlebot/2.1")
    assert parse(json.dumps({**line, "reqPath": "/products/x.html"})).path == "/products/x.html?b=1"
    # only the preset's own path field may drop its slash
    own = parser_for("akamai_ds2", mapping={"target": "fullPath"})
    with pytest.raises(LogParseError) as caught:
        own(json.dumps({**line, "fullPath": "products/x.html"}))
    assert caught.value.reason == "bad-target"
