"""Drawn Arrow tables of the record tables' schema (`matcher.records`, `pipeline/tables/schema.py`):
rows shaped like the audit's, with nulls, empty lists, null structs, times at the edges of what a
datetime holds and text that JSON must escape; laid out in one chunk or several, and sliced."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pyarrow as pa
from hypothesis import strategies as st

from matcher import records
from matcher.records import Column, json_text
from matcher.timerange import EPOCH
from pipeline.tables.schema import arrow_schema

_TIMES = st.one_of(
    st.sampled_from([
        EPOCH,
        EPOCH - timedelta(microseconds=1),
        EPOCH + timedelta(microseconds=1),
        datetime.min.replace(tzinfo=timezone.utc),
        datetime.max.replace(tzinfo=timezone.utc),
        datetime(2026, 11, 2, 9, 0, 0, 123456, tzinfo=timezone.utc),
    ]),
    st.datetimes(timezones=st.just(timezone.utc)),
    # a few moments repeated, as a log's requests repeat their second
    st.integers(0, 5).map(lambda second: datetime(2026, 11, 2, 9, 0, second, tzinfo=timezone.utc)),
)
# Arrow's strings are UTF-8, which holds no lone surrogate.
_TEXT = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
    st.sampled_from(["", '"', "\\", "\x00\x1f\x7f", "caf\u00e9", "\u2028\u2029", "\U0001f916", "/private"]),
)
_INTS = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, -1, 2**53 + 1, 2**63 - 1, -(2**63)]))
_FLOATS = st.one_of(st.floats(allow_nan=False), st.sampled_from([0.1, 1e-7, 1e22, -0.0, 5.0, 1e16, 2.5e-324]))
# A `json` column holds an object's JSON text in Arrow, as `records.shaped` makes it.
_JSON_TEXT = st.dictionaries(
    _TEXT, st.one_of(st.none(), st.booleans(), _TEXT, st.integers(-(2**53), 2**53)), max_size=3
).map(json_text)
_PLAIN = {"string": _TEXT, "json": _JSON_TEXT, "int": _INTS, "float": _FLOATS, "bool": st.booleans(), "timestamp": _TIMES}

# The tables whose columns Arrow converts value by value: a timestamp, a struct or a list.
NESTED_OR_TIMED = tuple(
    name for name, columns in records.TABLES.items()
    if any(column.type in ("timestamp", "struct", "string_list") for column in columns)
)


def _value(column: Column) -> st.SearchStrategy:
    if column.type == "struct":
        value = st.fixed_dictionaries({field.name: _value(field) for field in column.fields})
    elif column.type == "string_list":
        value = st.lists(_TEXT, max_size=3)
    else:
        value = _PLAIN[column.type]
    return st.none() | value if column.nullable else value


def rows(columns: tuple[Column, ...], max_size: int = 12) -> st.SearchStrategy[list[dict]]:
    return st.lists(st.fixed_dictionaries({column.name: _value(column) for column in columns}), max_size=max_size)


@st.composite
def tables(draw, columns: tuple[Column, ...]) -> pa.Table:
    """A table of drawn rows, in one chunk or two, whole or a slice of it (whose arrays then start
    at an offset into their buffers)."""
    schema = arrow_schema(columns)
    drawn = draw(rows(columns))
    split = draw(st.integers(0, len(drawn)))
    table = pa.concat_tables([
        pa.Table.from_pylist(drawn[:split], schema=schema), pa.Table.from_pylist(drawn[split:], schema=schema)
    ])
    if draw(st.booleans()):
        table = table.combine_chunks()
    start = draw(st.integers(0, len(drawn)))
    return table.slice(start, draw(st.integers(0, len(drawn) - start)))
