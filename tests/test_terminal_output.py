"""Every command on hostile input prints nothing a terminal acts on: log lines, robots.txt files,
tables, file names and what a remote server sends (archive timestamps, `Location` headers) may
carry escape sequences, C1 controls and bidirectional overrides, and all of it reaches stdout
and stderr escaped."""
from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from helpers import GOOGLEBOT, git_commit, git_in, log_line, write_jsonl
from loopback import Server
from pipeline.cli.main import main

# Retitles the terminal, rings, clears the screen through the C1 CSI, and reverses what follows.
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b2J\u202e\u2066\x00\r"
# Any C0 control but the line feed, DEL, any C1 control, and the bidirectional controls.
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _assert_printable(capfd, *expected_exits: int, exit_code: int) -> str:
    captured = capfd.readouterr()
    for stream, text in (("stdout", captured.out), ("stderr", captured.err)):
        found = CONTROLS.search(text)
        assert found is None, f"{stream} holds {found.group()!r}: {text[max(found.start() - 60, 0):found.end() + 20]!r}"
    assert "Traceback" not in captured.err
    assert exit_code in expected_exits, captured.err
    return captured.out + captured.err


def _robots(folder: Path) -> Path:
    path = folder / "robots.txt"
    path.write_text(f"User-agent: *\nDisallow: /{HOSTILE}\nAllow: /ok{HOSTILE}\nUser-agent: bot{HOSTILE}\nDisallow: /\n")
    return path


def _table(folder: Path) -> Path:
    return write_jsonl(folder / "robots.jsonl", [
        {"host": "example.com", "effective_from": "2026-11-01T00:00:00Z", "status": 200,
         "body": f"User-agent: *\nDisallow: /{HOSTILE}\n"},
        {"host": "example.com", "effective_from": "2026-11-03T00:00:00Z", "status": 200,
         "body": f"User-agent: *\nDisallow: /x{HOSTILE}\nUser-agent: bot{HOSTILE}\nAllow: /{HOSTILE}\n"},
    ])


def _log(folder: Path) -> Path:
    within = HOSTILE[:-2]  # a NUL or CR would end the line
    lines = [
        log_line("example.com", f"02/Nov/2026:10:00:0{n} +0000", f"/{within}{n}",
                 GOOGLEBOT.replace("Googlebot/2.1", f"Googlebot/2.1 {within}"), ip="66.249.66.1")
        for n in range(3)
    ]
    lines.append(log_line("example.com", "02/Nov/2026:10:00:09 +0000", "/a", f"Evil{within}bot/1.0"))
    path = folder / "access.log"
    path.write_text("\n".join(lines) + f"\nnot a line {HOSTILE}\n")
    return path


def test_check_and_lint(tmp_path, capfd):
    robots = _robots(tmp_path)
    for argv in (
        ["check", str(robots), f"bot{HOSTILE}", f"/{HOSTILE}", f"https://example.com/ok{HOSTILE}"],
        ["check", "--json", str(robots), f"Googlebot {HOSTILE}", f"/{HOSTILE}"],
        ["lint", str(robots)],
    ):
        _assert_printable(capfd, 0, 1, exit_code=main(argv))
    named = tmp_path / f"robots{HOSTILE.replace(chr(0), '')}.txt"
    named.write_text("Disalow: /x\n")
    assert "robots\\x1b" in _assert_printable(capfd, 1, exit_code=main(["lint", str(named)]))
    _assert_printable(capfd, 2, exit_code=main(["check", str(tmp_path / f"gone{HOSTILE[:-2]}"), "bot", "/"]))


@pytest.mark.slow
def test_verify_update_ranges_and_schema(tmp_path, capfd):
    for argv in (
        ["verify", "66.249.66.1", f"Googlebot/2.1 {HOSTILE}"],
        ["verify", "--json", "66.249.66.1", f"Googlebot/2.1 {HOSTILE}"],
        ["verify", f"66.249.66.1{HOSTILE}", "Googlebot"],
        ["update-ranges", f"--registry={tmp_path / HOSTILE[:-2]}"],
        ["schema", "verdicts"],
        [f"nonsense{HOSTILE[:-2]}"],
        ["run", f"--bad-flag{HOSTILE[:-2]}"],
    ):
        _assert_printable(capfd, 0, 1, 2, exit_code=main(argv))


def test_history_show_and_diff(tmp_path, capfd):
    table = str(_table(tmp_path))
    for argv in (
        ["history", "show", table],
        ["history", "diff", table, "--host", "example.com", "2026-11-02", "2026-11-04"],
        ["history", "diff", table, "--host", f"example.org{HOSTILE[:-2]}", "2026-11-02", "2026-11-04"],
        ["history", "import-git", str(tmp_path), f"robots{HOSTILE[:-2]}.txt", "--host=example.com",
         f"--into={tmp_path / 'captures'}"],
    ):
        said = _assert_printable(capfd, 0, 2, exit_code=main(argv))
        if argv[1] == "diff":
            assert "\\x1b" in said, said  # the rules and hosts shown, escaped
    for host in ("example.com", f"example.com{HOSTILE[:-2]}"):
        argv = ["history", "import-file", str(_robots(tmp_path)), f"--host={host}", "--effective-from=2026-11-01",
                f"--into={tmp_path / 'imported'}"]
        said = _assert_printable(capfd, 0, 2, exit_code=main(argv))
        assert "audit with:" in said or "crawl-audit:" in said, said
    broken = write_jsonl(tmp_path / "broken.jsonl", [{"host": f"example.com{HOSTILE}", "effective_from": "x"}])
    _assert_printable(capfd, 2, exit_code=main(["history", "show", str(broken)]))


@pytest.mark.slow
def test_update_ranges_import_git_prints_paths_and_refused_lines_escaped(tmp_path, capfd):
    repo = tmp_path / "mirror"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2026-03-01T08:00:00Z", {"gptbot.txt": f"20.171.206.0/24\nnot{HOSTILE[:-2]}\n".encode()})
    ranges = f"--ranges={tmp_path / 'ranges'}"
    for argv, exits in (
        (["update-ranges", ranges, "import-git", str(repo), "gptbot.txt", "--source", "openai-gptbot"], (1,)),
        (["update-ranges", ranges, "import-git", str(repo), f"gone{HOSTILE[:-2]}.txt", "--source", "openai-gptbot"], (1,)),
        (["update-ranges", ranges, "import-git", str(repo), "gptbot.txt", "--source", f"no-such{HOSTILE[:-2]}"], (2,)),
    ):
        said = _assert_printable(capfd, *exits, exit_code=main(argv))
        assert "\\x1b" in said or "no-such" in said, said


@pytest.mark.slow
def test_history_capture_with_a_resolver_that_does_not_answer_says_so_escaped(tmp_path, capfd):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        resolver = f"127.0.0.1:{silent.getsockname()[1]}"
        for host in ("site.example", f"site.example{HOSTILE[:-2]}"):
            argv = ["history", "capture", host, f"--into={tmp_path / 'captures'}", f"--dns-server={resolver}", "--timeout=1"]
            said = _assert_printable(capfd, 1, 2, exit_code=main(argv))
            assert "NOT RECORDED" in said or "crawl-audit:" in said, said


def test_history_capture_prints_a_servers_location_escaped(tls, tmp_path, capfd):
    def route(handler):
        handler.answer(301, b"", {"Location": "http://site.example/\x1b]0;owned\x07\x1b[2J\x9b2J"})

    with Server(tls, route) as server:
        argv = ["history", "capture", "site.example", f"--into={tmp_path}", f"--ca-file={tls.ca}",
                f"--connect-to=site.example=127.0.0.1:{server.port}", "--timeout=5"]
        _assert_printable(capfd, 0, 1, 2, exit_code=main(argv))


def test_history_import_wayback_prints_archive_timestamps_escaped(tls, tmp_path, capfd):
    rows = [
        ["timestamp", "original", "statuscode", "digest", "skipcount", "endtimestamp"],
        [f"2024{HOSTILE[:-2]}", f"https://site.example/robots.txt{HOSTILE[:-2]}", "200", "D1", "0", "-"],
        ["20240101000000", "https://site.example/robots.txt", f"2{HOSTILE[:-2]}", "D2", "0", f"x{HOSTILE[:-2]}"],
    ]

    def route(handler):
        if handler.path.startswith("/cdx/"):
            handler.answer(200, json.dumps(rows).encode(), {"Content-Type": "application/json"})
        else:
            handler.answer(503, HOSTILE.encode())

    with Server(tls, route) as server:
        argv = ["history", "import-wayback", "site.example", f"--into={tmp_path}", "--archive=https://archive.example",
                f"--connect-to=archive.example=127.0.0.1:{server.port}", f"--ca-file={tls.ca}", "--delay=0",
                "--retries=0"]
        _assert_printable(capfd, 0, 1, 2, exit_code=main(argv))


@pytest.mark.slow
@pytest.mark.parametrize("output_format", ["jsonl", "parquet"])
def test_run_report_and_whatif(tmp_path, capfd, output_format):
    table, log = _table(tmp_path), _log(tmp_path)
    out = tmp_path / "out"
    argv = ["run", f"--logs={log}", "--log-format=host_combined", f"--robots={table}", f"--out={out}",
            "--runner=FnApiRunner", f"--format={output_format}", "--progress=never"]
    said = _assert_printable(capfd, 0, exit_code=main(argv))
    assert "run health:" in said, said  # the health section, escaped with the rest of the summary
    _assert_printable(capfd, 0, exit_code=main(["report", str(out)]))
    # --fail-on: the run's closing line names the failing checks (the log has a dead letter)
    failing = [*argv[:-4], f"--out={tmp_path / 'failing'}", *argv[-3:], "--fail-on=any"]
    assert "--fail-on" in _assert_printable(capfd, 1, exit_code=main(failing))
    proposal = _robots(tmp_path)
    for argv in (
        ["whatif", str(out), "--host", "example.com", "--proposed", str(proposal)],
        ["whatif", str(out), "--host", f"example.org{HOSTILE[:-2]}", "--proposed", str(proposal)],
    ):
        _assert_printable(capfd, 0, 2, exit_code=main(argv))
    _assert_printable(capfd, 2, exit_code=main(["report", str(tmp_path / f"nowhere{HOSTILE[:-2]}")]))
    missing = ["run", f"--logs={tmp_path / f'none{HOSTILE[:-2]}'}", "--log-format=host_combined",
               f"--robots={table}", f"--out={tmp_path / 'other'}", "--runner=FnApiRunner"]
    _assert_printable(capfd, 2, exit_code=main(missing))
