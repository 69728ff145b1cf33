"""Output records and their one schema (`matcher.records`): rows shaped for each format, the JSON
Schema of a JSON Lines record, and records of real verdicts and robots versions checked against it."""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

import pytest

from config.registry import default_registry
from config.snapshots import load_ranges
from helpers import GOOGLEBOT, REPO
from matcher.audit import audit
from matcher.history import HostHistory, RobotsVersion
from matcher.logformats import LogRecord
from matcher.robots import MAX_BYTES as MAX_ROBOTS_BYTES
from matcher.records import (
    ROBOTS_VERSIONS,
    TABLES,
    VERDICTS,
    Column,
    json_schema,
    rfc3339,
    robots_version_record,
    shaped,
    shaper,
    to_json_ready,
)

UTC = timezone.utc
T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
ROBOTS_VERSION = next(column for column in VERDICTS if column.name == "robots_version").fields


def conforms(value: object, schema: dict) -> bool:
    """Whether `value` is valid under `schema`, for the keywords `json_schema` writes."""
    if "anyOf" in schema:
        return any(conforms(value, option) for option in schema["anyOf"])
    kind = schema["type"]
    if kind == "null":
        return value is None
    if kind == "string":
        if not isinstance(value, str):
            return False
        if schema.get("format") == "date-time":
            try:
                return datetime.fromisoformat(value).tzinfo is not None
            except ValueError:
                return False
        return True
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list) and all(conforms(item, schema["items"]) for item in value)
    if kind == "object":
        if not isinstance(value, dict):
            return False
        properties = schema.get("properties")
        if properties is None:
            return True
        if schema.get("additionalProperties") is False and not set(value) <= set(properties):
            return False
        return set(schema["required"]) <= set(value) and all(
            conforms(item, properties[name]) for name, item in value.items()
        )
    raise AssertionError(f"a keyword json_schema does not write: {kind}")


# ------------------------------------------------------------------ the JSON Schema


def test_the_schema_of_a_table_requires_every_column_and_nothing_else():
    schema = json_schema(VERDICTS, "verdict")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "verdict"
    assert (schema["type"], schema["additionalProperties"]) == ("object", False)
    assert schema["required"] == [column.name for column in VERDICTS]
    assert list(schema["properties"]) == schema["required"]
    assert "title" not in json_schema(VERDICTS)


def test_each_column_type_has_its_json_form_and_nullable_columns_admit_null():
    properties = json_schema(VERDICTS)["properties"]
    assert properties["ts"] == {"description": "request time (UTC)", "type": "string", "format": "date-time"}
    assert properties["status"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert properties["crawl_delay"]["anyOf"] == [{"type": "number"}, {"type": "null"}]
    assert properties["honours_robots"]["anyOf"] == [{"type": "boolean"}, {"type": "null"}]
    assert properties["tokens"]["type"] == "array" and properties["tokens"]["items"] == {"type": "string"}
    assert properties["indexing"]["anyOf"] == [{"type": "object"}, {"type": "null"}]
    version = properties["robots_version"]["anyOf"][0]
    assert version["required"] == [column.name for column in ROBOTS_VERSION]
    assert version["additionalProperties"] is False
    assert version["properties"]["effective_from"]["format"] == "date-time"


def _sample_verdict(**changes) -> dict:
    body = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"
    history = HostHistory([RobotsVersion("www.example.com", T0 - timedelta(days=1), 200, body)])
    record = LogRecord(T0, "www.example.com", "66.249.66.1", "GET", "/private/a", "/private/a", 200, 5, None,
                       GOOGLEBOT, None, ("noindex",))
    record = LogRecord(**{**vars(record), **changes})
    ranges = load_ranges(REPO / "samples" / "ranges")
    return audit(record, "access.log:1", default_registry(), ranges, history)


@pytest.mark.parametrize(
    "changes", [{}, {"host": None}, {"status": None, "x_robots_tag": ()}, {"user_agent": "FooBot/1.0 (+http://f.example)"}]
)
def test_a_written_verdict_is_valid_under_the_schema(changes):
    row = to_json_ready(_sample_verdict(**changes), VERDICTS)
    assert conforms(json.loads(json.dumps(row)), json_schema(VERDICTS))


def test_the_schema_refuses_what_a_verdict_must_not_be():
    row = json.loads(json.dumps(to_json_ready(_sample_verdict(), VERDICTS)))
    schema = json_schema(VERDICTS)
    assert not conforms({**row, "extra": 1}, schema)
    assert not conforms({key: value for key, value in row.items() if key != "decision"}, schema)
    assert not conforms({**row, "ts": None}, schema)  # not nullable
    assert not conforms({**row, "ts": "2026-11-02T10:00:00"}, schema)  # no offset: no date-time
    assert not conforms({**row, "rule_line": "3"}, schema)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_row_of_nulls_is_valid_exactly_when_every_column_is_nullable(name):
    columns = TABLES[name]
    row = to_json_ready({}, columns)
    assert list(row) == [column.name for column in columns]
    assert conforms(row, json_schema(columns)) is all(column.nullable for column in columns)


# ------------------------------------------------------------------ robots versions


def test_a_robots_version_record_carries_status_kind_digest_and_body_text():
    body = b"\xef\xbb\xbfUser-agent: *\nDisallow: /caf\xc3\xa9 \xff\n"
    record = robots_version_record(RobotsVersion("WWW.Example.com", T0, 200, body))
    assert record == {
        "host": "www.example.com", "effective_from": T0, "status": "200", "kind": "ok",
        "sha256": hashlib.sha256(body).hexdigest(), "body": "\ufeffUser-agent: *\nDisallow: /café \ufffd\n",
    }
    assert conforms(to_json_ready(record, ROBOTS_VERSIONS), json_schema(ROBOTS_VERSIONS))


@pytest.mark.parametrize(("status", "shown", "kind"), [(None, "unreachable", "error"), (503, "503", "error"), (404, "404", "unavailable")])
def test_a_robots_version_without_a_body(status, shown, kind):
    record = robots_version_record(RobotsVersion("example.com", T0, status))
    assert (record["status"], record["kind"], record["sha256"], record["body"]) == (shown, kind, None, None)


def test_only_the_parsed_part_of_a_huge_body_is_kept():
    body = b"# " + b"x" * (MAX_ROBOTS_BYTES + 100)
    record = robots_version_record(RobotsVersion("example.com", T0, 200, body))
    assert len(record["body"]) == MAX_ROBOTS_BYTES
    assert record["sha256"] == hashlib.sha256(body).hexdigest()  # of the whole body


# ------------------------------------------------------------------ shaping rows

COLUMNS = (
    Column("ts", "timestamp", "when"),
    Column("names", "string_list", "names"),
    Column("facts", "json", "facts"),
    Column("version", "struct", "version", fields=ROBOTS_VERSION),
    Column("count", "int", "count"),
)


def test_a_shaped_row_has_the_columns_in_order_missing_ones_null_and_no_others():
    row = {"count": 3, "extra": "dropped", "names": ("a", "b"), "ts": T0}
    assert list(shaped(row, COLUMNS)) == ["ts", "names", "facts", "version", "count"]
    assert shaped(row, COLUMNS) == {"ts": T0, "names": ["a", "b"], "facts": None, "version": None, "count": 3}


def test_columnar_rows_carry_json_columns_as_sorted_text_and_json_rows_as_objects():
    row = {"facts": {"noindex": True, "max-snippet": 5}}
    assert shaped(row, COLUMNS)["facts"] == '{"max-snippet": 5, "noindex": true}'
    assert shaped(row, COLUMNS, json_ready=True)["facts"] == {"noindex": True, "max-snippet": 5}


def test_timestamps_become_rfc3339_text_only_for_json_rows_and_structs_are_shaped_alike():
    version = {"sha256": None, "status": "200", "effective_from": T0 + timedelta(microseconds=7), "junk": 1}
    row = {"ts": T0, "version": version}
    columnar, json_row = shaped(row, COLUMNS), shaped(row, COLUMNS, json_ready=True)
    assert columnar["ts"] == T0 and json_row["ts"] == "2026-11-02T10:00:00Z"
    assert columnar["version"] == {"effective_from": T0 + timedelta(microseconds=7), "status": "200", "sha256": None}
    assert json_row["version"] == {"effective_from": "2026-11-02T10:00:00.000007Z", "status": "200", "sha256": None}
    assert to_json_ready(row, COLUMNS) == json_row


def test_a_tables_shaper_is_made_once_per_kind_of_row():
    assert shaper(VERDICTS) is shaper(VERDICTS)
    assert shaper(VERDICTS, json_ready=True) is shaper(VERDICTS, json_ready=True)
    assert shaper(VERDICTS) is not shaper(VERDICTS, json_ready=True)
    verdict = _sample_verdict()
    assert shaper(VERDICTS, json_ready=True)(verdict) == to_json_ready(verdict, VERDICTS)


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00Z"),  # the year is padded
        (datetime(2026, 11, 2, 3, 4, 5, tzinfo=UTC), "2026-11-02T03:04:05Z"),  # no fraction without one
        (datetime(2026, 11, 2, 3, 4, 5, 10, tzinfo=UTC), "2026-11-02T03:04:05.000010Z"),
        (datetime(2026, 11, 2, 4, 4, 5, tzinfo=timezone(timedelta(hours=1))), "2026-11-02T03:04:05Z"),
    ],
)
def test_rfc3339_writes_utc_with_a_z(moment, text):
    assert rfc3339(moment) == text
