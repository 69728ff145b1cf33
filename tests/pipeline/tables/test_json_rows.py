"""JSON Lines rows: the fast encoder writes what shaping a row and encoding it with `json` writes."""
from __future__ import annotations

import pytest

import json
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from matcher import records
from pipeline.tables.json_rows import JsonRows

VERDICT_COLUMNS = {column.name: column for column in records.VERDICTS}


def _reference(row: dict, columns) -> bytes:
    """The straightforward way: shape the row, encode it compactly with the standard library."""
    shaped = records.to_json_ready(row, columns)
    return json.dumps(shaped, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


utc_times = st.datetimes(timezones=st.just(timezone.utc))
text = st.text()  # lone surrogates included: the encoder must not write what UTF-8 cannot carry
version = st.none() | st.fixed_dictionaries({"effective_from": utc_times, "status": text, "sha256": text})


def _value(column):
    if column.type == "timestamp":
        return st.none() | utc_times
    if column.type == "struct":
        return version
    if column.type == "string_list":
        return st.none() | st.lists(text, max_size=3).map(tuple)
    if column.type == "int":
        # Status and size fields carry up to 20 digits, beyond what 64 bits hold.
        return st.none() | st.integers(min_value=-(10**21), max_value=10**21)
    if column.type == "float":
        return st.none() | st.floats(allow_nan=False, allow_infinity=False)
    if column.type == "bool":
        return st.none() | st.booleans()
    if column.type == "json":
        return st.none() | st.dictionaries(st.sampled_from(["noindex", "max-snippet"]), st.booleans() | st.integers(0, 99))
    return st.none() | text


verdicts = st.fixed_dictionaries({name: _value(column) for name, column in VERDICT_COLUMNS.items()})


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(verdicts)
def test_a_verdict_in_its_shape_is_written_as_the_shaped_standard_encoding(verdict):
    try:
        expected = _reference(verdict, records.VERDICTS)
    except UnicodeEncodeError:
        return  # a lone surrogate: neither path writes it (the parsers escape them before)
    assert JsonRows(records.VERDICTS).line(verdict) == expected


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(verdicts, st.randoms())
def test_a_row_out_of_shape_is_shaped_first(verdict, random):
    names = list(verdict)
    random.shuffle(names)
    reordered = {name: verdict[name] for name in names} | {"not_a_column": 1}
    if verdict["robots_version"] is not None:
        reordered["robots_version"] = {"extra": 1, **dict(reversed(verdict["robots_version"].items()))}
    try:
        expected = _reference(verdict, records.VERDICTS)
    except UnicodeEncodeError:
        return
    assert JsonRows(records.VERDICTS).line(reordered) == expected


def test_timestamps_are_rfc3339_in_utc_with_a_z():
    columns = records.ROBOTS_VERSIONS
    row = {column.name: None for column in columns}
    row["effective_from"] = datetime(1, 1, 1, tzinfo=timezone.utc)
    assert b'"0001-01-01T00:00:00Z"' in JsonRows(columns).line(row)
    row["effective_from"] = datetime(2026, 11, 2, 3, 4, 5, 10, tzinfo=timezone.utc)
    assert b'"2026-11-02T03:04:05.000010Z"' in JsonRows(columns).line(row)


def test_lines_are_joined_without_a_final_newline():
    columns = records.ROBOTS_VERSIONS
    rows = [{column.name: None for column in columns}] * 2
    written = JsonRows(columns).lines(rows)
    assert written.count(b"\n") == 1 and [json.loads(line) for line in written.split(b"\n")] == [
        records.to_json_ready(row, columns) for row in rows
    ]
