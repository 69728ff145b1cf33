"""An Arrow table's rows as Python dicts, exactly as `Table.to_pylist` gives them, built column by
column.

Arrow makes each value of a nested or timestamp column a Python object one by one, which costs a
verdict row several times what its plain columns cost. Here a timestamp column makes one datetime
per distinct moment, a struct column builds its fields' values column by column and zips them
into dicts for its rows that are not null, and every other column (strings, numbers, lists of
strings) keeps Arrow's own conversion, already fast.
"""
from __future__ import annotations

import gc
import json
from collections.abc import Sequence
from datetime import timedelta
from itertools import repeat

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from matcher.records import Column

__all__ = ["python_rows", "python_values", "records_of"]


def python_rows(table: pa.Table, columns: Sequence[str] | None = None) -> list[dict]:
    """`table.select(columns).to_pylist()` (every column for None): same keys in the same order,
    same values of the same types."""
    if columns is not None:
        table = table.select(list(columns))
    names = table.column_names
    if not names:
        return table.to_pylist()
    # The rows hold no cycles; the collector, run again and again over them as they are made,
    # would find none.
    collecting = gc.isenabled()
    gc.disable()
    try:
        values = [python_values(column) for column in table.columns]
        return list(map(dict, map(zip, repeat(names), zip(*values))))
    finally:
        if collecting:
            gc.enable()


def records_of(table: pa.Table, columns: tuple[Column, ...], names: Sequence[str] | None = None) -> list[dict]:
    """The rows (of `names` only, when given) as the records of the table of `columns` hold them:
    `python_rows`, with the JSON text an Arrow table carries for a `json` column read back into
    its object."""
    rows = python_rows(table, names)
    texts = {column.name for column in columns if column.type == "json"}
    for name in texts.intersection(table.column_names if names is None else names):
        for row in rows:
            if row[name] is not None:
                row[name] = json.loads(row[name])
    return rows


def python_values(array: pa.Array | pa.ChunkedArray) -> list:
    """`array.to_pylist()`, column-wise where Arrow's own goes value by value."""
    if isinstance(array, pa.ChunkedArray):
        if array.num_chunks == 1:
            return python_values(array.chunk(0))
        return [value for chunk in array.chunks for value in python_values(chunk)]
    kind = array.type
    if len(array) == 0 or array.null_count == len(array):
        return array.to_pylist()
    if pa.types.is_timestamp(kind) and kind.unit == "us" and kind.tz == "UTC":
        return _moments(array)
    if pa.types.is_struct(kind) and kind.num_fields:
        return _dicts(array)
    return array.to_pylist()


def _moments(array: pa.Array) -> list:
    micros = pc.fill_null(array.cast(pa.int64()), 0).to_numpy()
    distinct, where = np.unique(micros, return_inverse=True)
    # Arrow's own epoch, so that each datetime carries the very time zone `to_pylist` gives it.
    epoch = pa.scalar(0, type=array.type).as_py()
    moments = np.empty(len(distinct) + 1, dtype=object)
    moments[:-1] = [epoch + timedelta(microseconds=value) for value in distinct.tolist()]
    moments[-1] = None
    if array.null_count:
        where = np.where(array.is_null().to_numpy(zero_copy_only=False), len(distinct), where)
    return moments[where].tolist()


def _dicts(array: pa.StructArray) -> list:
    if array.null_count:
        return _valid_only(array, _dicts)
    kind = array.type
    names = [kind.field(index).name for index in range(kind.num_fields)]
    # `field` is the child as the (maybe sliced) parent sees it.
    fields = [python_values(array.field(index)) for index in range(kind.num_fields)]
    return list(map(dict, map(zip, repeat(names), zip(*fields))))


def _valid_only(array: pa.Array, convert) -> list:
    """`convert` of the rows that are not null, null in between: nothing is built for a null row."""
    valid = array.is_valid()
    positions = np.flatnonzero(valid.to_numpy(zero_copy_only=False)).tolist()
    values = [None] * len(array)
    for position, value in zip(positions, convert(array.filter(valid))):
        values[position] = value
    return values

