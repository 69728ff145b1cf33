"""Rows of an Arrow table made column by column are the rows `Table.to_pylist` makes: the same
keys in the same order, the same values of the same types, on drawn tables of every record table
with timestamps, structs or lists, and on the verdicts of the bundled sample."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drawn_records import NESTED_OR_TIMED, tables
from matcher import records
from pipeline.columnar.rows import python_rows
from pipeline.tables.schema import arrow_schema


def _first_difference(got: list[dict], expected: list[dict]) -> tuple | None:
    """The first row whose spelling differs (repr tells 1 from 1.0 and True, and names each
    datetime's time zone), as (position, got, expected); a short message where a diff of whole
    tables would take minutes."""
    if len(got) != len(expected):
        return len(got), len(expected)
    return next(((at, g, e) for at, (g, e) in enumerate(zip(got, expected)) if repr(g) != repr(e)), None)


@pytest.mark.parametrize("name", NESTED_OR_TIMED)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_drawn_tables_give_the_rows_arrow_gives(name, data):
    table = data.draw(tables(records.TABLES[name]))
    assert _first_difference(python_rows(table), table.to_pylist()) is None


@settings(max_examples=60, deadline=None)
@given(table=tables(records.VERDICTS), data=st.data())
def test_chosen_columns_come_in_the_order_asked(table, data):
    chosen = data.draw(st.permutations(table.column_names).flatmap(lambda names: st.just(names[:len(names) // 3])))
    assert _first_difference(python_rows(table, chosen), table.select(chosen).to_pylist()) is None


def test_a_table_without_rows_gives_none():
    assert python_rows(arrow_schema(records.VERDICTS).empty_table()) == []


def test_the_sample_verdicts_give_the_rows_arrow_gives(sample_verdicts):
    assert sample_verdicts.num_rows > 4000
    assert sample_verdicts["robots_fetch"].null_count < sample_verdicts.num_rows
    assert _first_difference(python_rows(sample_verdicts), sample_verdicts.to_pylist()) is None
