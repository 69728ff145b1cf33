"""Text from logs and robots.txt files reaches the terminal escaped, and the closing report stays
short and quick however many crawler names the logs invent."""
from __future__ import annotations

import json
import re
import time

from hypothesis import given, strategies as st

from pipeline.report import text as report
from pipeline.cli.main import main
from matcher.printable import printable, printable_json
from helpers import crawl_audit

HOSTILE = "evil\x1b]0;owned\x07\x1b[2J\x9b31m\x7f\u202e\ud800\n\r\tend"


def _clean(text: str) -> bool:
    return all(char.isprintable() or char in " \n" for char in text)


def test_control_bytes_are_written_as_escapes():
    assert printable(HOSTILE) == "evil\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\x7f\\u202e\\ud800\\x0a\\x0d\\x09end"
    assert printable("caf\u00e9 /a b") == "caf\u00e9 /a b"


@given(st.text())
def test_printable_leaves_nothing_a_terminal_acts_on(text):
    shown = printable(text)
    assert all(char.isprintable() or char == " " for char in shown)
    shown.encode("utf-8")  # not even a lone surrogate is left


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
))
def test_printable_json_is_the_same_value_on_one_safe_line(value):
    shown = printable_json(value)
    assert json.loads(shown) == value
    assert all(char.isprintable() or char == " " for char in shown)


def _summary_row(crawler: str, requests: int, identity: str = "unverifiable") -> dict:
    return {"crawler": crawler, "identity": identity, "requests": requests, "allowed": requests,
            "disallowed": 0, "within_grace": 0, "between_captures": 0, "unknown": 0}


def test_forty_thousand_crawler_names_render_in_seconds_and_capped():
    rows = [_summary_row(f"zz{n}bot", 1 + n % 7) for n in range(40_000)]
    rows += [_summary_row("Googlebot", 500, "verified"), _summary_row("Googlebot", 20, "spoofed")]
    windows = [
        {"crawler": f"zz{n}bot", "operator": None, "identity": "unverifiable", "host": "example.com",
         "crawl_delay_s": 5.0, "requests": 3, "violations": 1 + n % 3, "min_gap_s": 1.0, "honours_crawl_delay": None}
        for n in range(40_000)
    ]
    # Linear in the rows: about a second of CPU. A cost per pair of rows would take hours; the
    # bound sits far from both, and counts this process's CPU, not a busy machine's clock.
    started = time.process_time()
    text = report.render(report.RunSummary({"lines": 10, "verdicts": 10}, rows, windows))
    elapsed = time.process_time() - started
    assert elapsed < 60, f"{elapsed:.1f} CPU s"
    lines = text.splitlines()
    assert len(lines) < 80
    table = lines[lines.index(next(line for line in lines if line.startswith("crawler"))):]
    assert table[1].split()[:3] == ["Googlebot", "verified", "500"]
    # The spoofed Googlebot is a claim apart, never a row of the crawlers.
    assert "  claimed Googlebot, not proven: 20 (spoofed 20), 0 disallowed of any kind" in lines
    more = next(line for line in lines if line.startswith("(39,976 more crawlers)"))
    shown = sum(int(re.split(r"\s{2,}", line)[2].replace(",", "")) for line in table[1:26])
    total = sum(row["requests"] for row in rows) - 20
    assert int(more.split()[4].replace(",", "")) == total - shown
    rest = next(line for line in lines if line.strip().startswith("(39,975 more)"))
    assert int(rest.split()[-2].replace(",", "")) == sum(w["violations"] for w in windows) - 25 * 3


def test_the_report_prints_log_text_escaped():
    rows = [_summary_row(HOSTILE, 3)]
    windows = [{"crawler": HOSTILE, "operator": None, "identity": "unverifiable", "host": "ex\x1bample.com",
                "crawl_delay_s": 5.0, "requests": 3, "violations": 1, "min_gap_s": 1.0, "honours_crawl_delay": None}]
    findings = [{"finding": "noindex-unseen", "host": "example.com", "path": "/a\x1b[31mb\x07", "crawler": HOSTILE,
                 "requests": 2}]
    text = report.render(report.RunSummary({"lines": 3, "verdicts": 3}, rows, windows, findings))
    assert _clean(text)
    assert "evil\\x1b]0;owned\\x07" in text and "/a\\x1b[31mb\\x07" in text and "ex\\x1bample.com" in text


def test_check_and_lint_print_robots_text_escaped(tmp_path, capsys):
    robots = tmp_path / "robots.txt"
    robots.write_bytes(b"User-agent: zzbot\x1b[2J\x07\nDisallow: /a\x1b\nBogus\x1b]0;x\x07: 1\n")
    assert main(["check", str(robots), "zzbot", "/a\x1b\x9b"]) == 1
    explained = capsys.readouterr().out
    assert main(["check", "--json", str(robots), "zzbot", "/a\x1b\x9b"]) == 1
    as_json = capsys.readouterr().out
    assert main(["lint", str(robots)]) == 1
    linted = capsys.readouterr().out
    assert _clean(explained + as_json + linted)
    assert "group:  User-agent: zzbot\\x1b[2J\\x07 (line 1)" in explained  # as written, escaped
    assert "Disallow: /a\\x1b (line 2)" in explained
    assert json.loads(as_json)["url"] == "/a\x1b\x9b"
    assert "'zzbot\\x1b[2J\\x07'" in linted and "bogus\\x1b]0;x\\x07" in linted.lower()


def test_verify_prints_dns_names_and_the_user_agent_escaped(tmp_path, capsys):
    """A PTR name is whatever the owner of the address's reverse zone publishes."""
    hostile = "crawl\x1b]0;owned\x07.googlebot.com"
    snapshot = tmp_path / "dns.jsonl"
    snapshot.write_text(json.dumps({"ip": "66.249.66.1", "ptr": [hostile + "."], "forward": {hostile: ["66.249.66.1"]}}))
    user_agent = "Mozilla/5.0 (compatible; Googlebot/2.1) \x1b[31m\x7f\x9b"
    dns = ["--dns", f"snapshot:{snapshot}"]
    assert crawl_audit(["verify", "66.249.66.1", user_agent, *dns]) == 0
    described = capsys.readouterr().out
    assert crawl_audit(["verify", "66.249.66.1", user_agent, "--json", *dns]) == 0
    as_json = capsys.readouterr().out
    assert _clean(described + as_json)
    assert "evidence: PTR crawl\\x1b]0;owned\\x07.googlebot.com -> A 66.249.66.1" in described
    verdict = json.loads(as_json)
    assert (verdict["user_agent"], verdict["evidence"]) == (user_agent, f"PTR {hostile} -> A 66.249.66.1")
