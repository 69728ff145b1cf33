"""Reading back the tables a complete run wrote, JSON Lines or Parquet alike: row by row as
dicts, or slice by slice as Arrow tables for aggregating millions of rows. Only the files the
run's manifest lists are read, never whatever else the folder holds."""
from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from matcher.records import TABLES, Column, row_problem
from matcher.timerange import parse_timestamp
from pipeline.tables.files import RunFolderError, open_member
from pipeline.tables.run_folder import read_manifest
from pipeline.tables.schema import arrow_schema

# Tables are read a slice at a time so that a run's verdicts never have to fit in memory.
_BATCH_ROWS = 65_536
_CHUNK_BYTES = 16 << 20
# A row holds one log line's fields and one robots.txt body (500 KiB parsed) at most: far below this.
MAX_ROW_BYTES = 64 << 20


def rows(out: str | Path, table: str) -> Iterator[dict]:
    """Every row of `table` of the complete run in `out`, one at a time, each checked against the
    table's schema (`matcher.records`); RunFolderError names the file and row that is not."""
    columns = TABLES[table]
    names = [column.name for column in columns]
    for name in _parts(out, table, ".jsonl"):
        path = Path(out, name)
        with open_member(out, name) as handle:
            # Only "\n" ends a row: JSON strings may hold U+2028 and other breaks.
            for number, line in enumerate(iter(lambda: handle.readline(MAX_ROW_BYTES + 1), b""), 1):
                if len(line) > MAX_ROW_BYTES:
                    raise RunFolderError(f"{path}: row {number} is longer than {MAX_ROW_BYTES:,} bytes")
                if line.strip():
                    try:
                        row = json.loads(line)
                    except ValueError as error:
                        raise RunFolderError(f"{path}: row {number} is not JSON: {error}") from None
                    yield _checked(row, columns, names, path, number)
    for name in _parts(out, table, ".parquet"):
        path = Path(out, name)
        with _parquet(out, name, table, columns) as parquet:
            number = 0
            for batch in parquet.iter_batches(_BATCH_ROWS, columns=names):
                for row in batch.to_pylist():
                    number += 1
                    yield _checked(row, columns, names, path, number)


def _checked(row: object, columns: tuple[Column, ...], names: list[str], path: Path, number: int) -> dict:
    problem = row_problem(row, columns)
    if problem is not None:
        raise RunFolderError(f"{path}: row {number}: {problem}")
    return {name: row.get(name) for name in names}


@contextmanager
def _parquet(out: str | Path, name: str, table: str, columns: Sequence[Column]) -> Iterator[pq.ParquetFile]:
    """The Parquet file `name` of `table`, refused unless it has these columns with their types."""
    path = Path(out, name)
    with open_member(out, name) as handle:
        try:
            parquet = pq.ParquetFile(handle)
        except (pa.ArrowException, OSError, ValueError) as error:
            raise RunFolderError(f"{path} is not a Parquet file: {error}") from None
        found = parquet.schema_arrow
        for field in arrow_schema(_nullable(tuple(columns))):
            index = found.get_field_index(field.name)
            if index < 0 or not _same_type(found.field(index).type, field.type):
                have = "none" if index < 0 else str(found.field(index).type)
                raise RunFolderError(
                    f"{path} is not a {table} table: column {field.name} should be {field.type}, it has {have}"
                )
        try:
            yield parquet
        except (pa.ArrowException, OSError) as error:
            raise RunFolderError(f"{path}: unreadable Parquet: {error}") from None


def _same_type(found: pa.DataType, wanted: pa.DataType) -> bool:
    """The same type, whatever its fields' nullability (the writer holds some fields required)."""
    if pa.types.is_struct(found) and pa.types.is_struct(wanted):
        return [f.name for f in found] == [f.name for f in wanted] and all(
            _same_type(a.type, b.type) for a, b in zip(found, wanted)
        )
    if pa.types.is_list(found) and pa.types.is_list(wanted):
        return _same_type(found.value_type, wanted.value_type)
    return found.equals(wanted)


def slices(out: str | Path, table: str, columns: Sequence[Column]) -> Iterator[pa.Table]:
    """`table` of the complete run in `out` as Arrow tables of these columns (typed by the
    record schema), a slice at a time; RunFolderError names a file whose rows do not fit them."""
    schema = arrow_schema(_nullable(tuple(columns)))
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    required = [column.name for column in columns if not column.nullable]
    for name in _parts(out, table, ".jsonl"):
        with open_member(out, name) as handle:
            while chunk := handle.read(_CHUNK_BYTES):
                chunk += handle.readline(MAX_ROW_BYTES)  # up to the end of the row the chunk cut
                try:
                    read = pa_json.read_json(io.BytesIO(chunk), parse_options=options).select(schema.names)
                except (pa.ArrowException, ValueError) as error:
                    raise RunFolderError(f"{Path(out, name)}: rows that are not {table} rows: {error}") from None
                yield _complete(read, required, Path(out, name))
    for name in _parts(out, table, ".parquet"):
        with _parquet(out, name, table, columns) as parquet:
            for batch in parquet.iter_batches(_BATCH_ROWS, columns=schema.names):
                yield _complete(pa.Table.from_batches([batch]), required, Path(out, name))


def _complete(table: pa.Table, required: Sequence[str], path: Path) -> pa.Table:
    for name in required:
        if table[name].null_count:
            row = pc.index(pc.is_null(table[name]), True).as_py() + 1
            raise RunFolderError(f"{path}: a row of this slice ({row}) has no {name}")
    return table


def _nullable(columns: Sequence[Column]) -> tuple[Column, ...]:
    """The columns with every field nullable: a null struct in JSON Lines has null fields, which a
    reader held to the writer's required fields would refuse."""
    return tuple(replace(c, nullable=True, fields=_nullable(c.fields)) for c in columns)


def _parts(out: str | Path, table: str, suffix: str) -> list[str]:
    listed = read_manifest(out)["tables"].get(table, {"files": []})["files"]
    return [name for name in sorted(listed) if name.endswith(suffix)]


def moment(value: datetime | str | None) -> datetime | None:
    """A timestamp column's value as a datetime: Parquet gives one, JSON Lines its RFC 3339 text."""
    if value is None or isinstance(value, datetime):
        return value
    return parse_timestamp(value)
