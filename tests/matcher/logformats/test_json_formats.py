"""JSON-lines formats (`matcher.logformats.json_formats`): a field mapping checked once and split into
paths, and the presets, which pass the same check."""
from __future__ import annotations

import pytest

from matcher.logformats import JSON_FIELDS, PRESETS, parser_for
from matcher.logformats.json_formats import check_mapping


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
