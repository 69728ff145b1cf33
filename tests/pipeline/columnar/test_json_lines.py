"""An Arrow table written as JSON Lines column by column is byte for byte what the JSON Lines sinks
write for its records (`JsonRows` over `Table.to_pylist`, the JSON text of a `json` column read
back into its object), on drawn tables of every record table with timestamps, structs or lists,
and on the verdicts of the bundled sample."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drawn_records import NESTED_OR_TIMED, tables
from matcher import records
from pipeline.columnar.json_lines import json_lines
from pipeline.tables.json_rows import JsonRows
from pipeline.tables.schema import arrow_schema


def _records(table: pa.Table, columns) -> list[dict]:
    texts = {column.name for column in columns if column.type == "json"}
    return [
        {name: json.loads(value) if name in texts and value is not None else value for name, value in row.items()}
        for row in table.to_pylist()
    ]


def _first_difference(got: bytes, expected: bytes) -> tuple | None:
    """The first line that differs, as (line number, got, expected); a short message where a
    diff of whole files would take minutes."""
    if got == expected:
        return None
    got_lines, expected_lines = got.split(b"\n"), expected.split(b"\n")
    for at, (line, wanted) in enumerate(zip(got_lines, expected_lines)):
        if line != wanted:
            return at, line, wanted
    return len(got_lines), len(expected_lines)


@pytest.mark.parametrize("name", NESTED_OR_TIMED)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_drawn_tables_are_written_as_the_sinks_write_their_rows(name, data):
    columns = records.TABLES[name]
    table = data.draw(tables(columns))
    assert _first_difference(json_lines(table, columns), JsonRows(columns).lines(_records(table, columns))) is None


def test_a_table_without_rows_is_no_bytes():
    assert json_lines(arrow_schema(records.VERDICTS).empty_table(), records.VERDICTS) == b""


def test_a_table_of_other_columns_is_written_as_the_sinks_write_such_rows():
    # rows not in the table's shape are shaped first: columns in order, the missing ones null
    columns = records.ROBOTS_VERSIONS
    row = {
        "host": "www.example.com", "effective_from": datetime(2026, 11, 2, 9, tzinfo=timezone.utc), "status": "200",
        "kind": "ok", "sha256": None, "body": "User-agent: *\nDisallow: /private\n",
    }
    table = pa.Table.from_pylist([row, row], schema=arrow_schema(columns)).select(["status", "host", "effective_from"])
    written = json_lines(table, columns)
    assert written == JsonRows(columns).lines(_records(table, columns))
    assert written.split(b"\n")[1] == (
        b'{"host":"www.example.com","effective_from":"2026-11-02T09:00:00Z","status":"200","kind":null,'
        b'"sha256":null,"body":null}'
    )


def test_the_sample_verdicts_are_written_as_the_sinks_write_them(sample_verdicts):
    expected = JsonRows(records.VERDICTS).lines(_records(sample_verdicts, records.VERDICTS))
    assert expected.count(b"\n") + 1 == sample_verdicts.num_rows
    assert _first_difference(json_lines(sample_verdicts, records.VERDICTS), expected) is None


def test_a_json_column_is_written_as_its_object_as_the_audit_made_it():
    verdict = {column.name: None for column in records.VERDICTS}
    verdict.update(ts=datetime(2026, 11, 2, 9, tzinfo=timezone.utc), indexing={"noindex": True, "nofollow": False})
    table = pa.Table.from_pylist([records.shaped(verdict, records.VERDICTS)], schema=arrow_schema(records.VERDICTS))
    written = json.loads(json_lines(table, records.VERDICTS))
    assert written["indexing"] == {"noindex": True, "nofollow": False}
    assert written == json.loads(JsonRows(records.VERDICTS).line(verdict))
