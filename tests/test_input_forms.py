"""Hosts and request targets end to end: the host a request is audited under is the one the
server logged, in IDNA A-labels, whatever spelling the table, the log or the client chose."""
from __future__ import annotations

import pytest

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import GOOGLEBOT, read_jsonl, write_jsonl
from pipeline.cli.main import main

ROBOTS = "User-agent: *\nDisallow: /private\n"
WHEN = "02/Nov/2026:10:00:00 +0000"


def _table(folder: Path, host: str) -> Path:
    (folder / "robots.txt").write_text(ROBOTS)
    return write_jsonl(folder / "robots.jsonl", [
        {"host": host, "effective_from": "2000-01-01T00:00:00Z", "status": 200, "body_file": "robots.txt"},
    ])


def _request(target: str, host: str | None = None) -> str:
    line = f'66.249.66.1 - - [{WHEN}] "GET {target} HTTP/1.1" 200 5 "-" "{GOOGLEBOT}"'
    return f"{host} {line}" if host else line


def _verdicts(folder: Path, log_format: str, lines: list[str], *extra: str) -> list[dict]:
    (folder / "access.log").write_text("\n".join(lines) + "\n")
    assert main([
        "run", f"--logs={folder / 'access.log'}", f"--log-format={log_format}", f"--robots={folder / 'robots.jsonl'}",
        f"--ranges={folder}", f"--out={folder / 'out'}", "--runner=FnApiRunner", *extra,
    ]) == 0
    return sorted(read_jsonl(folder / "out" / "verdicts"), key=lambda row: row["source"])


@pytest.mark.slow
def test_a_table_host_in_u_labels_judges_the_requests_a_log_names_in_a_labels(tmp_path):
    _table(tmp_path, "Bücher.Example")
    rows = _verdicts(tmp_path, "host_combined", [
        _request("/private/a", "xn--bcher-kva.example"),
        _request("/open", "XN--BCHER-KVA.EXAMPLE:443"),
        _request("/private/b", "bücher.example"),
    ])
    assert [(row["host"], row["decision"]) for row in rows] == [
        ("xn--bcher-kva.example", "disallowed"), ("xn--bcher-kva.example", "allowed"), ("xn--bcher-kva.example", "disallowed"),
    ]


@pytest.mark.slow
def test_an_absolute_form_target_cannot_pick_another_hosts_robots_txt(tmp_path):
    """A single-site log: the client naming another host in its target is still judged by the
    site's robots.txt, and the host it named is kept as evidence."""
    _table(tmp_path, "www.example.com")
    rows = _verdicts(tmp_path, "combined", [
        _request("http://other.invalid/private"),
        _request("http://WWW.Example.com/private"),
        _request("/private"),
    ], "--default-host=www.example.com")
    assert [(row["host"], row["path"], row["target_host"], row["decision"]) for row in rows] == [
        ("www.example.com", "/private", "other.invalid", "disallowed"),
        ("www.example.com", "/private", None, "disallowed"),  # the same host: nothing to keep
        ("www.example.com", "/private", None, "disallowed"),
    ]


@pytest.mark.slow
def test_the_logged_vhost_decides_and_the_targets_host_is_evidence(tmp_path):
    _table(tmp_path, "www.example.com")
    (row,) = _verdicts(tmp_path, "host_combined", [_request("http://other.invalid/private", "www.example.com")])
    assert (row["host"], row["target_host"], row["decision"]) == ("www.example.com", "other.invalid", "disallowed")


# ------------------------------------------------------------------ bounded lines


_RUN = (
    "import sys\n"
    "from pipeline.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _peak_rss_mib(folder: Path, log: Path, out: Path) -> float:
    """The peak resident memory of `crawl-audit run` over `log`, in a process of its own."""
    process = subprocess.Popen([
        sys.executable, "-c", _RUN, "run", f"--logs={log}", "--log-format=host_combined",
        f"--robots={folder / 'robots.jsonl'}", f"--ranges={folder}", f"--out={out}", "--runner=FnApiRunner",
    ], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, process.stderr.read().decode()
    return usage.ru_maxrss / 1024  # KiB on Linux


@pytest.mark.slow
def test_a_300_mb_line_without_a_newline_is_one_dead_letter_read_in_bounded_memory(tmp_path):
    """The zero-filled tail a crash leaves in a log file: one row with a short prefix, and the run
    takes no more memory than over a small log."""
    _table(tmp_path, "example.com")
    good = _request("/private", "example.com")
    small = tmp_path / "small.log"
    small.write_text(good + "\n")
    long = tmp_path / "long.log"
    with long.open("wb") as handle:
        handle.write(good.encode() + b"\n")
        handle.truncate(300 << 20)  # a hole reads as NULs without taking the disk
    baseline = _peak_rss_mib(tmp_path, small, tmp_path / "small-out")
    peak = _peak_rss_mib(tmp_path, long, tmp_path / "out")
    assert peak < baseline + 64, f"{peak:.0f} MiB against {baseline:.0f} MiB over a one-line log"
    (dead,) = read_jsonl(tmp_path / "out" / "dead_letters")
    length = (300 << 20) - len(good) - 1
    assert (dead["source"], dead["reason"]) == (f"{long}:2", "line-too-long")
    assert dead["message"] == f"line of {length:,} bytes, over the 1,048,576-byte maximum; its first 4,096 bytes kept"
    assert dead["raw"] == "\0" * 4096
    (verdict,) = read_jsonl(tmp_path / "out" / "verdicts")
    assert verdict["decision"] == "disallowed"
    counts = json.loads((tmp_path / "out" / "counts.json").read_text())
    assert counts["lines"] == 2 and counts["dead_letters"] == 1
