"""Hostile input end to end: every bad line or file is a dead letter and the run ends 0; every bad
side table or command line exits 2 with one line naming what is wrong; nothing outside a table's
folder is read."""
from __future__ import annotations

import gzip
import json
import os
import signal
from pathlib import Path

import pytest

from helpers import GOOGLEBOT, log_line, read_jsonl, write_jsonl
from pipeline.cli.main import main

ROBOTS = "User-agent: *\nCrawl-delay: 5\nDisallow: /x\n"
FIELD_MAP = '{"ts":"ts","client_ip":"ip","request":"req","user_agent":"ua","host":"host"}'


@pytest.fixture(autouse=True)
def _no_hang():
    """A read that blocks (a FIFO opened for reading waits for a writer) fails the test instead."""

    def give_up(signum, frame):
        raise TimeoutError("the run blocked")

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _line(when: str, path: str = "/a") -> str:
    return log_line("example.com", when, path, GOOGLEBOT, ip="66.249.66.1", size=5)


def _table(folder: Path, *rows: dict) -> Path:
    rows = rows or ({"host": "example.com", "effective_from": "2000-01-01T00:00:00Z", "status": 200,
                     "body_file": "robots.txt"},)
    (folder / "robots.txt").write_text(ROBOTS)
    return write_jsonl(folder / "robots.jsonl", rows)


def _run(folder: Path, logs: str, *extra: str, robots: Path | None = None) -> int:
    return main([
        "run", f"--logs={logs}", "--log-format=host_combined", f"--robots={robots or folder / 'robots.jsonl'}",
        f"--out={folder / 'out'}", "--runner=FnApiRunner", *extra,
    ])


def _rows(folder: Path, table: str) -> list[dict]:
    return read_jsonl(folder / "out" / table, "part*")


def _counts(folder: Path) -> dict:
    return json.loads((folder / "out" / "counts.json").read_text())


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("crawl-audit:")]
    assert len(lines) == 1, err
    return lines[0]


# ------------------------------------------------------------- lines and files: dead letters, exit 0


@pytest.mark.slow
def test_times_that_leave_the_datetime_range_are_dead_letters_and_the_rest_is_audited(tmp_path):
    _table(tmp_path)
    (tmp_path / "a.log").write_text("\n".join([
        _line("01/Jan/0001:00:00:00 +0100"),
        _line("31/Dec/9999:23:59:59 -0100"),
        _line("02/Nov/2026:00:00:00 +0000"),
    ]) + "\n")
    assert _run(tmp_path, str(tmp_path / "a.log")) == 0
    dead = _rows(tmp_path, "dead_letters")
    assert sorted(d["source"].rsplit(":", 1)[1] for d in dead) == ["1", "2"]
    assert {d["reason"] for d in dead} == {"bad-timestamp"}
    assert _counts(tmp_path) == {"lines": 3, "verdicts": 1, "skipped": 0, "dead_letters": 2, "not_requests": 0, "not_request_reasons": {}}


@pytest.mark.slow
def test_requests_at_both_ends_of_time_get_verdicts_and_crawl_delay_rows(tmp_path):
    _table(tmp_path, {"host": "example.com", "effective_from": "0001-01-01T00:00:00Z", "status": 200,
                      "body_file": "robots.txt"})
    (tmp_path / "a.log").write_text("\n".join([
        _line("31/Dec/9999:23:30:00 +0000"), _line("31/Dec/9999:23:30:01 +0000"),
        _line("01/Jan/0001:00:30:00 +0000"), _line("01/Jan/0001:00:30:02 +0000"),
    ]) + "\n")
    assert _run(tmp_path, str(tmp_path / "a.log"), "--window=30d") == 0
    verdicts = _rows(tmp_path, "verdicts")
    assert sorted(v["ts"] for v in verdicts) == [
        "0001-01-01T00:30:00Z", "0001-01-01T00:30:02Z", "9999-12-31T23:30:00Z", "9999-12-31T23:30:01Z",
    ]
    violations = _rows(tmp_path, "crawl_delay_violations")
    assert sorted(v["gap_s"] for v in violations) == [1.0, 2.0]
    windows = _rows(tmp_path, "crawl_delay_windows")
    assert min(w["window_start"] for w in windows) == "0001-01-01T00:00:00Z"
    assert max(w["window_end"] for w in windows) == "9999-12-31T23:59:59.999999Z"


@pytest.mark.slow
def test_a_crawl_delay_longer_than_any_timedelta_makes_every_gap_a_violation(tmp_path):
    _table(tmp_path)
    (tmp_path / "robots.txt").write_text("User-agent: *\nCrawl-delay: 99999999999999\n")
    (tmp_path / "a.log").write_text(_line("02/Nov/2026:00:00:00 +0000") + "\n" + _line("03/Nov/2026:00:00:00 +0000") + "\n")
    assert _run(tmp_path, str(tmp_path / "a.log")) == 0
    [violation] = _rows(tmp_path, "crawl_delay_violations")
    assert violation["gap_s"] == 86400.0 and violation["crawl_delay_s"] == 99999999999999.0


@pytest.mark.slow
def test_lone_surrogates_in_json_values_are_written_as_escapes(tmp_path):
    _table(tmp_path)
    rows = [
        {"ts": "0001-01-01T00:00:00+01:00", "ip": "1.2.3.4", "req": "GET / HTTP/1.1", "ua": GOOGLEBOT, "host": "example.com"},
        {"ts": "2026-01-01T00:00:00Z", "ip": "1.2.3.4", "req": "GET /\ud800 HTTP/1.1", "ua": GOOGLEBOT + "\udfff",
         "host": "example.com\ud800"},
    ]
    write_jsonl(tmp_path / "a.jsonl", rows)
    code = main([
        "run", f"--logs={tmp_path / 'a.jsonl'}", "--log-format=jsonl", f"--field-map={FIELD_MAP}",
        f"--robots={tmp_path / 'robots.jsonl'}", f"--out={tmp_path / 'out'}", "--runner=FnApiRunner",
    ])
    assert code == 0
    [verdict] = _rows(tmp_path, "verdicts")
    assert (verdict["path"], verdict["host"]) == ("/\\ud800", "example.com\\ud800")
    assert verdict["user_agent"].endswith("\\udfff") and verdict["crawler"] == "Googlebot"
    [dead] = _rows(tmp_path, "dead_letters")
    assert dead["reason"] == "bad-timestamp"


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated", "trailing-garbage"])
def test_a_broken_gzip_among_good_files_keeps_every_line_read(tmp_path, damage):
    _table(tmp_path)
    lines = [_line(f"02/Nov/2026:00:{minute:02d}:00 +0000") for minute in range(40)]
    data = ("\n".join(lines) + "\n").encode()
    (tmp_path / "good.log.gz").write_bytes(gzip.compress(data))
    # Two members: the first is whole, the second is cut or followed by junk.
    first, second = gzip.compress(data[: len(data) // 2]), gzip.compress(data[len(data) // 2:])
    broken = first + (second[:-20] if damage == "truncated" else second + b"not gzip at all")
    (tmp_path / "broken.log.gz").write_bytes(broken)
    assert _run(tmp_path, str(tmp_path / "*.log.gz")) == 0
    dead = _rows(tmp_path, "dead_letters")
    [letter] = dead
    assert letter["reason"] == "unreadable-rest-of-file"
    assert letter["source"].startswith(str(tmp_path / "broken.log.gz") + ":")
    assert "bytes read" in letter["message"] and "of the file" in letter["message"]
    verdicts = _rows(tmp_path, "verdicts")
    from_broken = [v for v in verdicts if v["source"].startswith(str(tmp_path / "broken.log.gz"))]
    assert len([v for v in verdicts if v["source"].startswith(str(tmp_path / "good.log.gz"))]) == 40
    # every line before the break is audited: the first member whole, and for trailing junk both
    assert len(from_broken) >= 20 and (damage == "truncated" or len(from_broken) == 40)
    next_line = int(letter["source"].rsplit(":", 1)[1])
    assert next_line == len(from_broken) + 1
    counts = _counts(tmp_path)
    assert counts["lines"] == counts["verdicts"] + counts["skipped"] + counts["not_requests"] + counts["dead_letters"]


@pytest.mark.slow
def test_a_lone_cr_ends_a_line(tmp_path):
    _table(tmp_path)
    (tmp_path / "a.log").write_bytes(
        "\r".join([_line("02/Nov/2026:00:00:00 +0000"), _line("02/Nov/2026:00:00:01 +0000")]).encode() + b"\r"
    )
    assert _run(tmp_path, str(tmp_path / "a.log")) == 0
    assert _counts(tmp_path) == {"lines": 2, "verdicts": 2, "skipped": 0, "dead_letters": 0, "not_requests": 0, "not_request_reasons": {}}


# ------------------------------------------------------------------- side tables and flags: exit 2


def _log(folder: Path) -> str:
    (folder / "a.log").write_text(_line("02/Nov/2026:00:00:00 +0000") + "\n")
    return str(folder / "a.log")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body_file", "expected"),
    [
        ("../../../../../../etc/passwd", "outside"),
        ("/etc/passwd", "absolute"),
        (None, "non-empty relative path"),
        ("link-out", "outside"),
        ("fifo", "a FIFO"),
        ("folder", "is a directory, not a regular file"),
    ],
)
def test_body_files_outside_the_folder_or_not_regular_are_refused(tmp_path, capsys, body_file, expected):
    secret = tmp_path / "secret.txt"
    secret.write_text("User-agent: *\nDisallow: /\n")
    folder = tmp_path / "table"
    folder.mkdir()
    (folder / "link-out").symlink_to(secret)
    os.mkfifo(folder / "fifo")
    (folder / "folder").mkdir()
    _table(folder, {"host": "example.com", "effective_from": "2000-01-01T00:00:00Z", "status": 404},
           {"host": "example.com", "effective_from": "2001-01-01T00:00:00Z", "status": 200, "body_file": body_file})
    assert _run(folder, _log(folder)) == 2
    line = _one_line_error(capsys)
    assert f"{folder / 'robots.jsonl'}:2:" in line and expected in line


def test_a_body_file_is_read_to_the_parse_limit_plus_one_byte(tmp_path):
    from pipeline.evidence.robots_table import read_robots_table

    (tmp_path / "big.txt").write_bytes(b"User-agent: *\nDisallow: /x\n" + b"#" * (2 << 20))
    _table(tmp_path, {"host": "example.com", "effective_from": "2000-01-01T00:00:00Z", "status": 200,
                      "body_file": "big.txt"})
    [version] = read_robots_table(str(tmp_path / "robots.jsonl"))
    assert len(version.body) == 500 * 1024 + 1


@pytest.mark.slow
@pytest.mark.parametrize("link", ["host", "capture"])
def test_captures_folder_symlinks_out_are_refused(tmp_path, capsys, link):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "2026-11-02T00:00:00Z.txt").write_text("User-agent: *\nDisallow: /\n")
    captures = tmp_path / "captures"
    captures.mkdir()
    if link == "host":
        (captures / "example.com").symlink_to(outside)
    else:
        (captures / "example.com").mkdir()
        (captures / "example.com" / "2026-11-02T00:00:00Z.txt").symlink_to(outside / "2026-11-02T00:00:00Z.txt")
    assert _run(tmp_path, _log(tmp_path), robots=captures) == 2
    assert "outside" in _one_line_error(capsys)


@pytest.mark.slow
def test_a_bad_captures_timestamp_names_the_file(tmp_path, capsys):
    captures = tmp_path / "captures"
    (captures / "example.com").mkdir(parents=True)
    (captures / "example.com" / "2026-13-45T00:00:00Z.txt").write_text("User-agent: *\n")
    assert _run(tmp_path, _log(tmp_path), robots=captures) == 2
    assert "2026-13-45T00:00:00Z.txt" in _one_line_error(capsys)


@pytest.mark.slow
def test_conflicting_versions_name_the_file_and_both_rows(tmp_path, capsys):
    rows = [{"host": "example.com", "effective_from": "2001-01-01T00:00:00Z", "status": 200, "body": body}
            for body in ("User-agent: *\n", "User-agent: *\nDisallow: /\n")]
    _table(tmp_path, *rows)
    assert _run(tmp_path, _log(tmp_path)) == 2
    line = _one_line_error(capsys)
    assert f"{tmp_path / 'robots.jsonl'}:1" in line and f"{tmp_path / 'robots.jsonl'}:2" in line


def test_an_effective_from_that_leaves_the_datetime_range_names_the_row(tmp_path, capsys):
    _table(tmp_path, {"host": "example.com", "effective_from": "0001-01-01T00:00:00+01:00", "status": 404})
    assert _run(tmp_path, _log(tmp_path)) == 2
    assert f"{tmp_path / 'robots.jsonl'}:1:" in _one_line_error(capsys)


def test_a_yaml_alias_bomb_in_the_registry_is_refused(tmp_path, capsys):
    _table(tmp_path)
    # 10**9 strings once expanded; an error message that shows the value would take minutes and GBs
    levels = ["&a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"&a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, 9)]
    (tmp_path / "crawlers.yaml").write_text(
        "range_sources:\n  x-source:\n    operator: X\n    url: [" + ", ".join(levels) + "]\n"
    )
    assert _run(tmp_path, _log(tmp_path), f"--registry={tmp_path / 'crawlers.yaml'}") == 2
    assert "alias" in _one_line_error(capsys)


def test_a_folder_given_as_logs_is_refused(tmp_path, capsys):
    _table(tmp_path)
    (tmp_path / "logs").mkdir()
    assert _run(tmp_path, str(tmp_path / "logs")) == 2
    assert "folder" in _one_line_error(capsys)


def test_an_unwritable_out_is_refused_before_the_work(tmp_path, capsys):
    _table(tmp_path)
    (tmp_path / "out").write_text("a file where the output folder should be")
    assert _run(tmp_path, _log(tmp_path)) == 2
    assert "--out" in _one_line_error(capsys)


def test_a_deeply_nested_dns_snapshot_is_refused(tmp_path, capsys):
    _table(tmp_path)
    (tmp_path / "dns.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert _run(tmp_path, _log(tmp_path), f"--dns=snapshot:{tmp_path / 'dns.jsonl'}") == 2
    line = _one_line_error(capsys)
    assert "dns.jsonl:1" in line


@pytest.mark.slow
def test_broad_and_malformed_range_prefixes_are_reported_not_used(tmp_path, capsys):
    _table(tmp_path)
    folder = tmp_path / "ranges" / "google-common-crawlers"
    folder.mkdir(parents=True)
    prefixes = [{"ipv4Prefix": "0.0.0.0/0"}, {"ipv6Prefix": "::/0"}, {"ipv4Prefix": "66.0.0.0/7"},
                {"ipv4Prefix": "203.0.113.0/24"}]
    (folder / "2026-10-10.json").write_text(json.dumps({"prefixes": prefixes}))
    (folder / "2026-10-11.json").write_text("[" * 100_000)
    assert _run(tmp_path, _log(tmp_path), f"--ranges={tmp_path / 'ranges'}") == 0
    err = capsys.readouterr().err
    assert "0.0.0.0/0 is broader than /8" in err and "::/0 is broader than /19" in err
    assert "66.0.0.0/7" in err and "2026-10-11.json: unreadable JSON" in err
    [verdict] = _rows(tmp_path, "verdicts")
    assert verdict["identity"] == "spoofed"  # 66.249.66.1 is in none of the prefixes kept
    assert main(["verify", "66.249.66.1", "Googlebot", "--dns=off", f"--ranges={tmp_path / 'ranges'}",
                 "--at=2026-11-02"]) == 1
    assert "0.0.0.0/0 is broader than /8" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("--direct_num_workers=-3", "--direct_num_workers: expected a number of at least 0, got -3"),
        ("--direct_num_workers=abc", "--direct_num_workers: invalid int value: 'abc'"),
        ("--direct_running_mode=nonsense", "--direct_running_mode: invalid choice: 'nonsense'"),
        ("--no_such_flag=1", "unknown option --no_such_flag"),
        ("--runner=NoSuchRunner", "Unexpected pipeline runner: NoSuchRunner"),
    ],
)
def test_a_bad_runner_flag_is_refused_at_launch_in_one_line(tmp_path, capsys, flag, said):
    _table(tmp_path)
    (tmp_path / "a.log").write_text(_line("02/Nov/2026:00:00:00 +0000") + "\n")
    assert main([
        "run", f"--logs={tmp_path / 'a.log'}", "--log-format=host_combined", f"--robots={tmp_path / 'robots.jsonl'}",
        f"--out={tmp_path / 'out'}", flag,
    ]) == 2
    assert said in _one_line_error(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.log", "robots.jsonl", "robots.txt"]


def test_check_lint_and_whatif_read_only_a_regular_file_and_only_its_parse_limit(tmp_path, capsys):
    os.mkfifo(tmp_path / "fifo.txt")
    for argv in (["check", str(tmp_path / "fifo.txt"), "Googlebot", "/"], ["lint", "/dev/zero"],
                 ["whatif", str(tmp_path), "--host", "example.com", "--proposed", "/dev/zero"],
                 ["history", "import-file", str(tmp_path / "fifo.txt"), "--host", "example.com",
                  "--effective-from", "2026-11-01", "--into", str(tmp_path / "captures")]):
        assert main(argv) == 2
        assert "not a regular file" in _one_line_error(capsys)
    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as handle:
        handle.write(b"User-agent: *\nDisallow: /x\n")
        handle.truncate(1 << 30)  # sparse: a GiB of NULs that is never read whole
    assert main(["lint", str(huge)]) == 1
    assert "only the first 512000 bytes are parsed" in capsys.readouterr().out
