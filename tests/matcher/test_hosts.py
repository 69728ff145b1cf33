"""One host form: however a log or a table spells a host, it is one robots history, one
crawl-delay sequence and one `verdicts.host`."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from helpers import BINGBOT, log_line, read_jsonl, run_audit, write_jsonl, write_range_snapshot
from matcher.history import RobotsVersion
from matcher.hosts import host_key

SPELLINGS = ("www.example.com", "www.example.com.", "WWW.Example.COM", "www.example.com:443", "WWW.EXAMPLE.COM.:80")


@pytest.mark.parametrize("spelling", SPELLINGS + (" www.example.com ",))
def test_every_spelling_of_a_name_is_one_host(spelling):
    assert host_key(spelling) == "www.example.com"


@pytest.mark.parametrize(
    ("spelling", "form"),
    [
        ("[::1]:8080", "[::1]"),
        ("[::1]", "[::1]"),
        ("::1", "[::1]"),
        ("[2001:DB8:0:0::1]:443", "[2001:db8::1]"),
        ("2001:db8::1", "[2001:db8::1]"),
        ("[not-an-address]", "[not-an-address]"),
        ("192.0.2.1:8080", "192.0.2.1"),
        ("example.com:", "example.com"),
        ("example.com:https", "example.com:https"),  # not a port: kept, never mistaken for the name
        (".", ""),
        ("", ""),
    ],
)
def test_addresses_ports_and_leftovers(spelling, form):
    assert host_key(spelling) == form


def test_the_form_is_idempotent():
    for spelling in SPELLINGS + ("[2001:DB8::1]:1", "::FFFF:192.0.2.1", "Bücher.Example."):
        assert host_key(host_key(spelling)) == host_key(spelling)


_LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)


@given(
    labels=st.lists(_LABEL, min_size=1, max_size=4),
    upper=st.lists(st.booleans(), min_size=60, max_size=60),
    dot=st.booleans(),
    port=st.none() | st.integers(0, 65535),
)
def test_case_root_dot_and_port_never_split_a_name(labels, upper, dot, port):
    name = ".".join(labels)
    spelled = "".join(c.upper() if flip else c for c, flip in zip(name, upper + [False] * len(name)))
    spelled += "." if dot else ""
    spelled += "" if port is None else f":{port}"
    assert host_key(spelled) == name


def test_a_table_row_keeps_the_one_form():
    from datetime import datetime, timezone

    version = RobotsVersion("WWW.Example.COM.:443", datetime(2026, 11, 1, tzinfo=timezone.utc), 404)
    assert version.host == "www.example.com"


def _log_line(host: str, second: int, path: str) -> str:
    return log_line(host, f"02/Nov/2026:10:00:{second:02d} +0000", path, BINGBOT, size=5)


@pytest.mark.slow
def test_one_host_through_a_whole_run(tmp_path: Path, capsys):
    """Five spellings in the log, two others in the tables: one sequence, one history, one page row."""
    lines = [_log_line(host, second, "/doc") for second, host in enumerate(SPELLINGS)]
    lines.append(_log_line("www.example.com.", 9, "/private/x"))
    (tmp_path / "access.log").write_text("\n".join(lines) + "\n")
    robots = {"host": "WWW.Example.COM.", "effective_from": "2026-11-01T00:00:00Z", "status": 200,
              "body": "User-agent: bingbot\nCrawl-delay: 2\nDisallow: /private/\n"}
    write_jsonl(tmp_path / "robots.jsonl", [robots])
    pages = {"host": "www.example.com:443", "path": "/doc", "effective_from": "2026-11-01T00:00:00Z",
             "x_robots_tag": ["noindex"]}
    write_jsonl(tmp_path / "pages.jsonl", [pages])
    write_range_snapshot(tmp_path / "ranges", "bingbot", "2026-10-30", "157.55.39.0/24")
    out = tmp_path / "out"
    assert run_audit([
        f"--logs={tmp_path / 'access.log'}", "--log-format=host_combined", f"--robots={tmp_path / 'robots.jsonl'}",
        f"--page-directives={tmp_path / 'pages.jsonl'}", f"--ranges={tmp_path / 'ranges'}", f"--out={out}",
        "--runner=FnApiRunner",
    ]) == 0
    verdicts = sorted(read_jsonl(out / "verdicts"), key=lambda v: v["ts"])
    assert [v["host"] for v in verdicts] == ["www.example.com"] * 6
    assert [v["decision"] for v in verdicts] == ["allowed"] * 5 + ["disallowed"]
    assert {v["crawl_delay"] for v in verdicts} == {2.0}
    assert [v["indexing"] for v in verdicts[:5]] == [{"noindex": True}] * 5
    # one sequence: each of the five requests a second after the previous one breaks the 2 s delay
    violations = sorted(read_jsonl(out / "crawl_delay_violations"), key=lambda v: v["ts"])
    assert [(v["host"], v["gap_s"]) for v in violations] == [("www.example.com", 1.0)] * 4
    windows = read_jsonl(out / "crawl_delay_windows")
    assert [(w["host"], w["requests"], w["violations"]) for w in windows] == [("www.example.com", 6, 4)]



@pytest.mark.parametrize("spelling", ["bücher.example", "BÜCHER.Example.", "xn--bcher-kva.example", "XN--BCHER-KVA.example:8080"])
def test_an_idn_is_one_host_in_its_a_labels(spelling):
    assert host_key(spelling) == "xn--bcher-kva.example"


def test_a_name_idna_refuses_is_kept_as_written_and_matches_only_itself():
    assert host_key("a\u200d.example") == "a\u200d.example"  # a joiner outside its context
    assert host_key("a\u200d.example") != host_key("a.example")
