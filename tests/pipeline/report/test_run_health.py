"""The first audit of one's own logs: each mistake a new user makes first ends in a run that says
what it could not judge and the flag or command that fixes it, in the closing summary and in a
banner at the top of report.html (read in real Chromium), and `--fail-on` turns it into an exit
code."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import htmldom
from helpers import GOOGLEBOT, REPO, run_audit, write_jsonl
from browser import browse, chromium  # noqa: F401 (chromium: a fixture)

GOOGLE_IP = "66.249.66.1"  # in the sample's google-common-crawlers snapshot
FAKE_IP = "203.0.113.9"
SAMPLE_RANGES = REPO / "samples/ranges"
ROBOTS = [
    {"host": "mysite.test", "effective_from": "2026-11-10T00:00:00Z", "status": 200,
     "body": "User-agent: *\nDisallow: /private/\n"},
    {"host": "mysite.test", "effective_from": "2026-11-20T00:00:00Z", "status": 200,
     "body": "User-agent: *\nDisallow: /private/\nDisallow: /cart\n"},
]


def combined(when: datetime, path: str, ip: str, host: str | None = None) -> str:
    stamp = when.strftime("%d/%b/%Y:%H:%M:%S %z")
    line = f'{ip} - - [{stamp}] "GET {path} HTTP/1.1" 200 512 "-" "{GOOGLEBOT}"'
    return f"{host} {line}" if host else line


def write_log(folder: Path, start: datetime, host: str | None = None) -> Path:
    lines = [
        combined(start + timedelta(minutes=i), f"/private/{i}" if i % 3 == 0 else f"/page/{i}", GOOGLE_IP if i % 2 else FAKE_IP, host)
        for i in range(40)
    ]
    log = folder / "access.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def audit(tmp_path: Path, capsys, *flags: str, start: datetime | None = None, host: str | None = None,
          ranges: Path = SAMPLE_RANGES, fmt: str = "combined", expect: int = 0) -> tuple[str, Path]:
    start = start or datetime(2026, 11, 22, 8, tzinfo=timezone.utc)
    log = write_log(tmp_path, start, host)
    table = write_jsonl(tmp_path / "robots.jsonl", ROBOTS)
    out = tmp_path / "out"
    capsys.readouterr()
    status = run_audit([
        f"--logs={log}", f"--log-format={fmt}", f"--robots={table}", f"--ranges={ranges}", f"--out={out}",
        "--runner=FnApiRunner", *flags,
    ])
    said = capsys.readouterr().out
    assert status == expect, said
    return said, out


def health_section(said: str) -> str:
    return said[said.index("run health:"):]


def banner(chromium_path: str, out: Path, profile: Path) -> tuple[str, list[str]]:
    """The health banner as Chromium shows it, and the checks its items name."""
    dom_text, console = browse(chromium_path, out / "report.html", profile, "--dump-dom")
    assert console == []
    start = dom_text.index('<section id="health"')
    # the banner comes before the report's first section
    assert start < dom_text.index('<section id="overview"')
    part = dom_text[start:dom_text.index("</section>", start)]
    dom = htmldom.read(part)
    return dom.text, [attrs["data-check"] for tag, attrs in dom.elements if tag == "li"]


@pytest.mark.slow
def test_a_combined_log_without_default_host_says_so_and_names_the_flag(tmp_path, capsys, chromium):
    said, out = audit(tmp_path, capsys)
    section = health_section(said)
    assert "[no-host] 40 crawler requests carry no host" in section
    assert "fix: --default-host mysite.test" in section
    text, checks = banner(chromium, out, tmp_path / "profile")
    assert "no-host" in checks
    assert "Fix: --default-host mysite.test" in text
    # and with the flag the run is whole: the check is quiet
    (tmp_path / "fixed").mkdir()
    fixed, _ = audit(tmp_path / "fixed", capsys, "--default-host=mysite.test")
    assert "run health: every check passed" in fixed


@pytest.mark.slow
def test_a_host_the_table_does_not_have_lists_the_closest_spelling(tmp_path, capsys, chromium):
    said, out = audit(tmp_path, capsys, host="www.mysite.test", fmt="host_combined")
    section = health_section(said)
    assert "[unknown-host] 40 crawler requests went to hosts the robots table has no robots.txt for" in section
    assert "www.mysite.test: 40 requests; the table's closest: mysite.test" in section
    assert "crawl-audit history capture www.mysite.test" in section
    text, checks = banner(chromium, out, tmp_path / "profile")
    assert checks == ["unknown-host"]
    assert "www.mysite.test: 40 requests; the table's closest: mysite.test" in text


@pytest.mark.slow
def test_a_wrong_log_format_names_the_format_that_reads_the_lines(tmp_path, capsys, chromium):
    said, out = audit(tmp_path, capsys, fmt="common")
    section = health_section(said)
    assert "[dead-letters] 40 of 40 lines (100%) could not be read as --log-format common" in section
    assert "fix: --log-format combined" in section
    text, checks = banner(chromium, out, tmp_path / "profile")
    assert checks == ["dead-letters"]
    assert "Fix: --log-format combined" in text


@pytest.mark.slow
def test_requests_before_the_first_robots_version_say_the_table_is_too_young(tmp_path, capsys, chromium):
    said, out = audit(tmp_path, capsys, "--default-host=mysite.test", start=datetime(2026, 11, 5, 8, tzinfo=timezone.utc))
    section = health_section(said)
    assert "[before-history] 40 crawler requests are older than the first robots.txt version" in section
    assert "mysite.test: 40 requests on 2026-11-05; its first version took effect 2026-11-10 00:00 UTC" in section
    assert "crawl-audit history import-wayback" in section
    text, checks = banner(chromium, out, tmp_path / "profile")
    assert checks == ["before-history"]


@pytest.mark.slow
def test_no_range_snapshot_and_dns_off_says_update_ranges_or_dns_live(tmp_path, capsys, chromium):
    empty = tmp_path / "ranges"
    empty.mkdir()
    said, out = audit(tmp_path, capsys, "--default-host=mysite.test", ranges=empty)
    section = health_section(said)
    assert "[ranges] 40 crawler requests could be neither verified nor proven spoofed" in section
    assert "Googlebot 40" in section
    assert "fix: crawl-audit update-ranges" in section and "--dns live" in section
    text, checks = banner(chromium, out, tmp_path / "profile")
    assert checks == ["ranges"]
    assert "crawl-audit update-ranges" in text and "--dns live" in text


@pytest.mark.slow
def test_fail_on_turns_a_chosen_check_into_an_exit_code(tmp_path, capsys):
    said, _ = audit(tmp_path, capsys, "--fail-on=no-host", expect=1)
    assert "[no-host]" in said
    assert "run health: failing on no-host" in said


@pytest.mark.slow
def test_fail_on_ignores_a_check_that_found_nothing(tmp_path, capsys):
    said, _ = audit(tmp_path, capsys, "--default-host=mysite.test", "--fail-on=no-host,dead-letters")
    assert "run health: every check passed" in said


@pytest.mark.slow
def test_fail_on_any_fails_for_every_check(tmp_path, capsys):
    audit(tmp_path, capsys, "--fail-on=any", fmt="common", expect=1)


def test_fail_on_an_unknown_check_is_refused_before_work(tmp_path, capsys):
    log = write_log(tmp_path, datetime(2026, 11, 22, tzinfo=timezone.utc))
    table = write_jsonl(tmp_path / "robots.jsonl", ROBOTS)
    status = run_audit([f"--logs={log}", f"--robots={table}", f"--out={tmp_path / 'out'}", "--fail-on=hosts"])
    assert status == 2
    err = capsys.readouterr().err
    assert "--fail-on" in err and "no-host" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()



@pytest.mark.slow
def test_a_stream_says_at_launch_what_it_will_not_be_able_to_judge(tmp_path, capsys):
    """A stream has no closing summary: building one says which crawlers have a range source
    without a snapshot within the window of today, with DNS off, and a --default-host the robots table lacks."""
    from helpers import stream_graph

    table = write_jsonl(tmp_path / "robots.jsonl", ROBOTS)
    (tmp_path / "logs").mkdir()
    empty = tmp_path / "ranges"
    empty.mkdir()
    capsys.readouterr()
    stream_graph([
        "--streaming", f"--logs={tmp_path / 'logs'}/*.log", f"--robots={table}", f"--ranges={empty}",
        f"--out={tmp_path / 'out'}", "--robots-refresh=0", "--log-format=combined", "--default-host=www.mysite.test",
    ])
    said = capsys.readouterr().err
    assert "crawl-audit: run health: [ranges] no range snapshot within the window of today for" in said
    assert "Googlebot" in said and "fix: crawl-audit update-ranges (then restart) or --dns live" in said
    assert "crawl-audit: run health: [unknown-host] --default-host www.mysite.test has no robots.txt in the table" in said
    assert "fix: --default-host mysite.test" in said


@pytest.mark.slow
def test_a_range_file_past_the_bounds_is_skipped_and_named_in_run_health(tmp_path, capsys):
    import shutil

    ranges = tmp_path / "ranges"
    shutil.copytree(SAMPLE_RANGES, ranges)
    bad = ranges / "bingbot" / "2026-11-21.json"
    bad.parent.mkdir(exist_ok=True)
    bad.write_bytes(b'{"prefixes": [{"ipv4Prefix": "192.0.2.0/24"}], "n": ' + b"9" * 5000 + b"}")
    said, out = audit(tmp_path, capsys, "--default-host=mysite.test", ranges=ranges)
    health = health_section(said)
    assert "[ranges]" in health and "2026-11-21.json: unreadable JSON (an integer of 5,000 digits" in health
    assert json.loads((out / "manifest.json").read_text())["inputs"]["range_problems"]
