"""The fast paths change nothing: skimming non-crawler lines, and verdicts travelling through the
graph a batch at a time, give the tables the straightforward path gives.

The straightforward path here: every line parsed and audited in full (`LineAuditor(skim=False)`),
then the crawl-delay rule, the counts and the summary computed in plain Python, one verdict at a
time, with the domain functions (`matcher.crawl_delay`), and compared with what `crawl-audit run`
wrote.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import pickle
import random
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matcher import crawl_delay, records
from matcher.robots_fetches import FetchHistory
from matcher.health import identity_note
from matcher.clientip import trusted_proxies
from pipeline.graph import build as graph
from pipeline.local import workers as local_workers
from pipeline.tables import reading as tables
from matcher.line_auditor import DEAD_LETTER, NOT_REQUEST, VERDICT, LineAuditor, RobotsByHost, robots_by_host
from pipeline.graph.read_logs import LINES_PER_BATCH
from pipeline.evidence.robots_table import read_robots_table
from matcher.summary import decision_counts, summary_key, summary_row
from helpers import REPO, run_audit, run_settings

SAMPLES = REPO / "samples"
ROBOTS = str(SAMPLES / "robots" / "history.jsonl")
RANGES = str(SAMPLES / "ranges")

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"
BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
USER_AGENTS = (
    GOOGLEBOT, BINGBOT, GPTBOT, BROWSER, BROWSER, BROWSER,
    "curl/8.5.0", "python-requests/2.32.3", "FooBot/1.0 (+http://foo.example/bot)", "MJ12bot/v1.4.8",
    "Mozilla/4.0 (compatible; U; NetPositive/2.2.1)", "Baiduspider+(+http://www.baidu.com/search/spider.htm)",
    "-", "", "21", "default", "x7k2qpd", r"\"ExampleTool 2.0\"",  # no name, then a name in quotes
    r"Mozilla/5.0 \"quoted\" (compatible; Googlebot/2.1)", r"Googlebot\x2F2.1", "Mozilla/5.0 (Linux; CUBOT_P20)",
)
ADDRESSES = (
    "66.249.66.1", "66.249.66.40", "157.55.39.75", "207.46.13.51", "20.171.206.9", "160.79.104.10",
    "192.0.2.10", "198.51.100.7", "203.0.113.9", "100.64.3.4", "2001:db8::1", "::ffff:66.249.66.1",
    "10.0.0.2", "unknown", "-",
)
HOSTS = ("www.example.com", "shop.example.net", "www.example.com:443", "WWW.EXAMPLE.COM", "other.example.org", "-")
TIMES = (
    "02/Nov/2026:01:04:17 +0100", "02/Nov/2026:23:59:59 -0100", "03/Nov/2026:11:00:01 +0100",
    "04/Nov/2026:00:30:00 +0000", "32/Nov/2026:01:00:00 +0100", "02/Foo/2026:01:00:00 +0100",
    "31/Dec/9999:23:59:59 -2300", "02/Nov/2026:25:00:00 +0100",
)
REQUESTS = (
    "GET / HTTP/1.1", "GET /docs/ HTTP/1.1", "GET /private/report.pdf HTTP/1.1", "GET /cart?id=7 HTTP/2.0",
    "HEAD /robots.txt HTTP/1.1", "GET http://www.example.com/private/x HTTP/1.1", "CONNECT www.uci.edu:443 HTTP/1.1",
    "-", "garbage", r"GET /a\"b HTTP/1.1", "GET /%7Euser/%2A HTTP/1.1", "GET /?utm_source=chatgpt.com HTTP/1.1",
)
# Visits some operator's service referred, and others
REFERERS = ("-", "https://www.example.com/", "https://www.google.co.uk/", "https://chatgpt.com/c/1", "https://bing.example/")


def _line(draw_one, *, host: bool, shape: str = "combined") -> str:
    """A combined line, or one of the layouts built on it (`shape`: gandi, ovh, icecast2)."""
    ident = draw_one(HOSTS) if shape == "ovh" else "-"
    duration = f"({draw_one(('0', '12'))} s) " if shape == "gandi" else ""
    fields = [
        f'{draw_one(ADDRESSES)} {ident} - [{draw_one(TIMES)}] {duration}"{draw_one(REQUESTS)}"'
        f' {draw_one(("200", "404", "-", "2000"))}'
        f' {draw_one(("512", "0", "-"))} "{draw_one(REFERERS)}" "{draw_one(USER_AGENTS)}"'
    ]
    if host or shape == "gandi":
        fields.insert(0, draw_one(HOSTS))
    text = " ".join(fields)
    if shape == "icecast2":
        text += f" {draw_one(('0', '3600'))}"
    elif draw_one((False, False, False, True)):
        text += f' "{draw_one(("10.0.0.9", "66.249.66.1, 10.0.0.9", "-"))}"'  # X-Forwarded-For
    return draw_one(("", "", "", " ", "\ufeff")) + text + draw_one(("", "", "", "\r", "  "))


def _auditor(log_format: str, *, proxies: bool = False, skim: bool = True) -> LineAuditor:
    auditor = graph.line_auditor(run_settings(_argv("unused", "unused", log_format))[0])
    if proxies:
        auditor = dataclasses.replace(auditor, proxies=trusted_proxies(["10.0.0.0/8"]))
    return dataclasses.replace(auditor, skim=skim)


def _argv(logs: str, out: str, log_format: str = "host_combined") -> list[str]:
    return [
        f"--logs={logs}", f"--log-format={log_format}", f"--robots={ROBOTS}", f"--ranges={RANGES}",
        f"--out={out}", "--runner=FnApiRunner",
    ]


FORMATS = (
    "host_combined", "vhost_combined", "vhost_common", "combined", "common", "combined_xrt", "gandi", "ovh", "icecast2",
    "varnishncsa",
)
ROBOTS_BY_HOST = robots_by_host(read_robots_table(ROBOTS))
AUDITORS = {
    (log_format, proxies): (_auditor(log_format, proxies=proxies), _auditor(log_format, proxies=proxies, skim=False))
    for log_format in FORMATS
    for proxies in (False, True)
}


def test_the_robots_table_travels_whole_and_compressed():
    # Beam pickles the table into the graph several times over; its bodies travel compressed.
    copy = pickle.loads(pickle.dumps(ROBOTS_BY_HOST))
    assert type(copy) is RobotsByHost and copy == ROBOTS_BY_HOST
    assert len(pickle.dumps(ROBOTS_BY_HOST)) < len(pickle.dumps(dict(ROBOTS_BY_HOST))) / 2
    # Compressed once: every later pickle carries the very same bytes object.
    assert ROBOTS_BY_HOST.__reduce__()[1][0] is ROBOTS_BY_HOST.__reduce__()[1][0]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    log_format=st.sampled_from(FORMATS),
    proxies=st.booleans(),
    lines=st.lists(
        st.one_of(
            st.builds(lambda seed, host, shape: _line(random.Random(seed).choice, host=host, shape=shape),
                      st.integers(), st.booleans(), st.sampled_from(("combined", "gandi", "ovh", "icecast2"))),
            st.text(max_size=120),
        ),
        max_size=20,
    ),
)
def test_skimming_decides_every_line_as_the_full_audit_does(log_format, proxies, lines):
    skimming, full = AUDITORS[log_format, proxies]
    assert list(skimming.audit_lines("log", 1, lines, ROBOTS_BY_HOST)) == list(
        full.audit_lines("log", 1, lines, ROBOTS_BY_HOST)
    )


def _generated_logs(folder: Path, lines_per_file: int = 2500, files: int = 3) -> str:
    """Log files of random lines (crawlers in and out of their ranges, browsers, tools, bots,
    lines that do not parse); the same seed writes the same files."""
    pick = random.Random(20261130).choice
    folder.mkdir()
    for number in range(files):
        lines = [_line(pick, host=True) for _ in range(lines_per_file)]
        with gzip.open(folder / f"web-{number}.log.gz", "wt", encoding="utf-8", newline="") as handle:
            handle.write("\n".join(lines) + "\n")
    return str(folder / "*.log.gz")


def _straightforward(logs: str) -> dict[str, list]:
    """Every table `crawl-audit run` writes that depends on the lines, one verdict at a time."""
    settings = run_settings(_argv(logs, "unused"))[0]
    auditor = dataclasses.replace(graph.line_auditor(settings), skim=False)
    verdicts, dead_letters, counts, not_requests = [], [], Counter(lines=0, skipped=0), Counter()
    files = {}
    for path in sorted(Path(logs).parent.glob(Path(logs).name)):
        with gzip.open(path, "rt", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            files[path] = handle.read().splitlines()
    # Every robots.txt fetch first, as the run reads them before the audit.
    found = defaultdict(list)
    for path, lines in files.items():
        for first in range(0, len(lines), LINES_PER_BATCH):
            for key, fetch in auditor.robots_fetches((str(path), first + 1, lines[first : first + LINES_PER_BATCH])):
                found[key].append(fetch)
    fetches = {key: FetchHistory(of_key) for key, of_key in found.items()}
    for path, lines in files.items():
        for first in range(0, len(lines), LINES_PER_BATCH):
            batch = lines[first : first + LINES_PER_BATCH]
            counts["lines"] += len(batch)
            for kind, record in auditor.audit_lines(str(path), first + 1, batch, ROBOTS_BY_HOST, None, fetches):
                if kind == VERDICT:
                    verdicts.append(record)
                elif kind == DEAD_LETTER:
                    dead_letters.append(record)
                elif kind == NOT_REQUEST:
                    not_requests[record] += 1
                else:
                    counts["skipped"] += 1
    by_key = defaultdict(list)
    for verdict in verdicts:
        by_key[crawl_delay.key_of(verdict)].append(crawl_delay.request_of(verdict))
    violations, windows = [], []
    for key, requests in by_key.items():
        key_violations, key_windows = crawl_delay.rows(key, None, crawl_delay.in_order(requests), settings.crawl_delay.window)
        violations += key_violations
        windows += key_windows
    decisions, sizes = defaultdict(Counter), defaultdict(list)
    for verdict in verdicts:
        decisions[summary_key(verdict)].update(decision_counts(verdict))
        if verdict["bytes"] is not None:
            sizes[summary_key(verdict)].append(verdict["bytes"])
    counts.update(verdicts=len(verdicts), dead_letters=len(dead_letters), not_requests=sum(not_requests.values()))
    counts = {**counts, "not_request_reasons": dict(sorted(not_requests.items()))}
    return {
        records.VERDICTS_TABLE: _json_rows(verdicts, records.VERDICTS),
        records.DEAD_LETTERS_TABLE: _json_rows(dead_letters, records.DEAD_LETTERS),
        records.VIOLATIONS_TABLE: _json_rows(violations, records.CRAWL_DELAY_VIOLATIONS),
        records.WINDOWS_TABLE: _json_rows(windows, records.CRAWL_DELAY_WINDOWS),
        records.SUMMARY_TABLE: _json_rows(
            [{**summary_row(key, n), "bytes": sum(sizes[key]) if sizes[key] else None} for key, n in decisions.items()],
            records.SUMMARY,
        ),
        records.COUNTS_TABLE: [dict(counts)],
    }


def _json_rows(rows: list[dict], columns) -> list:
    encoded = (json.dumps(records.to_json_ready(row, columns), ensure_ascii=False, sort_keys=True) for row in rows)
    return sorted(encoded)


def _written(out: Path) -> dict[str, list]:
    written = {
        table: sorted(json.dumps(row, ensure_ascii=False, sort_keys=True) for row in tables.rows(str(out), table))
        for table in (
            records.VERDICTS_TABLE, records.DEAD_LETTERS_TABLE, records.VIOLATIONS_TABLE,
            records.WINDOWS_TABLE, records.SUMMARY_TABLE,
        )
    }
    written[records.COUNTS_TABLE] = [json.loads((out / "counts.json").read_text())]
    return written


@pytest.mark.slow
@pytest.mark.parametrize("source, workers", [("sample", 1), ("generated", 1), ("generated", 2)])
def test_the_run_writes_what_the_straightforward_path_computes(tmp_path, monkeypatch, capsys, source, workers):
    logs = str(SAMPLES / "logs" / "*.log.gz") if source == "sample" else _generated_logs(tmp_path / "logs")
    expected = _straightforward(logs)
    if workers > 1:  # as a large input would: the files read and audited in worker processes
        monkeypatch.setattr(local_workers, "PARALLEL_FROM_BYTES", 0)
        monkeypatch.setattr(local_workers.os, "cpu_count", lambda: workers)
    assert run_audit([*_argv(logs, str(tmp_path / "out")), "--local-speedups=on"]) == 0
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["options"]["worker_processes"] == workers
    written = _written(tmp_path / "out")
    assert expected[records.VERDICTS_TABLE] and expected[records.DEAD_LETTERS_TABLE]
    assert expected[records.VIOLATIONS_TABLE] and expected[records.WINDOWS_TABLE]
    for table, rows in expected.items():
        assert written[table] == rows, table


def _report_counts_one_by_one(out: Path) -> dict[str, Counter]:
    """What the report counts, from the verdict rows the run wrote, one row at a time."""
    sections = (
        "hosts", "timeline", "disallowed", "spoofed_addresses", "spoofed_user_agents", "automated_disallowed", "llms_txt",
        "conflicts", "unjudged", "identity_notes", "disallowed_timeline", "disallowed_answers", "verified_by_operator",
    )
    counts = {name: Counter() for name in sections}
    for row in tables.rows(str(out), records.VERDICTS_TABLE):
        crawler = row["crawler"] if row["crawler"] is not None else row["operator"]
        crawler = "(none)" if crawler is None else crawler
        hour = datetime.fromisoformat(row["ts"]).astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)
        if row["path"].split("?")[0] in ("/llms.txt", "/llms-full.txt"):
            counts["llms_txt"][crawler, row["identity"], row["path"].split("?")[0]] += 1
        for conflict in row["preference_conflicts"]:
            version = row["robots_version"] or {"effective_from": None}
            counts["conflicts"][crawler, row["identity"], conflict, row["host"], row["path"], version["effective_from"]] += 1
        disallowed = None
        if row["decision"].startswith("disallowed"):
            version = row["robots_version"] or {"effective_from": None, "status": None}
            disallowed = (
                crawler, row["identity"], row["host"], row["path"], row["decision"], row["reason"], row["rule_kind"],
                row["rule_pattern"], row["rule_line"], version["effective_from"], version["status"],
            )
        if row["client_kind"] == "automated":
            if disallowed:
                counts["automated_disallowed"][disallowed] += 1
            continue
        counts["hosts"][(row["host"],)] += 1
        hour_text = hour.replace(tzinfo=None).isoformat() + "Z"
        counts["timeline"][crawler, hour_text] += 1
        if row["identity"] == "verified" and row["operator"] is not None:
            counts["verified_by_operator"][(row["operator"],)] += 1
        if disallowed:
            counts["disallowed"][disallowed] += 1
            counts["disallowed_timeline"][crawler, hour_text] += 1
            status = row["status"]
            if status in (401, 403, 451, 429):
                answered = str(status)
            elif status is not None and 200 <= status < 300:
                answered = "served"
            elif status is not None and 400 <= status < 500:
                answered = "other-4xx"
            elif status is not None and 100 <= status < 600:
                answered = f"{status // 100}xx"
            else:
                answered = "none" if status is None else "other"
            counts["disallowed_answers"][crawler, row["identity"], answered] += 1
        elif row["decision"] == "unknown":
            counts["unjudged"][row["reason"], row["host"], hour.date().isoformat()] += 1
        note = identity_note(row["identity"], row["identity_method"], row["identity_evidence"])
        if note is not None:
            counts["identity_notes"][crawler, note, hour.date().isoformat()] += 1
        if row["identity"] == "spoofed":
            counts["spoofed_addresses"][crawler, row["client_ip"]] += 1
            counts["spoofed_user_agents"][crawler, row["user_agent"]] += 1
    return counts


def _as_shown(every_disallowed: Counter) -> tuple[Counter, Counter]:
    """Of every disallowed row, what the report shows: per crawler and identity its ten most
    requested rows (ties by path, then the other fields, nulls first), and its requests and
    distinct rows."""
    top, totals = Counter(), Counter()
    for crawler, identity in {key[:2] for key in every_disallowed}:
        rows = [(key, n) for key, n in every_disallowed.items() if key[:2] == (crawler, identity)]
        rows.sort(key=lambda row: (-row[1], row[0][3], [(v is not None, v) for v in row[0][2:]]))
        top.update(dict(rows[:10]))
        totals[crawler, identity, sum(n for _, n in rows), len(rows)] = 1
    return top, totals


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_the_report_counts_of_a_run_are_its_verdicts_counted_one_by_one(tmp_path, monkeypatch, capsys, workers):
    logs = _generated_logs(tmp_path / "logs")
    if workers > 1:  # partial counts made in two processes, added up in one
        monkeypatch.setattr(local_workers, "PARALLEL_FROM_BYTES", 0)
        monkeypatch.setattr(local_workers.os, "cpu_count", lambda: workers)
    assert run_audit([*_argv(logs, str(tmp_path / "out")), "--local-speedups=on"]) == 0
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["options"]["worker_processes"] == workers
    expected = _report_counts_one_by_one(tmp_path / "out")
    document = json.loads((tmp_path / "out" / "report_counts.json").read_text("utf-8"))
    totals = Counter({tuple(row): 1 for row in document.pop("disallowed_totals")})
    written = {name: Counter({tuple(key): n for *key, n in rows}) for name, rows in document.items()}
    every_disallowed = expected["disallowed"]
    expected["disallowed"], expected_totals = _as_shown(every_disallowed)
    assert written == expected and totals == expected_totals
    # The generated log holds what each count is about.
    labels, hours = map(set, zip(*expected["timeline"]))
    assert {"Googlebot", "bingbot", "Google", "Microsoft"} <= labels  # claimed, and undeclared named by operator
    assert "2026-11-03T00:00:00Z" in hours  # 02/Nov/2026:23:59:59 -0100, past midnight in UTC
    assert len(every_disallowed) > 10 and len(expected["spoofed_addresses"]) > 10
    assert expected["automated_disallowed"]  # the generated log's tools walk disallowed paths too
