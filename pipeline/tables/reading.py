"""Reading back the tables a complete run wrote, JSON Lines or Parquet alike: row by row as
dicts, or slice by slice as Arrow tables for aggregating millions of rows. Only the files the
run's manifest lists are read, never whatever else the folder holds."""
from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from matcher.records import Column
from matcher.timerange import parse_timestamp
from pipeline.tables.schema import arrow_schema
from pipeline.tables.run_folder import read_manifest

# Tables are read a slice at a time so that a run's verdicts never have to fit in memory.
_BATCH_ROWS = 65_536
_CHUNK_BYTES = 16 << 20


def rows(out: str | Path, table: str) -> Iterator[dict]:
    """Every row of `table` of the complete run in `out`, one at a time."""
    for path in _parts(out, table, ".jsonl"):
        with path.open("rb") as handle:
            # Only "\n" ends a row: JSON strings may hold U+2028 and other breaks.
            for line in io.TextIOWrapper(handle, encoding="utf-8", newline="\n"):
                if line.strip():
                    yield json.loads(line)
    for path in _parts(out, table, ".parquet"):
        with path.open("rb") as handle:
            for batch in pq.ParquetFile(handle).iter_batches(_BATCH_ROWS):
                yield from batch.to_pylist()


def slices(out: str | Path, table: str, columns: Sequence[Column]) -> Iterator[pa.Table]:
    """`table` of the complete run in `out` as Arrow tables of these columns (typed by the
    record schema), a slice at a time."""
    schema = arrow_schema(_nullable(columns))
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    for path in _parts(out, table, ".jsonl"):
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK_BYTES):
                chunk += handle.readline()  # up to the end of the row the chunk cut
                yield pa_json.read_json(io.BytesIO(chunk), parse_options=options).select(schema.names)
    for path in _parts(out, table, ".parquet"):
        with path.open("rb") as handle:
            for batch in pq.ParquetFile(handle).iter_batches(_BATCH_ROWS, columns=schema.names):
                yield pa.Table.from_batches([batch])


def _nullable(columns: Sequence[Column]) -> tuple[Column, ...]:
    """The columns with every field nullable: a null struct in JSON Lines has null fields, which a
    reader held to the writer's required fields would refuse."""
    return tuple(replace(c, nullable=True, fields=_nullable(c.fields)) for c in columns)


def _parts(out: str | Path, table: str, suffix: str) -> list[Path]:
    listed = read_manifest(out)["tables"].get(table, {"files": []})["files"]
    return [Path(out, name) for name in sorted(listed) if name.endswith(suffix)]


def moment(value: datetime | str | None) -> datetime | None:
    """A timestamp column's value as a datetime: Parquet gives one, JSON Lines its RFC 3339 text."""
    if value is None or isinstance(value, datetime):
        return value
    return parse_timestamp(value)
