"""An Arrow table of one record table's rows as JSON Lines, the bytes the JSON Lines sinks write
for the same rows (`pipeline.tables.json_rows.JsonRows`)."""
from __future__ import annotations

import pyarrow as pa

from matcher.records import Column
from pipeline.columnar.rows import python_rows
from pipeline.tables.json_rows import JsonRows

__all__ = ["json_lines"]


def json_lines(table: pa.Table, columns: tuple[Column, ...]) -> bytes:
    """`JsonRows(columns).lines(table.to_pylist())`: the rows as JSON Lines without the final
    newline."""
    return JsonRows(columns).lines(python_rows(table))
