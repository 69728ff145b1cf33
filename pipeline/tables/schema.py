"""Parquet and BigQuery schemas derived from the record columns of `matcher.records`."""
from __future__ import annotations

import pyarrow as pa

from matcher.records import Column

_ARROW = {
    "string": pa.string(),
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "string_list": pa.list_(pa.string()),
    "json": pa.string(),
}
_BIGQUERY = {
    "string": "STRING",
    "int": "INT64",
    "float": "FLOAT64",
    "bool": "BOOL",
    "timestamp": "TIMESTAMP",
    "string_list": "STRING",
    "struct": "RECORD",
    "json": "JSON",
}


def arrow_schema(columns: tuple[Column, ...]) -> pa.Schema:
    return pa.schema([_arrow_field(column) for column in columns])


def _arrow_field(column: Column) -> pa.Field:
    if column.type == "struct":
        kind = pa.struct([_arrow_field(child) for child in column.fields])
    else:
        kind = _ARROW[column.type]
    return pa.field(column.name, kind, nullable=column.nullable)


def bigquery_schema(columns: tuple[Column, ...]) -> dict:
    """A `{"fields": [...]}` table schema as `WriteToBigQuery` and `bq mk` take it."""
    return {"fields": [_bigquery_field(column) for column in columns]}


def _bigquery_field(column: Column) -> dict:
    if column.type == "string_list":
        mode = "REPEATED"
    else:
        mode = "NULLABLE" if column.nullable else "REQUIRED"
    field = {"name": column.name, "type": _BIGQUERY[column.type], "mode": mode, "description": column.description}
    if column.type == "struct":
        field["fields"] = [_bigquery_field(child) for child in column.fields]
    return field
