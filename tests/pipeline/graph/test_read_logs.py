"""A large plain log file read in pieces gives the lines, the line numbers and the W3C fields of
reading it whole; compressed files and JSON exports stay whole."""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import BINGBOT_IP, REPO, run_audit, run_settings
from matcher.line_auditor import VERDICT
from matcher.logformats.w3c import is_fields_directive
from pipeline.graph import build, read_logs
from pipeline.graph.line_audit import followed_fields
from pipeline.graph.read_logs import FieldsInForce, LogPiece, LongLine, decoded, file_pieces, piece_batches, pieces_expected
from portable import run_tables, sample_argv


def metadata(path: Path) -> SimpleNamespace:
    return SimpleNamespace(path=str(path), size_in_bytes=path.stat().st_size)


def numbered(elements) -> list:
    """(number, line) of every line read, and every other element as it is."""
    out = []
    for element in elements:
        if isinstance(element, tuple):
            out += [(element[1] + offset, line) for offset, line in enumerate(element[2])]
        elif not isinstance(element, FieldsInForce):
            out.append(element)
    return out


def read_whole(path: Path) -> list:
    return numbered(piece_batches(LogPiece(str(path), path.stat().st_size), 3))


def read_in_pieces(path: Path, piece_bytes: int) -> tuple[list, list[LogPiece]]:
    pieces = list(file_pieces(metadata(path), piece_bytes))
    return numbered(element for piece in pieces for element in piece_batches(piece, 3)), pieces


def fields_before(lines: list, number: int) -> str | None:
    """The slow reference: the last `#Fields:` line before line `number`."""
    found = None
    for at, line in lines:
        if at >= number:
            break
        if is_fields_directive(line):
            found = line
    return found


PIECES_OF_TEXT = st.lists(
    st.sampled_from([b"a", b"bb", b"\n", b"\r", b"\r\n", b"#Fields: date time c-ip", b" \t#fields : cs-uri", b"#Date: x", b"#", b"", b"x" * 9, b"\xff"]),
    max_size=60,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=PIECES_OF_TEXT, piece_bytes=st.integers(1, 12), scan_bytes=st.sampled_from([1, 3, 7, 1 << 20]))
def test_pieces_read_the_lines_of_the_whole_file(parts, piece_bytes, scan_bytes, tmp_path, monkeypatch):
    monkeypatch.setattr(read_logs, "_SCAN_BYTES", scan_bytes)
    path = tmp_path / "access.log"
    path.write_bytes(b"".join(parts))
    whole = read_whole(path)
    if path.stat().st_size <= piece_bytes or whole[:1] and not isinstance(whole[0], tuple):
        return
    in_pieces, pieces = read_in_pieces(path, piece_bytes)
    assert in_pieces == whole
    for piece in pieces:
        assert piece.fields == fields_before(whole, piece.first_line)


def test_a_big_file_is_cut_at_line_ends_near_each_piece_size(tmp_path):
    path = tmp_path / "access.log"
    lines = [f"line {n} " + "x" * (n % 50) for n in range(1, 5001)]
    path.write_text("\r\n".join(lines) + "\r\n")
    in_pieces, pieces = read_in_pieces(path, 16 << 10)
    assert len(pieces) == -(-path.stat().st_size // (16 << 10)) == pieces_expected([metadata(path)], 16 << 10)
    assert in_pieces == list(enumerate(lines, 1))
    data = path.read_bytes()
    for piece in pieces[1:]:
        assert data[piece.start - 2:piece.start] == b"\r\n"
        assert data[piece.start:].startswith(f"line {piece.first_line} ".encode())


def test_a_piece_of_a_w3c_file_starts_with_the_fields_in_force(tmp_path):
    path = tmp_path / "u_ex261102.log"
    first = "#Fields: date time c-ip cs-uri-stem sc-status"
    second = "#Fields: date time s-ip c-ip cs-uri-stem sc-status cs(User-Agent)"
    path.write_text("\n".join(["#Software: IIS", first, *["2026-11-02 10:00:00 192.0.2.1 /a 200"] * 400, second,
                               *["2026-11-02 11:00:00 10.0.0.1 192.0.2.1 /b 200 Bot"] * 400]) + "\n")
    pieces = list(file_pieces(metadata(path), 4096))
    assert len(pieces) > 4
    assert pieces[0].fields is None
    assert {piece.fields for piece in pieces[1:]} == {first, second}
    later = [piece for piece in pieces if piece.fields == second][0]
    assert next(piece_batches(later, 3)) == FieldsInForce(str(path), second)


def test_a_line_over_the_maximum_in_a_piece_is_one_long_line(tmp_path):
    path = tmp_path / "access.log"
    junk = read_logs.MAX_LINE_BYTES + 300
    path.write_bytes(b"short\n" * 20 + b"\0" * junk + b"\n" + b"after\n" * 20)
    in_pieces, pieces = read_in_pieces(path, 50)
    assert len(pieces) > 2 and in_pieces == read_whole(path)
    long_lines = [element for element in in_pieces if isinstance(element, LongLine)]
    assert [(line.line, line.length) for line in long_lines] == [(21, junk)]


@pytest.mark.parametrize("content", [
    b'[{"ts": "2026-11-02T10:00:00Z"},\n' + b'{"ts": "2026-11-02T10:00:01Z"},\n' * 300 + b"{}]\n",
    b'{\n  "ts": "2026-11-02T10:00:00Z"\n}\n' * 300,
])
def test_a_json_export_is_read_whole(tmp_path, content):
    path = tmp_path / "export.json"
    path.write_bytes(content)
    assert list(file_pieces(metadata(path), 256)) == [LogPiece(str(path), len(content))]


def test_a_compressed_file_is_read_whole(tmp_path):
    path = tmp_path / "access.log.gz"
    path.write_bytes(gzip.compress(b"a line\n" * 10_000))
    assert list(file_pieces(metadata(path), 256)) == [LogPiece(str(path), path.stat().st_size)]
    assert pieces_expected([metadata(path)], 256) == 1


def test_without_a_piece_size_every_file_is_whole(tmp_path):
    path = tmp_path / "access.log"
    path.write_bytes(b"a line\n" * 10_000)
    assert list(file_pieces(metadata(path), None)) == [LogPiece(str(path), path.stat().st_size)]


def test_the_last_piece_reads_what_was_written_after_the_cut(tmp_path):
    """A log still being written: the last piece goes to the file's end, not to the size matched."""
    path = tmp_path / "access.log"
    path.write_bytes(b"a line\n" * 100)
    pieces = list(file_pieces(metadata(path), 256))
    with path.open("ab") as log:
        log.write(b"written later\n")
    read = numbered(element for piece in pieces for element in piece_batches(piece, 3))
    assert read[-1] == (101, decoded(b"written later"))


@pytest.mark.slow
def test_a_run_over_one_plain_file_in_pieces_writes_the_tables_of_reading_it_whole(tmp_path, monkeypatch):
    """The bundled sample as one plain access.log: read in pieces, in worker processes too, the
    run's tables and report counts are those of reading it whole in one process."""
    log = tmp_path / "access.log"
    log.write_bytes(b"".join(gzip.decompress(part.read_bytes()) for part in sorted((REPO / "samples" / "logs").glob("*.gz"))))

    def run(out: str, *extra: str) -> dict:
        argv = [*sample_argv(str(log), tmp_path / out), "--runner=FnApiRunner", *extra]
        assert run_audit(argv) == 0
        return {**run_tables(tmp_path / out), "report_counts": (tmp_path / out / "report_counts.json").read_text()}

    monkeypatch.setattr(build, "PIECE_BYTES", None)
    whole = run("whole")
    monkeypatch.setattr(build, "PIECE_BYTES", 64 << 10)
    assert len(list(file_pieces(metadata(log), 64 << 10))) > 10
    assert run("pieces") == whole
    assert run("pieces-in-workers", "--direct_running_mode=multi_processing", "--direct_num_workers=2") == whole
    assert len(whole["verdicts"]) > 1000


def iis_log(log: Path) -> Path:
    """An IIS log of 1,200 bingbot requests whose fields change halfway."""
    agent = "Mozilla/5.0+(compatible;+bingbot/2.0;++http://www.bing.com/bingbot.htm)"
    lines = ["#Software: Microsoft Internet Information Services 10.0",
             "#Fields: date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent) cs-host"]
    lines += [f"2026-11-02 10:{n // 60:02d}:{n % 60:02d} {BINGBOT_IP} GET /a/{n} 200 {agent} www.example.com" for n in range(600)]
    lines += ["#Fields: date time cs-host cs-method cs-uri-stem cs(User-Agent) sc-status c-ip"]
    lines += [f"2026-11-02 11:{n // 60:02d}:{n % 60:02d} www.example.com GET /b/{n} {agent} 404 {BINGBOT_IP}" for n in range(600)]
    log.write_text("\r\n".join(lines) + "\r\n")
    return log


def iis_argv(log: Path, out: Path) -> list[str]:
    return [
        f"--logs={log}", "--log-format=w3c", f"--robots={REPO / 'samples/robots/history.jsonl'}",
        f"--ranges={REPO / 'samples/ranges'}", f"--out={out}", "--runner=FnApiRunner",
    ]


@pytest.mark.slow
def test_pieces_of_a_w3c_file_audited_in_any_order_read_each_line_under_its_own_fields(tmp_path):
    log = iis_log(tmp_path / "u_ex261102.log")
    settings, _ = run_settings(iis_argv(log, tmp_path / "out"))

    def statuses(pieces) -> list:
        auditor = build.line_auditor(settings)
        found = []
        for piece in pieces:
            for batch in piece_batches(piece, 50):
                if not followed_fields(auditor, batch):
                    found += [record for kind, record in auditor.audit_lines(*batch, {}) if kind == VERDICT]
        return sorted((row["source"], row["path"], row["status"]) for row in found)

    pieces = list(file_pieces(metadata(log), 8 << 10))
    whole = statuses([LogPiece(str(log), log.stat().st_size)])
    assert len(whole) == 1200 and {(path[:3], status) for _, path, status in whole} == {("/a/", 200), ("/b/", 404)}
    assert statuses(reversed(pieces)) == whole


@pytest.mark.slow
def test_a_w3c_file_in_pieces_reads_each_line_under_its_own_fields(tmp_path, monkeypatch):
    """Every piece reads its lines under the `#Fields:` line in force where it starts, as reading
    the file whole does."""
    log = iis_log(tmp_path / "u_ex261102.log")

    def run(out: str) -> dict:
        assert run_audit(iis_argv(log, tmp_path / out)) == 0
        return run_tables(tmp_path / out)

    monkeypatch.setattr(build, "PIECE_BYTES", None)
    whole = run("whole")
    monkeypatch.setattr(build, "PIECE_BYTES", 8 << 10)
    assert len(list(file_pieces(metadata(log), 8 << 10))) > 10
    assert run("pieces") == whole
    verdicts = [json.loads(row) for row in whole["verdicts"]]
    assert len(verdicts) == 1200 and not whole["dead_letters"]
    assert {(row["path"][:3], row["status"]) for row in verdicts} == {("/a/", 200), ("/b/", 404)}


def test_json_lines_with_a_long_first_line_and_a_raw_byte_are_read_line_by_line(tmp_path):
    long_entry = {"ts": "2026-11-02T10:00:00Z", "ip": "66.249.66.1", "req": "GET /" + "a" * 300_000 + " HTTP/1.1"}
    lines = [json.dumps(long_entry).encode()] + [
        b'{"ts":"2026-11-02T10:00:01Z","ip":"66.249.66.1","ua":"Googlebot\xff/2.1","n":%d}' % number
        for number in range(50)
    ]
    path = tmp_path / "access.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    read = read_whole(path)
    assert [number for number, _ in read] == list(range(1, 52))  # every line, none ended the file
    assert read[-1][1].endswith('"n":49}') and "Googlebot\\xff/2.1" in read[-1][1]


@pytest.mark.parametrize("content", [
    b"[02/Nov/2026:10:00:00 +0000] 66.249.66.1 GET /a\n" * 5,
    b"{not json\n" * 5,
])
def test_a_file_that_only_looks_like_an_export_is_read_line_by_line(tmp_path, content):
    path = tmp_path / "access.log"
    path.write_bytes(content)
    assert [number for number, _ in read_whole(path)] == [1, 2, 3, 4, 5]
