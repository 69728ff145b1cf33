"""An Arrow table of one record table's rows as JSON Lines, the bytes the JSON Lines sinks write
for the same records (`pipeline.tables.json_rows.JsonRows`)."""
from __future__ import annotations

import pyarrow as pa

from matcher.records import Column
from pipeline.columnar.rows import records_of
from pipeline.tables.json_rows import JsonRows

__all__ = ["json_lines"]


def json_lines(table: pa.Table, columns: tuple[Column, ...]) -> bytes:
    """`JsonRows(columns).lines` of the table's records (`records_of`): the rows as JSON Lines
    without the final newline."""
    return JsonRows(columns).lines(records_of(table, columns))
