"""Every sink of the audit: a finished table (batch), one file per bundle, a BigQuery table.

Each writes records shaped by their table's columns (`matcher.records`), so JSON Lines, Parquet
and BigQuery rows of one table always agree.
"""
from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterable
from datetime import datetime

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils.timestamp import Timestamp

from matcher import records
from matcher.records import Column
from matcher.timerange import micros
from pipeline.columnar.json_lines import json_lines
from pipeline.tables.json_rows import JsonRows
from pipeline.tables.schema import arrow_schema, bigquery_schema

STORAGE_WRITE_API = "STORAGE_WRITE_API"
BIGQUERY_METHODS = (STORAGE_WRITE_API, "STREAMING_INSERTS", "FILE_LOADS")


def write_table(pcoll, folder: str, columns, output_format: str, label: str) -> None:
    """A batch run's table: part files under `folder`, JSON Lines or Parquet; `label` names the steps."""
    title = _title(label)
    prefix = FileSystems.join(folder, "part")
    if output_format == "parquet":
        (
            pcoll
            | f"Shape{title}" >> beam.Map(records.shaped, columns)
            | f"Write{title}" >> beam.io.WriteToParquet(
                prefix, arrow_schema(columns), codec="snappy", file_name_suffix=".parquet"
            )
        )
    else:
        (
            pcoll
            | f"Encode{title}" >> beam.Map(JsonRows(columns).line)
            | f"Write{title}" >> beam.io.WriteToText(prefix, ".jsonl")
        )


def write_table_blocks(blocks, folder: str, columns, output_format: str, label: str) -> None:
    """`write_table` for a collection of Arrow tables of the table's schema, none of them empty:
    each is written as one element (as it is to Parquet, or as one block of JSON Lines)."""
    title = _title(label)
    prefix = FileSystems.join(folder, "part")
    if output_format == "parquet":
        blocks | f"Write{title}" >> beam.io.WriteToParquetBatched(
            prefix, arrow_schema(columns), codec="snappy", file_name_suffix=".parquet"
        )
    else:
        (
            blocks
            | f"Encode{title}" >> beam.Map(json_lines, columns)
            | f"Write{title}" >> beam.io.WriteToText(prefix, ".jsonl")
        )


def arrow_table(rows: list[dict], columns: tuple[Column, ...], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist(list(map(records.shaper(columns), rows)), schema=schema)


class WriteWholeTables(beam.PTransform):
    """{table: rows} -> each table written whole, as one file: `part-00000-of-00001.jsonl` in the
    table's folder under `out` (`.parquet` for the tables of `parquet`), or, for a document (one
    JSON object per run), the file `NAME.json`. For the tables that stay a few rows whatever the
    log holds (a row per crawler, per finding).

    Beam's file sinks take four steps of their own per table (initialise, write, pre-finalise,
    finalise), and a local runner runs each step on every worker, which across the small tables
    was a measurable part of a run (bench/README.md). One grouping keyed by table serves them all
    here. Rows are encoded before the grouping, which then moves bytes; but a grouping holds a
    table whole in the runner's memory and then in one worker's, so a table that grows with the
    log does not belong here. An empty table gets its file with no rows, as the file sinks give
    it; a retried write writes the same file again. A Parquet table's rows travel as records and
    are encoded together by the writer, a Parquet file being one encoding of all its rows."""

    def __init__(self, out: str, tables: Iterable[str], documents: Iterable[str] = (), parquet: Iterable[str] = ()):
        super().__init__()
        self._tables = tuple(tables)
        self._documents = tuple(documents)
        self._parquet = frozenset(parquet)
        self._write = WriteTableFn(out, self._documents, self._parquet)

    def expand(self, rows_by_table):
        names = (*self._tables, *self._documents)
        keyed = [
            rows_by_table[name] | f"Encode{_title(name)}" >> beam.Map(_keyed, name, self._payload(name))
            for name in names
        ]
        # One marker per table, so that a table without rows still reaches the writer.
        markers = keyed[0].pipeline | "EveryTable" >> beam.Create([(name, None) for name in names])
        return (
            (*keyed, markers)
            | "AllSmallTables" >> beam.Flatten()
            | "GroupByTable" >> beam.GroupByKey()
            | "WriteTableFiles" >> beam.ParDo(self._write)
        )

    def _payload(self, name: str) -> Callable[[object], object]:
        if name in self._documents:
            return _json_document
        if name in self._parquet:
            return _as_is
        return JsonRows(records.TABLES[name]).line


def _keyed(row, name: str, payload: Callable[[object], object]) -> tuple[str, object]:
    return name, payload(row)


def _as_is(row: dict) -> dict:
    return row


def _json_document(document: dict) -> bytes:
    return json.dumps(document, sort_keys=True).encode("utf-8")


class WriteTableFn(beam.DoFn):
    """(table, its encoded rows, or its records for a Parquet table) -> the table's one file."""

    def __init__(self, out: str, documents: Iterable[str], parquet: Iterable[str] = ()):
        self._out = out
        self._documents = frozenset(documents)
        self._parquet = frozenset(parquet)
        self.files = Metrics.counter(self.__class__, "files")

    def process(self, element):
        name, payloads = element
        payloads = [payload for payload in payloads if payload is not None]
        if name in self._documents:
            path = FileSystems.join(self._out, f"{name}.json")
            content = b"".join(document + b"\n" for document in payloads)
        elif name in self._parquet:
            path = FileSystems.join(self._out, name, "part-00000-of-00001.parquet")
            content = _encode(payloads, records.TABLES[name], "parquet")
        else:
            path = FileSystems.join(self._out, name, "part-00000-of-00001.jsonl")
            content = b"".join(line + b"\n" for line in payloads)
        with FileSystems.create(path) as handle:
            handle.write(content)
        self.files.inc()


def _title(label: str) -> str:
    return label.title().replace("_", "")


class WriteBundleFiles(beam.PTransform):
    """Records -> one file per bundle in `folder`, JSON Lines or Parquet, visible as soon as the
    bundle is done. A file is named by the hash of its content, so a bundle the runner retries
    with the same records writes the same file again rather than a second copy."""

    def __init__(self, folder: str, columns: tuple[Column, ...], output_format: str):
        super().__init__()
        self._write = WriteBundleFn(folder, columns, output_format)

    def expand(self, pcoll):
        return pcoll | "WriteBundles" >> beam.ParDo(self._write)


class WriteBundleFn(beam.DoFn):
    def __init__(self, folder: str, columns: tuple[Column, ...], output_format: str):
        self._folder = folder
        self._columns = columns
        self._format = output_format
        self.files = Metrics.counter(self.__class__, "files")

    def start_bundle(self):
        self._rows: list[dict] = []

    def process(self, record):
        self._rows.append(record)

    def finish_bundle(self):
        if self._rows:
            write_records_file(self._folder, self._rows, self._columns, self._format)
            self.files.inc()
        self._rows = []


def write_records_file(folder: str, rows: list[dict], columns: tuple[Column, ...], output_format: str) -> str:
    """Write records as one file named by its content hash; returns the path."""
    content = _encode(rows, columns, output_format)
    path = FileSystems.join(folder, f"part-{hashlib.sha256(content).hexdigest()[:32]}.{output_format}")
    temporary = FileSystems.join(folder, f".{hashlib.sha256(path.encode()).hexdigest()[:16]}.tmp")
    with FileSystems.create(temporary) as handle:
        handle.write(content)
    FileSystems.rename([temporary], [path])
    return path


def _encode(rows: list[dict], columns: tuple[Column, ...], output_format: str) -> bytes:
    if output_format == "parquet":
        return _parquet(arrow_table(rows, columns, arrow_schema(columns)))
    return JsonRows(columns).lines(rows) + b"\n"


def _parquet(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="snappy")
    return buffer.getvalue()


class WriteBigQueryTable(beam.PTransform):
    """Records -> a BigQuery table whose schema is derived from the record columns.

    STORAGE_WRITE_API is what to use in production; it is Java (cross-language), so building the
    graph needs Java and its expansion jar. STREAMING_INSERTS and FILE_LOADS build offline.
    """

    def __init__(self, table: str, columns: tuple[Column, ...], method: str):
        super().__init__()
        if method not in BIGQUERY_METHODS:
            raise ValueError(f"BigQuery method must be one of {', '.join(BIGQUERY_METHODS)}, not {method!r}")
        self._table = table
        self._columns = columns
        self._method = method

    def expand(self, pcoll):
        return (
            pcoll
            | "BigQueryRows" >> beam.Map(bigquery_row, self._columns, self._method == STORAGE_WRITE_API)
            | "WriteToBigQuery" >> beam.io.WriteToBigQuery(
                self._table,
                schema=bigquery_schema(self._columns),
                method=self._method,
                create_disposition=beam.io.BigQueryDisposition.CREATE_IF_NEEDED,
                write_disposition=beam.io.BigQueryDisposition.WRITE_APPEND,
            )
        )


def bigquery_row(record: dict, columns: tuple[Column, ...], beam_timestamps: bool) -> dict:
    """A record as BigQuery takes it: timestamps as RFC 3339 text for JSON inserts, as Beam
    Timestamps for the Storage Write API; a null list as [] (a REPEATED field is never null)."""
    return {column.name: _bigquery_value(record.get(column.name), column, beam_timestamps) for column in columns}


def _bigquery_value(value, column: Column, beam_timestamps: bool):
    if column.type == "string_list":
        return list(value or ())
    if value is None:
        return None
    if column.type == "timestamp":
        return beam_timestamp(value) if beam_timestamps else records.rfc3339(value)
    if column.type == "struct":
        return bigquery_row(value, column.fields, beam_timestamps)
    if column.type == "json":
        return json.dumps(value, sort_keys=True)
    return value


def beam_timestamp(moment: datetime) -> Timestamp:
    """A record's aware datetime as a Beam Timestamp, to the microsecond."""
    return Timestamp(micros=micros(moment))
