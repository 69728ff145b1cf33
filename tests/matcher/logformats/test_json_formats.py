"""JSON-lines formats (`matcher.logformats.json_formats`): a field mapping checked once and split into
paths, and the presets, which pass the same check."""
from __future__ import annotations

import pytest

from matcher.logformats import JSON_FIELDS, PRESETS
from matcher.logformats.json_formats import check_mapping


def test_a_mapping_is_split_into_paths_once():
    assert check_mapping({"ts": "time", "client_ip": "request.client.ip", "request": "req"}) == {
        "ts": ("time",), "client_ip": ("request", "client", "ip"), "request": ("req",),
    }


def test_method_and_target_may_stand_for_the_request_line():
    paths = check_mapping({"ts": "t", "client_ip": "ip", "method": "m", "target": "headers.0"})
    assert paths["target"] == ("headers", "0")


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_passes_the_check_and_maps_only_known_fields(name):
    paths = check_mapping(PRESETS[name])
    assert set(paths) <= set(JSON_FIELDS)
    assert all(paths[field] == tuple(source.split(".")) for field, source in PRESETS[name].items())


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"ts": "t", "client_ip": "ip", "request": "r", "colour": "c"}, r"unknown mapping fields \['colour'\]"),
        ({"ts": "t", "client_ip": "ip", "request": ""}, "must be a dotted field path, got ''"),
        ({"ts": "t", "client_ip": "ip", "request": "a..b"}, "must be a dotted field path"),
        ({"ts": "t", "client_ip": "ip", "request": ".a"}, "must be a dotted field path"),
        ({"ts": "t", "client_ip": "ip", "request": 7}, "must be a dotted field path, got 7"),
        ({"client_ip": "ip", "request": "r"}, "a mapping needs 'ts', 'client_ip'"),
        ({"ts": "t", "request": "r"}, "a mapping needs 'ts', 'client_ip'"),
        ({"ts": "t", "client_ip": "ip", "method": "m"}, "'request' or both 'method' and 'target'"),
    ],
)
def test_a_bad_mapping_is_refused_with_what_is_wrong(mapping, message):
    with pytest.raises(ValueError, match=message):
        check_mapping(mapping)
