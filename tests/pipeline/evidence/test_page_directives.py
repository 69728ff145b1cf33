"""The page-directives table read from JSON Lines, plain or compressed
(`pipeline.evidence.page_directives`): rows, the file and row of a malformed one, and the lint of
directives it cannot use, reported on stderr."""
from __future__ import annotations

import bz2
import gzip
import json
from datetime import datetime, timedelta, timezone

import pytest

from matcher.directives import PageDirectivesError, PageDirectivesTable, effective_indexing
from pipeline.evidence.page_directives import read_page_directives

HOST = "example.com"
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _rows() -> list[dict]:
    return [
        {"host": HOST, "path": "/report.pdf", "effective_from": "2026-11-01T00:00:00Z",
         "x_robots_tag": ["noindex"], "meta_robots": []},
        {"host": HOST, "path": "/report.pdf", "effective_from": "2026-11-05T00:00:00Z"},
    ]


def test_reader_reads_json_lines(tmp_path):
    table = tmp_path / "pages.jsonl"
    table.write_text("\n".join(json.dumps(row) for row in _rows()) + "\n\n", encoding="utf-8")
    rows = read_page_directives(str(table))
    assert [row.effective_from for row in rows] == [T0, T0 + timedelta(days=4)]
    lookup = PageDirectivesTable(rows)
    assert effective_indexing((), lookup.lookup(HOST, "/report.pdf", T0 + timedelta(days=1)), ()) == {"noindex": True}
    assert effective_indexing((), lookup.lookup(HOST, "/report.pdf", T0 + timedelta(days=5)), ()) == {}


@pytest.mark.parametrize(("suffix", "opener"), [(".jsonl.gz", gzip.open), (".jsonl.bz2", bz2.open)])
def test_reader_reads_compressed_tables(tmp_path, suffix, opener):
    table = tmp_path / f"pages{suffix}"
    with opener(table, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(json.dumps(row) for row in _rows()))
    assert len(read_page_directives(str(table))) == 2


def test_reader_keeps_line_separators_inside_strings(tmp_path):
    row = {**_rows()[0], "x_robots_tag": ["noindex\u2028"]}
    table = tmp_path / "pages.jsonl"
    table.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    assert read_page_directives(str(table))[0].x_robots_tag == ("noindex\u2028",)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "pages.jsonl:2:"),
        ("[1, 2]", "pages.jsonl:2: a row must be a JSON object"),
        (json.dumps({"host": HOST, "path": "/", "effective_from": "soon"}), "pages.jsonl:2: effective_from"),
    ],
)
def test_reader_names_file_and_row_of_a_malformed_table(tmp_path, line, message):
    table = tmp_path / "pages.jsonl"
    table.write_text(json.dumps(_rows()[0]) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(PageDirectivesError, match=message):
        read_page_directives(str(table))


def test_reader_reports_unusable_directives_with_file_and_row(tmp_path, capsys):
    rows = [_rows()[0], {**_rows()[1], "x_robots_tag": ["noindex, nosnipet"],
                         "meta_robots": [{"name": "robots", "content": "unavailable_after: soon"}]}]
    table = tmp_path / "pages.jsonl"
    table.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    read = read_page_directives(str(table))
    assert read[1].directives.effective(()) == {"noindex": True}
    assert capsys.readouterr().err.splitlines() == [
        f"crawl-audit: page directives: {table}:2: X-Robots-Tag 'nosnipet': unknown directive 'nosnipet'",
        f"crawl-audit: page directives: {table}:2: <meta name=\"robots\"> 'unavailable_after: soon':"
        " unavailable_after: not a date and time in a known format: 'soon'",
    ]


def test_reader_is_silent_about_a_clean_table(tmp_path, capsys):
    table = tmp_path / "pages.jsonl"
    table.write_text("\n".join(json.dumps(row) for row in _rows()) + "\n", encoding="utf-8")
    read_page_directives(str(table))
    assert capsys.readouterr().err == ""


def test_reader_reports_a_missing_file(tmp_path):
    with pytest.raises(PageDirectivesError, match="cannot read page-directives table"):
        read_page_directives(str(tmp_path / "absent.jsonl"))
