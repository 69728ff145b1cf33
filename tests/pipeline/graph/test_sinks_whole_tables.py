"""Batch tables: the small ones written whole, one file per table; the growing ones in parts. An
empty table still has its file."""
from __future__ import annotations

import pytest

import json
from datetime import datetime, timezone

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.testing.test_pipeline import TestPipeline

from matcher import records
from matcher.records import (
    COUNTS_TABLE, INDEXING_FINDINGS_TABLE, REFERRALS_TABLE, ROBOTS_VERSIONS_TABLE, SERVED_TABLE, SUMMARY_TABLE,
)
from pipeline.graph.sinks import WriteWholeTables, write_table

VERSION = {
    "host": "example.com",
    "effective_from": datetime(2026, 11, 2, 3, 4, 5, tzinfo=timezone.utc),
    "status": "200",
    "kind": "ok",
    "sha256": "ab" * 32,
    "body": "User-agent: *\nDisallow: /private\n",
}


def _summary_row(crawler: str) -> dict:
    return {column.name: 0 for column in records.SUMMARY} | {
        "crawler": crawler, "identity": "verified", "client_kind": "crawler", "purpose": ["search-engine"],
    }


def _write(out, rows: dict, tables: tuple, documents=(), parquet=()) -> None:
    with TestPipeline() as pipeline:
        created = {name: pipeline | f"Rows{name}" >> beam.Create(values) for name, values in rows.items()}
        created | WriteWholeTables(str(out), tables, documents, parquet)


@pytest.mark.slow
def test_each_table_is_one_file_and_an_empty_one_is_there_with_no_rows(tmp_path):
    summary = [_summary_row(f"bot{n}") for n in range(5)]
    _write(
        tmp_path,
        {SUMMARY_TABLE: summary, INDEXING_FINDINGS_TABLE: [], COUNTS_TABLE: [{"lines": 7, "verdicts": 5}]},
        (SUMMARY_TABLE, INDEXING_FINDINGS_TABLE),
        documents=(COUNTS_TABLE,),
    )
    [summary_file] = (tmp_path / SUMMARY_TABLE).iterdir()
    assert summary_file.name == "part-00000-of-00001.jsonl"
    written = [json.loads(line) for line in summary_file.read_text("utf-8").splitlines()]
    assert sorted(written, key=lambda row: row["crawler"]) == [records.to_json_ready(r, records.SUMMARY) for r in summary]
    [findings_file] = (tmp_path / INDEXING_FINDINGS_TABLE).iterdir()
    assert findings_file.read_bytes() == b""
    assert json.loads((tmp_path / "counts.json").read_text("utf-8")) == {"lines": 7, "verdicts": 5}


@pytest.mark.slow
def test_a_parquet_table_in_parts_keeps_its_schema_with_or_without_rows(tmp_path):
    for name, rows in (("some", [VERSION]), ("none", [])):
        with TestPipeline() as pipeline:
            versions = pipeline | beam.Create(rows)
            write_table(versions, str(tmp_path / name), records.ROBOTS_VERSIONS, "parquet", ROBOTS_VERSIONS_TABLE)
    some = pq.read_table(tmp_path / "some")
    none = pq.read_table(tmp_path / "none")
    assert some.num_rows == 1 and some.column("sha256").to_pylist() == [VERSION["sha256"]]
    assert none.num_rows == 0 and none.schema == some.schema


@pytest.mark.slow
def test_a_whole_table_in_parquet_is_one_parquet_file_and_an_empty_one_keeps_the_schema(tmp_path):
    served = [
        {"host": "example.com", "crawler": f"bot{n}", "identity": "verified", "decision": "allowed",
         "status_class": "2xx", "requests": n + 1, "bytes": None if n == 0 else 100 * n}
        for n in range(3)
    ]
    _write(
        tmp_path, {SERVED_TABLE: served, REFERRALS_TABLE: [], SUMMARY_TABLE: [_summary_row("bot0")]},
        (SERVED_TABLE, REFERRALS_TABLE, SUMMARY_TABLE), parquet=(SERVED_TABLE, REFERRALS_TABLE),
    )
    [served_file] = (tmp_path / SERVED_TABLE).iterdir()
    assert served_file.name == "part-00000-of-00001.parquet"
    assert sorted(pq.read_table(served_file).to_pylist(), key=lambda row: row["crawler"]) == served
    empty = pq.read_table(tmp_path / REFERRALS_TABLE / "part-00000-of-00001.parquet")
    assert empty.num_rows == 0 and empty.schema.names == [column.name for column in records.REFERRALS]
    [summary_file] = (tmp_path / SUMMARY_TABLE).iterdir()
    assert summary_file.name == "part-00000-of-00001.jsonl"
