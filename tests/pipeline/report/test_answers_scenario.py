"""What the server answered and sent, and what readers the operators sent back, audited end to
end: `crawl-audit run` once on a site whose robots.txt starts disallowing /new, where GPTBot is
served /new before the change and refused 403 after it, ClaudeBot is served a disallowed
/private, bingbot is refused 451 and 429, and a spoofed Googlebot is refused 401; browsers arrive
from ChatGPT, Google, Perplexity and Claude by Referer and by utm_source, and an automated client
and undeclared OpenAI traffic carry such a Referer too. The verdicts, the summary, the served and
referrals tables, the closing summary and report.html (as run and as `report` rebuilds it) are
read back row by row. On another host a crawler keeps hammering after a 503 and after a 429
that asked it to wait, and another waits after a 429, with and without Retry-After. The same
scenario written as Parquet gives the same served, referrals and backoff rows."""
from __future__ import annotations

import contextlib
import io
import re
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import htmldom
from helpers import BINGBOT, BINGBOT_IP, GOOGLEBOT, REPO, crawl_audit, log_line, read_jsonl, run_audit, write_jsonl
from matcher import records
from pipeline.tables import reading as tables
from pipeline.tables.run_folder import read_manifest

HOST = "www.example.com"
T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)
BEFORE = "User-agent: *\nDisallow: /private\n"
AFTER = "User-agent: *\nDisallow: /private\nDisallow: /new\n"
CLAUDEBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
CLAUDEBOT_IP = "216.73.216.10"
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
GPTBOT_IP = "20.171.206.5"
ELSEWHERE = "203.0.113.9"  # in no crawler's range: a Googlebot from here is spoofed
OTHER_HOST = "other.example.com"
BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
READER = "198.51.100.20"


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


# (hours, path, agent, address, status, size as logged)
REQUESTS = [
    (1, "/robots.txt", GPTBOT, GPTBOT_IP, 200, "40"),
    (2, "/new", GPTBOT, GPTBOT_IP, 200, "1000"),  # allowed then, and served
    (10.5, "/robots.txt", GPTBOT, GPTBOT_IP, 200, "60"),  # re-reads the change
    (12, "/new", GPTBOT, GPTBOT_IP, 403, "-"),  # disallowed now, and refused at the edge
    (13, "/new", GPTBOT, GPTBOT_IP, 403, "150"),
    (3, "/private/a", CLAUDEBOT, CLAUDEBOT_IP, 200, "2048"),  # disallowed, still served
    (4, "/private/b", BINGBOT, BINGBOT_IP, 451, "300"),
    (5, "/private/c", BINGBOT, BINGBOT_IP, 429, "-"),
    (6, "/private/d", GOOGLEBOT, ELSEWHERE, 401, "20"),  # a claim not proven: not Googlebot's own
]


# (hours, host, path, referer, agent, address): visits, and requests that are not visits
VISITS = [
    (14, HOST, "/", "https://chatgpt.com/", BROWSER, READER),
    (14.1, HOST, "/a", "https://www.chatgpt.com/c/abc?x=1", BROWSER, READER),  # www. removed
    (15, HOST, "/b?utm_source=ChatGPT.com", "-", BROWSER, READER),  # case aside
    (15.2, HOST, "/c?utm_source=chatgpt.com", "https://chatgpt.com/", BROWSER, READER),  # both: once
    (16, HOST, "/", "https://www.google.co.uk/", BROWSER, READER),  # a country domain
    (17, HOST, "/", "https://notchatgpt.com/", BROWSER, READER),  # not at a label boundary
    (18, HOST, "/d?ref=x&utm_source=perplexity", "-", BROWSER, READER),
    (30, HOST, "/", "https://claude.ai/chat/1", BROWSER, READER),  # the next day
    (19, OTHER_HOST, "/", "https://chatgpt.com/", "curl/8.4.0", READER),  # an automated client
    (19, OTHER_HOST, "/", "https://chatgpt.com/", BROWSER, GPTBOT_IP),  # undeclared OpenAI traffic
]


API_HOST = "api.example.com"
HAMMER = "Mozilla/5.0 (compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot)"
HAMMER_IP = "192.0.2.50"  # no Amazon range: not proven
POLITE = "CCBot/2.0 (https://commoncrawl.org/faq/)"
POLITE_IP = "192.0.2.51"
# (seconds after 20:00, agent, address, status, Retry-After as logged)
BACKOFF = [
    (0, HAMMER, HAMMER_IP, 200, "-"), (5, HAMMER, HAMMER_IP, 200, "-"), (10, HAMMER, HAMMER_IP, 200, "-"),
    (15, HAMMER, HAMMER_IP, 503, "-"),  # gaps of 5 s: waiting means 10 s; it comes back in 1 s
    (16, HAMMER, HAMMER_IP, 429, "120"),  # asked to wait two minutes; back in 4 s
    (20, HAMMER, HAMMER_IP, 200, "-"),
    (0, POLITE, POLITE_IP, 200, "-"), (5, POLITE, POLITE_IP, 200, "-"), (10, POLITE, POLITE_IP, 200, "-"),
    (15, POLITE, POLITE_IP, 429, "-"),  # back in 30 s: at least max(2 x 5 s, 10 s)
    (45, POLITE, POLITE_IP, 429, "Mon, 02 Nov 2026 20:01:45 GMT"),  # asked to wait 60 s; it does
    (105, POLITE, POLITE_IP, 503, "-"),  # no next request: unknown
]
LOG_FORMAT = 'apache:%v %h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" "%{Retry-After}o"'


def scenario_argv(folder: Path) -> list[str]:
    lines = []
    for hours, path, agent, ip, status, size in REQUESTS:
        line = log_line(HOST, at(hours), path, agent, ip=ip, status=status)
        lines.append(line.replace(f'" {status} 512 "', f'" {status} {size} "'))
    for hours, host, path, referer, agent, ip in VISITS:
        lines.append(log_line(host, at(hours), path, agent, ip=ip).replace('"-" "', f'"{referer}" "'))
    lines = [line + ' "-"' for line in lines]
    for seconds, agent, ip, status, retry_after in BACKOFF:
        line = log_line(API_HOST, at(20) + timedelta(seconds=seconds), "/v1/items", agent, ip=ip, status=status)
        lines.append(f'{line} "{retry_after}"')
    (folder / "access.log").write_text("".join(line + "\n" for line in lines))
    write_jsonl(folder / "robots.jsonl", [
        {"host": HOST, "effective_from": "2026-11-02T00:00:00Z", "status": 200, "body": BEFORE},
        {"host": HOST, "effective_from": "2026-11-02T10:00:00Z", "status": 200, "body": AFTER},
    ])
    return [
        f"--logs={folder / 'access.log'}", f"--log-format={LOG_FORMAT}", f"--robots={folder / 'robots.jsonl'}",
        f"--ranges={REPO / 'samples/ranges'}", "--runner=FnApiRunner",
    ]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("answers")
    out = folder / "out"
    closing = io.StringIO()
    with contextlib.redirect_stdout(closing):
        assert run_audit([*scenario_argv(folder), f"--out={out}"]) == 0
    (out / "report.html").rename(folder / "first.html")
    with contextlib.redirect_stdout(io.StringIO()):
        assert crawl_audit(["report", str(out), "--html", str(out / "report.html")]) == 0
    return {
        "out": out, "closing": closing.getvalue(),
        "first": (folder / "first.html").read_text(encoding="utf-8"),
        "page": (out / "report.html").read_text(encoding="utf-8"),
    }


@pytest.mark.slow
def test_each_verdict_carries_the_logged_size_and_a_dash_is_nothing_sent(run):
    verdicts = {(v["crawler"], v["path"], v["ts"]): v["bytes"] for v in read_jsonl(run["out"] / "verdicts", "part*")}
    assert verdicts[("GPTBot", "/new", "2026-11-02T12:00:00Z")] == 0
    assert verdicts[("GPTBot", "/new", "2026-11-02T13:00:00Z")] == 150
    assert verdicts[("ClaudeBot", "/private/a", "2026-11-02T03:00:00Z")] == 2048
    assert sorted(verdicts.values()) == sorted([0 if r[5] == "-" else int(r[5]) for r in REQUESTS] + [512] * (2 + len(BACKOFF)))


@pytest.mark.slow
def test_the_served_table_row_by_row(run):
    rows = {
        (r["crawler"], r["identity"], r["decision"], r["status_class"]): (r["requests"], r["bytes"])
        for r in tables.rows(run["out"], records.SERVED_TABLE)
        if r["host"] == HOST
    }
    assert rows == {
        ("GPTBot", "verified", "allowed", "2xx"): (3, 1100),
        ("GPTBot", "verified", "disallowed", "4xx"): (2, 150),
        ("ClaudeBot", "verified", "disallowed", "2xx"): (1, 2048),
        ("bingbot", "verified", "disallowed", "4xx"): (2, 300),
        ("Googlebot", "spoofed", "disallowed", "4xx"): (1, 20),
    }
    assert "served" in read_manifest(str(run["out"]))["tables"]


@pytest.mark.slow
def test_served_requests_add_up_to_the_summary_per_crawler_identity_and_decision(run):
    summary = list(tables.rows(run["out"], records.SUMMARY_TABLE))
    expected: Counter = Counter()
    for row in summary:
        for decision, column in records.DECISION_COLUMNS:
            if row[column]:
                expected[row["crawler"], row["identity"], decision] += row[column]
    served: Counter = Counter()
    for row in tables.rows(run["out"], records.SERVED_TABLE):
        served[row["crawler"], row["identity"], row["decision"]] += row["requests"]
    assert served == expected and served
    assert {(r["crawler"], r["identity"]): r["bytes"] for r in summary} == {
        ("GPTBot", "verified"): 1250, ("ClaudeBot", "verified"): 2048, ("bingbot", "verified"): 300,
        ("Googlebot", "spoofed"): 20, ("curl", "unverifiable"): 512, ("OpenAI", "undeclared"): 512,
        ("Amazonbot", "unverified"): 6 * 512, ("CCBot", "unverified"): 6 * 512,
    }


def _crawler_table(page: str) -> dict:
    header, rows, _ = htmldom.read(page).table("crawler-table")
    return {(r[0], r[1]): r[header.index("bytes")] for r in rows}


@pytest.mark.slow
def test_bytes_are_shown_beside_requests_in_the_text_and_on_the_page(run):
    assert _crawler_table(run["page"]) == {
        ("GPTBot", "verified"): "1,250", ("ClaudeBot", "verified"): "2,048", ("bingbot", "verified"): "300",
        ("OpenAI", "undeclared"): "512",
    }
    header_line = next(line for line in run["closing"].split("\n") if line.startswith("crawler "))
    assert re.split(r"\s{2,}", header_line.strip())[:4] == ["crawler", "identity", "requests", "bytes"]
    gptbot = next(line for line in run["closing"].split("\n") if line.startswith("GPTBot "))
    assert re.split(r"\s{2,}", gptbot.strip())[2:4] == ["5", "1,250"]
    purpose_header, *_ = htmldom.read(run["page"]).tables["purpose-table"]
    assert purpose_header[:3] == ["purpose", "requests", "bytes"]


@pytest.mark.slow
def test_the_crawler_section_says_what_the_server_answered_disallowed_requests(run):
    for page in (run["first"], run["page"]):  # as run, and as `report` rebuilds it
        answers = {
            name: htmldom.read(item).text
            for name, item in re.findall(r'<li data-answers="([^"]*)">(.*?)</li>', page)
        }
        assert answers == {
            "GPTBot": "GPTBot: 2 disallowed of any kind: 0 still served, 2 refused (403 2)",
            "bingbot": "bingbot: 2 disallowed of any kind: 0 still served, 2 refused (451 1, 429 1)",
            "ClaudeBot": "ClaudeBot: 1 disallowed of any kind: 1 still served, 0 refused",
        }
        section = page[page.index('<section id="crawlers"'):page.index('<section id="timeline"')]
        assert 'data-answers="GPTBot"' in section


@pytest.mark.slow
def test_the_referrals_table_row_by_row(run):
    rows = {
        (r["host"], r["operator"], r["day"], r["via"]): r["visits"]
        for r in tables.rows(run["out"], records.REFERRALS_TABLE)
    }
    assert rows == {
        (HOST, "OpenAI", "2026-11-02", "referer"): 3,
        (HOST, "OpenAI", "2026-11-02", "utm_source"): 1,
        (HOST, "Google", "2026-11-02", "referer"): 1,
        (HOST, "Perplexity", "2026-11-02", "utm_source"): 1,
        (HOST, "Anthropic", "2026-11-03", "referer"): 1,
    }
    manifest = read_manifest(str(run["out"]))
    assert "referrals" in manifest["tables"]
    # The visits are lines no verdict was written for: every line is still accounted for.
    counts = manifest["counts"]
    assert counts["skipped"] == 8 and counts["lines"] == len(REQUESTS) + len(VISITS) + len(BACKOFF)


@pytest.mark.slow
def test_the_referrals_section_puts_each_operator_s_crawling_beside_its_visits(run):
    for page in (run["first"], run["page"]):
        header, *rows = htmldom.read(page).tables["referrals-table"]
        assert header[0] == "operator"
        assert {row[0]: row[1:] for row in rows} == {
            "OpenAI": ["5", "3", "1", "4", "1.2 : 1"],
            "Anthropic": ["1", "1", "0", "1", "1.0 : 1"],
            "Microsoft": ["2", "0", "0", "0", "no visit seen"],
            "Google": ["0", "1", "0", "1", "0.0 : 1"],
            "Perplexity": ["0", "0", "1", "1", "0.0 : 1"],
        }


@pytest.mark.slow
def test_the_backoff_table_row_by_row(run):
    rows = sorted(
        (r["crawler"], r["at"], r["status"], r["retry_after_s"], r["next_request_after_s"], r["backed_off"])
        for r in tables.rows(run["out"], records.BACKOFF_TABLE)
    )
    assert rows == [
        ("Amazonbot", "2026-11-02T20:00:15Z", 503, None, 1.0, False),
        ("Amazonbot", "2026-11-02T20:00:16Z", 429, 120.0, 4.0, False),
        ("CCBot", "2026-11-02T20:00:15Z", 429, None, 30.0, True),
        ("CCBot", "2026-11-02T20:00:45Z", 429, 60.0, 60.0, True),
        ("CCBot", "2026-11-02T20:01:45Z", 503, None, None, None),
        ("bingbot", "2026-11-02T05:00:00Z", 429, None, None, None),  # its last request to the host
    ]


@pytest.mark.slow
def test_the_backoff_section_counts_each_crawler_s_answers(run):
    for page in (run["first"], run["page"]):
        header, *rows = htmldom.read(page).tables["backoff-table"]
        assert header == ["crawler", "identity", "host", "429", "503", "backed off", "did not", "unknown"]
        assert {row[0]: row[3:] for row in rows} == {
            "Amazonbot": ["1", "1", "0", "2", "0"],
            "CCBot": ["2", "1", "2", "0", "1"],
            "bingbot": ["1", "0", "0", "0", "1"],
        }


@pytest.fixture(scope="module")
def parquet_run(tmp_path_factory) -> dict:
    """The same scenario written as Parquet, and the report `report` rebuilds from it: a second
    run, since a run writes one format."""
    folder = tmp_path_factory.mktemp("answers-parquet")
    out = folder / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_audit([*scenario_argv(folder), f"--out={out}", "--format=parquet"]) == 0
        assert crawl_audit(["report", str(out), "--html", str(folder / "report.html")]) == 0
    return {"out": out, "page": (folder / "report.html").read_text(encoding="utf-8")}


@pytest.mark.slow
@pytest.mark.parametrize("table", [records.SERVED_TABLE, records.REFERRALS_TABLE, records.BACKOFF_TABLE])
def test_served_referrals_and_backoff_read_back_from_parquet_as_written_in_json(run, parquet_run, table):
    folder = parquet_run["out"] / table
    assert {path.suffix for path in folder.iterdir()} == {".parquet"}
    assert read_manifest(str(parquet_run["out"]))["tables"][table]["format"] == "parquet"
    columns = records.TABLES[table]
    written = [records.to_json_ready(row, columns) for row in pq.read_table(folder).to_pylist()]
    as_json = list(tables.rows(run["out"], table))
    assert written and sorted(map(_same_folder, written)) == sorted(map(_same_folder, as_json))


def _same_folder(row: dict) -> str:
    """A row as text, its source named by file and line: the two runs read logs in two folders."""
    if "source" in row:
        row = {**row, "source": Path(row["source"]).name}
    return repr(row)


@pytest.mark.slow
def test_the_report_rebuilt_from_parquet_has_the_referrals_and_backoff_sections(run, parquet_run):
    page, rebuilt = htmldom.read(run["page"]), htmldom.read(parquet_run["page"])
    for section in ("referrals-table", "backoff-table"):
        assert rebuilt.tables[section] == page.tables[section]
