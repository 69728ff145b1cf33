"""Rows of an Arrow table as Python dicts, as `Table.to_pylist` gives them."""
from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

__all__ = ["python_rows"]


def python_rows(table: pa.Table, columns: Sequence[str] | None = None) -> list[dict]:
    """The rows of `table` (of `columns` only, when given) as dicts."""
    return (table if columns is None else table.select(list(columns))).to_pylist()
