"""A run folder edited, damaged or planted with links after the run: `report` and `whatif` follow no
link in it, read nothing but regular files, check what they read against the schema, write every
file whole, and say what is wrong in one line (exit 2), never with a traceback."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import BINGBOT, REPO, log_line, run_audit, write_jsonl
from pipeline.cli.main import main

LINES = [log_line("example.com", f"02/Nov/2026:10:00:0{n} +0000", f"/p{n}", BINGBOT, size=5) for n in range(4)]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> dict[str, Path]:
    """One finished run per table format, to be copied by each test."""
    site = tmp_path_factory.mktemp("site")
    (site / "access.log").write_text("\n".join(LINES) + "\n")
    write_jsonl(site / "robots.jsonl", [{"host": "example.com", "effective_from": "2026-11-01T00:00:00Z",
                                         "status": 200, "body": "User-agent: *\nDisallow: /p3\n"}])
    runs = {}
    for output_format in ("jsonl", "parquet"):
        out = site / output_format
        assert run_audit([
            f"--logs={site / 'access.log'}", "--log-format=host_combined", f"--robots={site / 'robots.jsonl'}",
            f"--out={out}", "--runner=FnApiRunner", f"--format={output_format}",
        ]) == 0
        runs[output_format] = out
    return runs


@pytest.fixture
def out(finished, tmp_path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(finished["jsonl"], copy)
    return copy


@pytest.fixture
def parquet_out(finished, tmp_path) -> Path:
    copy = tmp_path / "out-parquet"
    shutil.copytree(finished["parquet"], copy)
    return copy


def _part(out: Path, table: str) -> Path:
    (part,) = sorted(name for name in (out / table).iterdir() if not name.name.startswith("."))
    return part


def _refused(capsys, argv: list[str], *said: str) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("crawl-audit: "), captured.err
    for words in said:
        assert words in captured.err, captured.err
    return captured.err


def _proposal(tmp_path: Path) -> Path:
    proposal = tmp_path / "proposed.txt"
    proposal.write_text("User-agent: *\nDisallow: /p1\n")
    return proposal


@pytest.mark.slow
def test_report_replaces_a_planted_report_html_link_and_leaves_its_target_alone(out, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "report.html").unlink()
    (out / "report.html").symlink_to(victim)
    assert main(["report", str(out)]) == 0
    assert victim.read_text() == "precious"
    assert not (out / "report.html").is_symlink() and "<html" in (out / "report.html").read_text()
    assert not [name for name in os.listdir(out) if name.startswith(".")]  # no temporary file left


def test_whatif_refuses_a_whatif_folder_that_is_a_link(out, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "whatif").symlink_to(elsewhere)
    argv = ["whatif", str(out), "--host", "example.com", "--proposed", str(_proposal(tmp_path))]
    _refused(capsys, argv, f"{out / 'whatif'} is a symbolic link")
    assert list(elsewhere.iterdir()) == []
    (out / "whatif").unlink()
    assert main(argv) == 0
    assert sorted(p.name for p in (out / "whatif").iterdir()) == ["flips.jsonl", "proposed.txt", "summary.json"]


@pytest.mark.parametrize("planted", ["a file elsewhere", "/dev/zero", "a folder elsewhere"])
def test_report_follows_no_link_to_a_table(out, tmp_path, capsys, planted):
    part = _part(out, "summary")
    if planted == "a folder elsewhere":
        shutil.move(out / "summary", tmp_path / "summary")
        (out / "summary").symlink_to(tmp_path / "summary")
        shown = out / "summary"
    else:
        target = Path(planted) if planted.startswith("/") else shutil.copy(part, tmp_path / "copy.jsonl")
        part.unlink()
        part.symlink_to(target)
        shown = part
    _refused(capsys, ["report", str(out)], f"{shown} is a symbolic link")


@pytest.mark.slow
def test_report_refuses_a_fifo_table_without_waiting_for_a_writer(out):
    part = _part(out, "robots_versions")
    part.unlink()
    os.mkfifo(part)
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from pipeline.cli.main import main; sys.exit(main(sys.argv[1:]))",
         "report", str(out)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert done.returncode == 2
    assert done.stderr == f"crawl-audit: {part} is a FIFO, not a regular file\n"


def test_a_manifest_that_is_a_fifo_is_refused(out, capsys):
    (out / "manifest.json").unlink()
    os.mkfifo(out / "manifest.json")
    _refused(capsys, ["report", str(out)], "manifest.json is a FIFO, not a regular file")


@pytest.mark.parametrize(
    ("table", "row", "said"),
    [
        ("summary", {}, "row 1: identity is missing or null"),
        ("summary", {"crawler": "x", "identity": "verified", "client_kind": "crawler", "purpose": ["unknown"], "requests": "many", "allowed": 1, "disallowed": 0,
                     "within_grace": 0, "between_captures": 0, "unknown": 0}, "row 1: requests must be an integer"),
        ("robots_versions", {}, "row 1: host is missing or null"),
        ("robots_versions", {"host": "example.com", "effective_from": "yesterday", "status": "200", "kind": "ok"},
         "row 1: effective_from must be an RFC 3339 time"),
        ("crawl_delay_windows", [], "row 1: a row must be an object, got a list"),
    ],
)
def test_a_damaged_table_row_names_the_file_and_row(out, capsys, table, row, said):
    part = _part(out, table)
    part.write_text(json.dumps(row) + "\n")
    _refused(capsys, ["report", str(out)], f"{part}: {said}")


def test_a_row_that_is_not_json_names_the_file(out, capsys):
    part = _part(out, "indexing_findings")
    part.write_text('{"finding": \n')
    _refused(capsys, ["report", str(out)], f"{part}: row 1 is not JSON")


@pytest.mark.parametrize(
    ("counts", "said"),
    [
        ([], "counts must map names to counts of lines, got []"),
        ({"lines": "5"}, "counts must map names"),
        ({"lines": {"a": 1}}, "counts must map names"),
        ({"lines": 5, "not_request_reasons": {"no-request": -1}}, "counts must map names"),
    ],
)
def test_a_manifest_with_damaged_counts_is_refused(out, capsys, counts, said):
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "counts": counts}))
    _refused(capsys, ["report", str(out)], f"{out / 'manifest.json'}: {said}")


@pytest.mark.parametrize(
    "document",
    [{"hosts": [["example.com", "four"]]}, {"timeline": [["bingbot", 5]]}, {"disallowed": [[]]}, []],
)
def test_damaged_report_counts_are_refused(out, capsys, document):
    real = json.loads((out / "report_counts.json").read_text())
    damaged = document if isinstance(document, list) else {**real, **document}
    (out / "report_counts.json").write_text(json.dumps(damaged))
    _refused(capsys, ["report", str(out)], f"{out / 'report_counts.json'}: unreadable report counts")


def test_a_parquet_table_swapped_for_another_tables_file_is_refused(parquet_out, capsys):
    windows = _part(parquet_out, "crawl_delay_windows")
    shutil.copy(_part(parquet_out, "verdicts"), windows)
    _refused(capsys, ["report", str(parquet_out)], f"{windows} is not a crawl_delay_windows table: column window_start")


def test_a_parquet_table_that_is_no_parquet_is_refused(parquet_out, capsys):
    part = _part(parquet_out, "robots_versions")
    part.write_bytes(b"PAR1 not really")
    _refused(capsys, ["report", str(parquet_out)], f"{part} is not a Parquet file")


def test_whatif_refuses_verdicts_that_are_not_verdicts(parquet_out, out, tmp_path, capsys):
    proposal = str(_proposal(tmp_path))
    verdicts = _part(out, "verdicts")
    verdicts.write_text("{}\n")
    _refused(capsys, ["whatif", str(out), "--host", "example.com", "--proposed", proposal], f"{verdicts}: ", "no ")
    verdicts.write_text('{"host": 5}\n')
    _refused(capsys, ["whatif", str(out), "--host", "example.com", "--proposed", proposal], f"{verdicts}: rows that are not verdicts rows")
    swapped = _part(parquet_out, "verdicts")
    shutil.copy(_part(parquet_out, "robots_versions"), swapped)
    _refused(capsys, ["whatif", str(parquet_out), "--host", "example.com", "--proposed", proposal], f"{swapped} is not a verdicts table")
    assert not (out / "whatif").exists() and not (parquet_out / "whatif").exists()


def test_a_damaged_whatif_summary_is_refused_by_report(out, tmp_path, capsys):
    assert main(["whatif", str(out), "--host", "example.com", "--proposed", str(_proposal(tmp_path))]) == 0
    summary = out / "whatif" / "summary.json"
    digest = json.loads(summary.read_text())
    digest["crawlers"][0]["top"]["allowed-to-disallowed"] = [{}]
    summary.write_text(json.dumps(digest))
    _refused(capsys, ["report", str(out)], f"{summary}: a flip: host is missing or null")
    summary.write_text('{"host": "example.com"}')
    _refused(capsys, ["report", str(out)], f"{summary}: proposal is missing")


def test_an_oversized_manifest_is_refused_without_reading_it_whole(out, capsys):
    with open(out / "manifest.json", "wb") as handle:
        handle.truncate((64 << 20) + 1)  # sparse: costs no disk
    _refused(capsys, ["report", str(out)], "manifest.json is larger than 67,108,864 bytes")
