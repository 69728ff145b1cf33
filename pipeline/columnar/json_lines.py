"""An Arrow table of one record table's rows as JSON Lines, the bytes the JSON Lines sinks write
for the same records (`pipeline.tables.json_rows.JsonRows`): a `json` column, which Arrow holds as
its object's JSON text, is written as the object.

A table in the record table's shape (its columns, in order, and its structs' fields) is written
column by column, each value's text as `JsonRows` writes it inside a row: each distinct timestamp,
float, boolean or object is written once by orjson and gathered to the rows (`take`); a text goes between
quotes as it is unless it holds what orjson escapes, and only those go through orjson; an integer
is its digits. The texts are joined between the keys' literal fragments
(`binary_join_element_wise`); a struct's value is an object joined the same way from its fields'
texts, a list's from its items' texts. Any other table goes through `JsonRows` row by row, which
shapes the records first.
"""
from __future__ import annotations

import json

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from matcher.records import Column
from pipeline.columnar.rows import python_values, records_of
from pipeline.tables.json_rows import JsonRows

__all__ = ["json_lines"]

_TEXT = pa.large_binary()
_NULL = pa.scalar(b"null", _TEXT)
_NOTHING = pa.scalar(b"", _TEXT)
_QUOTE = pa.scalar(b'"', _TEXT)
_ESCAPED = r'["\\\x00-\x1f]'


class _OtherShape(Exception):
    """A column whose values are not written column by column here."""


def json_lines(table: pa.Table, columns: tuple[Column, ...]) -> bytes:
    """`JsonRows(columns).lines` of the table's records (`records_of`): the rows as JSON Lines
    without the final newline."""
    if table.num_rows == 0:
        return b""
    if columns and table.column_names == [column.name for column in columns]:
        try:
            return _by_column(table.combine_chunks(), columns)
        except _OtherShape:
            pass
    return JsonRows(columns).lines(records_of(table, columns))


def _by_column(table: pa.Table, columns: tuple[Column, ...]) -> bytes:
    for column, kind in zip(columns, table.schema.types):
        if (column.type == "struct") != pa.types.is_struct(kind):
            raise _OtherShape(column.name)
    texts = _object(
        [column.name for column in columns],
        [_texts(table.column(index).chunk(0), column) for index, column in enumerate(columns)],
        b"\n",
    )
    _, offsets, data = texts.buffers()
    ends = pa.Array.from_buffers(pa.int64(), len(texts) + 1, [None, offsets], offset=texts.offset)
    return data[ends[0].as_py():ends[-1].as_py() - 1].to_pybytes()


def _texts(array: pa.Array, column: Column | None) -> pa.Array:
    """Each value's JSON text as orjson writes it within a record, `null` for a null; `column` is
    what the values are of (None: a list's items), a struct's fields those it must have, in order."""
    kind = array.type
    if pa.types.is_struct(kind):
        names = [kind.field(index).name for index in range(kind.num_fields)]
        fields = column.fields if column is not None else ()
        if not names or names != [field.name for field in fields]:
            raise _OtherShape(kind)
        texts = [_texts(array.field(index), field) for index, field in enumerate(fields)]
        return _or_null(array, _object(names, texts, b""))
    if column is not None and column.type == "json":
        return _objects(array)
    if pa.types.is_list(kind):
        items = _texts(array.flatten(), None)
        lengths = pc.fill_null(pc.list_value_length(array), 0)
        offsets = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(lengths).cast(pa.int64())])
        joined = pc.binary_join(pa.LargeListArray.from_arrays(offsets, items), pa.scalar(b",", _TEXT))
        listed = pc.binary_join_element_wise(pa.scalar(b"[", _TEXT), joined, pa.scalar(b"]", _TEXT), _NOTHING)
        return _or_null(array, listed)
    if pa.types.is_string(kind):
        return _strings(array)
    if pa.types.is_int64(kind):
        # a JSON integer has one spelling, its decimal digits
        return pc.fill_null(array.cast(pa.large_string()).cast(_TEXT), _NULL)
    if not _written_by_value(kind):
        raise _OtherShape(kind)
    encoded = pc.dictionary_encode(array)
    distinct = [orjson.dumps(value, option=orjson.OPT_UTC_Z) for value in python_values(encoded.dictionary)]
    return pc.fill_null(pa.array(distinct, _TEXT).take(encoded.indices), _NULL)


def _objects(array: pa.Array) -> pa.Array:
    """A `json` column's texts, each distinct one written as its object."""
    encoded = pc.dictionary_encode(array)
    distinct = [orjson.dumps(json.loads(text)) for text in encoded.dictionary.to_pylist()]
    return pc.fill_null(pa.array(distinct, _TEXT).take(encoded.indices), _NULL)


def _written_by_value(kind: pa.DataType) -> bool:
    return pa.types.is_float64(kind) or pa.types.is_boolean(kind) or (pa.types.is_timestamp(kind) and kind.tz == "UTC")


def _strings(array: pa.Array) -> pa.Array:
    """A text orjson writes as it is between quotes unless it holds a quote, a backslash or a
    control character, which orjson writes escaped."""
    quoted = pc.binary_join_element_wise(_QUOTE, array.cast(_TEXT), _QUOTE, _NOTHING)
    escaped = pc.fill_null(pc.match_substring_regex(array, _ESCAPED), False)
    if pc.any(escaped).as_py():
        written = [orjson.dumps(value) for value in array.filter(escaped).to_pylist()]
        quoted = pc.replace_with_mask(quoted, escaped, pa.array(written, _TEXT))
    return pc.fill_null(quoted, _NULL)


def _object(names: list[str], values: list[pa.Array], after: bytes) -> pa.Array:
    """`{"name":value,...}` per row, then `after`."""
    pieces = []
    for at, (name, value) in enumerate(zip(names, values)):
        pieces += [pa.scalar((b"," if at else b"{") + orjson.dumps(name) + b":", _TEXT), value]
    return pc.binary_join_element_wise(*pieces, pa.scalar(b"}" + after, _TEXT), _NOTHING)


def _or_null(array: pa.Array, texts: pa.Array) -> pa.Array:
    if array.null_count:
        return pc.if_else(array.is_valid(), texts, _NULL)
    return texts
