"""One robots.txt change, audited end to end: `crawl-audit run` once on a site whose robots.txt
starts disallowing /new (and stops disallowing /old), with a crawler that re-reads robots.txt late
(bingbot), one that never re-reads it (ClaudeBot), one that re-reads it and stops at once
(GPTBot), a Googlebot that never fetches it, a spoofed Googlebot and an Applebot its address does
not prove. The closing summary, `report` and report.html are read back: every split by decision
adds up to its requests, claims not proven stay apart, and the text and the page show the same
figures. The same log in a watched folder, audited by a bounded stream, writes the batch's
`changes` rows once its input ends."""
from __future__ import annotations

import contextlib
import json
import io
import re
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from operator import itemgetter
from pathlib import Path

import pytest

import htmldom
from browser import browse, chromium  # noqa: F401 (chromium: a fixture)
from helpers import (
    BINGBOT, BINGBOT_IP, GOOGLEBOT, REPO, crawl_audit, log_line, read_jsonl, run_audit, stream_graph, write_jsonl,
)
from matcher import records
from pipeline.cli import main as cli
from pipeline.tables import reading as tables
from pipeline.tables.run_folder import read_manifest
from pipeline.report import figures as report_figures

HOST = "www.example.com"
ELSEWHERE_HOST = "other.example.com"  # no robots.txt known: its requests are unknown
T0 = datetime(2026, 11, 2, tzinfo=timezone.utc)
BEFORE = "User-agent: *\nDisallow: /private\nDisallow: /old\n"
AFTER = "User-agent: *\nDisallow: /private\nDisallow: /new\n"
CHANGE = T0 + timedelta(hours=10)
CLAUDEBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
CLAUDEBOT_IP = "216.73.216.10"
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
GPTBOT_IP = "20.171.206.5"
APPLEBOT = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)"
APPLEBOT_IP = "17.58.101.5"  # no Applebot range snapshot and DNS off: not proven either way
GOOGLE_IP = "66.249.66.1"
ELSEWHERE = "203.0.113.9"  # in no crawler's range: a Googlebot from here is spoofed


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def scenario_lines() -> list[str]:
    requests = [
        (1, "/robots.txt", BINGBOT, BINGBOT_IP),
        (1, "/robots.txt", CLAUDEBOT, CLAUDEBOT_IP),
        (1, "/robots.txt", GPTBOT, GPTBOT_IP),
        (2, "/new", GPTBOT, GPTBOT_IP),  # allowed then
        (2, "/new", CLAUDEBOT, CLAUDEBOT_IP),
        (2, "/old", GOOGLEBOT, GOOGLE_IP),  # disallowed then
        (3, "/private/a", GPTBOT, GPTBOT_IP),  # disallowed by the same rule in both versions
        (10.5, "/robots.txt", GPTBOT, GPTBOT_IP),  # re-read at once, and never asks for /new again
        (12, "/new", BINGBOT, BINGBOT_IP),  # before its re-read, within the grace
        (12, "/new", CLAUDEBOT, CLAUDEBOT_IP),
        (12, "/new", GOOGLEBOT, GOOGLE_IP),  # no fetch seen: the grace is assumed
        (14, "/new", APPLEBOT, APPLEBOT_IP),
        (20, "/new", GOOGLEBOT, ELSEWHERE),
        (21, "/new", GOOGLEBOT, ELSEWHERE),
        (30, "/private/a", "curl/8.4.0", "198.51.100.7"),  # an automated client
        (36, "/new", BINGBOT, BINGBOT_IP),  # past the grace, still not re-read: a violation
        (40, "/robots.txt", BINGBOT, BINGBOT_IP),  # re-read late
        (48, "/new", CLAUDEBOT, CLAUDEBOT_IP),  # never re-read: a violation
        (50, "/page", GPTBOT, GPTBOT_IP),
        (60, "/private/a", GPTBOT, GPTBOT_IP),
        (60, "/old", GOOGLEBOT, GOOGLE_IP),  # allowed now
        (72, "/page", GPTBOT, GPTBOT_IP),  # the host's last logged request
    ]
    lines = [log_line(HOST, at(hours), path, agent, ip=ip) for hours, path, agent, ip in requests]
    lines.append(log_line(ELSEWHERE_HOST, at(30), "/x", GOOGLEBOT, ip=GOOGLE_IP))
    return lines


def scenario_argv(folder: Path, *extra: str) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "access.log").write_text("".join(line + "\n" for line in scenario_lines()))
    write_jsonl(folder / "robots.jsonl", [
        {"host": HOST, "effective_from": "2026-11-02T00:00:00Z", "status": 200, "body": BEFORE},
        {"host": HOST, "effective_from": "2026-11-02T10:00:00Z", "status": 200, "body": AFTER},
    ])
    return [
        f"--logs={folder / 'access.log'}", "--log-format=host_combined", f"--robots={folder / 'robots.jsonl'}",
        f"--ranges={REPO / 'samples/ranges'}", "--runner=FnApiRunner", *extra,
    ]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    """The scenario run once: its folder, what it printed as it closed, and what `report` printed."""
    folder = tmp_path_factory.mktemp("change")
    out = folder / "out"
    closing, reported = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(closing):
        assert run_audit([*scenario_argv(folder), f"--out={out}"]) == 0
    with contextlib.redirect_stdout(reported):
        assert crawl_audit(["report", str(out), "--html", str(folder / "again.html")]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    return {"out": out, "closing": closing.getvalue(), "report": reported.getvalue(), "page": page,
            "dom": htmldom.read(page)}


def schema_decisions() -> list[str]:
    (column,) = [c for c in records.VERDICTS if c.name == "decision"]
    return [value.strip() for value in column.description.split("|")]


def decision_columns() -> dict[str, str]:
    """Each decision of the verdicts schema and the summary column that must count it."""
    columns = dict(records.DECISION_COLUMNS)
    assert set(columns) == set(schema_decisions()), "a decision of the verdicts schema has no summary column"
    return columns


# ---- reading the text tables back


def text_table(text: str, first_header: str) -> tuple[list[str], list[list[str]]]:
    """The aligned table of the closing summary whose header starts with `first_header`."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if re.split(r"\s{2,}", line.strip())[0] == first_header)
    header = re.split(r"\s{2,}", lines[start].strip())
    rows = []
    for line in lines[start + 1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(header):
            break
        rows.append(cells)
    return header, rows


def number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.slow
@pytest.mark.parametrize("printed", ["closing", "report"])
@pytest.mark.parametrize("first", ["crawler", "claimed", "purpose", "client"])
def test_every_text_table_has_a_column_per_decision_and_its_parts_add_up(run, printed, first):
    header, rows = text_table(run[printed], first)
    columns = decision_columns()
    assert all(column in header for column in columns.values()), header
    assert rows
    requests = header.index("requests")
    for row in rows:
        parts = sum(number(row[header.index(column)]) for column in columns.values())
        assert parts == number(row[requests]), (first, row)


@pytest.mark.slow
@pytest.mark.parametrize("table", ["crawler-table", "claims-table", "purpose-table", "automated-table"])
def test_every_page_table_has_a_column_per_decision_and_its_parts_add_up(run, table):
    header, *rows = run["dom"].tables[table]
    columns = decision_columns()
    headings = [report_figures.HEADINGS[column] for column in columns.values()]
    assert all(heading in header for heading in headings), header
    assert rows
    for row in rows:
        parts = sum(htmldom.number(row[header.index(heading)]) for heading in headings)
        assert parts == htmldom.number(row[header.index("requests")]), (table, row)


@pytest.mark.slow
def test_the_chart_stacks_every_decision_and_each_bar_is_the_crawler_s_requests(run):
    page = run["page"]
    section = page[page.index('<section id="crawlers"'):page.index('<section id="timeline"')]
    chart = section[section.index("<svg"):section.index("</svg>")]
    bars: dict[str, int] = {}
    names = set()
    for label, name, value in re.findall(r"<rect [^>]*><title>([^<]*): ([a-z ]+) ([\d,]+)</title>", chart):
        bars[label] = bars.get(label, 0) + number(value)
        names.add(name)
    _, *rows = run["dom"].tables["crawler-table"]
    expected = {f"{r[0]} ({r[1]})": htmldom.number(r[2]) for r in rows[:-1]}
    assert bars == expected
    # The legend names every decision, and the before-refetch requests are drawn.
    assert all(f">{report_figures.HEADINGS[c]}</text>" in chart for c in decision_columns().values())
    assert "before refetch" in names


@pytest.mark.slow
def test_the_text_and_the_page_show_the_same_figures(run):
    dom = run["dom"]
    for first, table in (("crawler", "crawler-table"), ("claimed", "claims-table"), ("client", "automated-table"),
                         ("purpose", "purpose-table")):
        keys = 1 if first == "purpose" else 2
        header, rows = text_table(run["closing"], first)
        page_header, *page_rows = dom.tables[table]
        if table != "purpose-table":
            page_rows = page_rows[:-1]  # the totals
        as_text = {tuple(row[:keys]): tuple(map(number, row[keys:])) for row in rows}
        on_page = {tuple(row[:keys]): tuple(map(htmldom.number, row[keys:])) for row in page_rows}
        assert as_text == on_page, table
        assert [h.replace("_", " ") for h in header[keys:]] == page_header[keys:]
    claims_text = [line.strip() for line in run["closing"].split("\n") if line.startswith("  claimed ")]
    claims_page = [htmldom.read(item).text for item in re.findall(r"<li data-claimed=[^>]*>.*?</li>", run["page"])]
    assert claims_text == claims_page and claims_text
    # The closing summary and `report` print the same.
    assert run["report"].startswith(run["closing"].rstrip("\n").split("\nreport: ")[0])


@pytest.mark.slow
def test_the_crawler_s_own_requests_are_apart_from_claims_not_proven(run):
    header, rows = text_table(run["closing"], "crawler")
    crawlers = {(r[0], r[1]) for r in rows}
    assert ("Googlebot", "verified") in crawlers
    assert not {identity for _, identity in crawlers} & {"spoofed", "unverified"}
    _, claims = text_table(run["closing"], "claimed")
    assert {(r[0], r[1]) for r in claims} == {("Googlebot", "spoofed"), ("Applebot", "unverified")}
    assert "claimed Googlebot, not proven: 2 (spoofed 2), 2 disallowed of any kind" in run["closing"]
    assert "claimed Applebot, not proven: 1 (unverified 1), 1 disallowed of any kind" in run["closing"]
    # On the page, the disallowed requests of Googlebot are its own; the spoofed ones are headed apart.
    text = run["dom"].text
    assert "Googlebot: 2 requests disallowed of any kind (verified 2)" in text
    assert "Claimed Googlebot, not proven: 2 requests disallowed of any kind (spoofed 2)" in text
    assert "Claimed Applebot, not proven: 1 requests disallowed of any kind (unverified 1)" in text
    assert "Applebot: " not in text.replace("Claimed Applebot", "")


@pytest.mark.slow
def test_the_before_refetch_requests_are_counted_where_the_owner_looks(run):
    header, rows = text_table(run["closing"], "crawler")
    by_crawler = {(r[0], r[1]): dict(zip(header, r)) for r in rows}
    assert by_crawler["bingbot", "verified"]["before_refetch"] == "1"
    assert by_crawler["bingbot", "verified"]["disallowed"] == "1"
    assert by_crawler["ClaudeBot", "verified"]["before_refetch"] == "1"
    summary = {(r["crawler"], r["identity"]): r for r in read_jsonl(run["out"] / "summary")}
    assert summary["ClaudeBot", "verified"]["before_refetch"] == 1


# ---- the change audit


def _rows(rows: Iterable[dict]) -> dict[tuple[str, str, str], dict]:
    found = {}
    for row in rows:
        key = (row["direction"], row["crawler"], row["identity"])
        assert key not in found
        assert (row["host"], tables.moment(row["change_at"])) == (HOST, CHANGE)
        found[key] = {
            name: value for name, value in row.items() if name not in ("host", "change_at", "direction", "crawler", "identity")
        }
    return found


def _moment(hours: float | None) -> str | None:
    return None if hours is None else at(hours).strftime("%Y-%m-%dT%H:%M:%SZ")


def _expected(before, after, grace, refetch, violations, fetch_after, last) -> dict:
    return {
        # After the change to the host's last request (72 h); as long before, from its first request (1 h).
        "before_from": _moment(1), "after_until": _moment(72),
        "requests_before": before, "requests_after": after, "within_grace": grace, "before_refetch": refetch,
        "violations": violations, "between_captures": 0,
        "first_robots_fetch_after": _moment(fetch_after), "last_newly_disallowed_request": _moment(last),
        "final": True,
    }


EXPECTED_CHANGES = {
    # re-read late (40 h): one request within the grace before it, one violation past the grace
    ("restricts", "bingbot", "verified"): _expected(0, 2, 0, 1, 1, 40, 36),
    # never re-read: the same, and no fetch after the change
    ("restricts", "ClaudeBot", "verified"): _expected(1, 2, 0, 1, 1, None, 48),
    # re-read at once (10.5 h) and stopped: it asked for /new before the change only
    ("restricts", "GPTBot", "verified"): _expected(1, 0, 0, 0, 0, 10.5, None),
    # no robots.txt fetch seen at all: the grace is assumed
    ("restricts", "Googlebot", "verified"): _expected(0, 1, 1, 0, 0, None, 12),
    # claims not proven are rows of their own, never the crawler's
    ("restricts", "Googlebot", "spoofed"): _expected(0, 2, 2, 0, 0, None, 21),
    ("restricts", "Applebot", "unverified"): _expected(0, 1, 1, 0, 0, None, 14),
    # /old, newly allowed: counted before and after, no disallowed request after
    ("opens", "Googlebot", "verified"): _expected(1, 1, 0, 0, 0, None, None),
}


@pytest.mark.slow
def test_the_changes_table_says_row_by_row_what_each_crawler_did_after_the_change(run):
    assert _rows(tables.rows(run["out"], "changes")) == EXPECTED_CHANGES


@pytest.fixture(scope="module")
def streamed(tmp_path_factory) -> Path:
    """The scenario's log in a watched folder, audited by a bounded stream (the folder watched for
    a few seconds, then the input ends); the folder it wrote."""
    folder = tmp_path_factory.mktemp("change-stream")
    argv = scenario_argv(folder, "--streaming", "--runner=PortableRunner", "--job_endpoint=embed",
                         "--environment_type=LOOPBACK", "--poll-interval=0.2s", "--watch-for=3s",
                         "--robots-refresh=0", "--changes-every=0", f"--out={folder / 'out'}")
    stream_graph([arg for arg in argv if arg != "--runner=FnApiRunner"]).run().wait_until_finish()
    return folder / "out"


@pytest.mark.slow
def test_a_bounded_stream_writes_the_batch_s_changes_rows_when_its_input_ends(run, streamed):
    rows = read_jsonl(streamed / "changes")
    assert rows and all(row["final"] for row in rows)
    assert _rows(rows) == EXPECTED_CHANGES
    key = itemgetter("direction", "crawler", "identity")
    assert sorted(rows, key=key) == sorted(read_jsonl(run["out"] / "changes"), key=key)


@pytest.mark.slow
def test_the_changes_table_is_in_the_manifest_and_its_rows_fit_the_schema(run):
    listed = read_manifest(str(run["out"]))["tables"]["changes"]
    assert listed["format"] == "jsonl" and listed["files"]
    rows = read_jsonl(run["out"] / "changes")
    assert rows and all(records.row_problem(row, records.CHANGES) is None for row in rows)


def test_the_changes_table_has_a_bigquery_and_a_json_schema(capsys):
    assert cli.main(["schema", "--format", "bigquery", "changes"]) == 0
    fields = {field["name"]: field for field in json.loads(capsys.readouterr().out)}
    assert fields["change_at"]["type"] == "TIMESTAMP" and fields["change_at"]["mode"] == "REQUIRED"
    assert fields["first_robots_fetch_after"]["mode"] == "NULLABLE"
    assert (fields["final"]["type"], fields["final"]["mode"]) == ("BOOL", "REQUIRED")
    assert {"requests_before", "requests_after", "within_grace", "before_refetch", "violations", "between_captures"} <= set(fields)


# The crawlers' own first, most requests first; then the claims not proven; then the opened paths.
EXPECTED_SENTENCES = [
    ("ClaudeBot", "verified", "ClaudeBot re-read no robots.txt after the change (none seen in these logs); 2 requests"
     " to newly disallowed paths after it (the last 1 day 14 h after the change); 1 request to them in the period"
     " before the change."),
    ("bingbot", "verified", "bingbot re-read robots.txt 1 day 6 h after the change; 1 request to newly disallowed"
     " paths before that, 1 after (the last 1 day 2 h after the change); none to them in the period before the change."),
    ("GPTBot", "verified", "GPTBot re-read robots.txt 30 min after the change and made no request to a newly"
     " disallowed path after the change; 1 request to them in the period before the change."),
    ("Googlebot", "verified", "Googlebot re-read no robots.txt after the change (none seen in these logs); 1 request"
     " to newly disallowed paths after it (the last 2 h after the change); none to them in the period before the change."),
    ("Googlebot", "spoofed", "Claimed Googlebot (spoofed, not proven) re-read no robots.txt after the change (none"
     " seen in these logs); 2 requests to newly disallowed paths after it (the last 11 h after the change); none to"
     " them in the period before the change."),
    ("Applebot", "unverified", "Claimed Applebot (unverified, not proven) re-read no robots.txt after the change"
     " (none seen in these logs); 1 request to newly disallowed paths after it (the last 4 h after the change); none"
     " to them in the period before the change."),
    ("Googlebot", "verified", "Googlebot: paths the change newly allowed; 1 request to them in the period before the"
     " change, 1 after."),
]


@pytest.mark.slow
def test_the_page_answers_first_what_each_crawler_did_after_the_change(run):
    page = run["page"]
    main = page[page.index("<main>") + len("<main>"):]
    assert main.startswith('<section id="changes">')
    section = main[:main.index("</section>")]
    assert f"{HOST}: robots.txt changed {CHANGE:%Y-%m-%d %H:%M} UTC" in htmldom.read(section).text
    said = [
        (crawler, identity, htmldom.read(text).text.replace("\u00a0", " "))
        for crawler, identity, text in re.findall(r'<li data-crawler="([^"]*)" data-identity="([^"]*)">(.*?)</li>', section)
    ]
    assert said == EXPECTED_SENTENCES


@pytest.mark.slow
def test_the_page_s_change_counts_are_the_changes_table_s(run):
    header, *rows = run["dom"].tables["changes-table-1"]
    names = {("verified", "bingbot"): "bingbot", ("verified", "ClaudeBot"): "ClaudeBot", ("verified", "GPTBot"): "GPTBot",
             ("verified", "Googlebot"): "Googlebot", ("spoofed", "Googlebot"): "Claimed Googlebot (spoofed, not proven)",
             ("unverified", "Applebot"): "Claimed Applebot (unverified, not proven)"}
    columns = ("requests_before", "requests_after", "within_grace", "before_refetch", "violations", "between_captures")
    on_page = {(r[0], r[1]): tuple(htmldom.number(r[header.index(c.replace("_", " "))]) for c in columns) for r in rows}
    expected = {
        (names[identity, crawler], direction): tuple(values[c] for c in columns)
        for (direction, crawler, identity), values in EXPECTED_CHANGES.items()
    }
    assert on_page == expected


@pytest.mark.slow
def test_a_disallowed_path_is_one_row_across_robots_txt_versions(run, chromium, tmp_path):
    page, console = browse(chromium, run["out"] / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    section = page[page.index('<section id="disallowed"'):page.index('<section id="spoofing"')]
    gptbot = section[section.index('<h3 data-crawler="GPTBot">'):]
    table = gptbot[gptbot.index("<table"):gptbot.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", table)
    private = [row for row in rows if ">/private/a<" in row]
    assert len(private) == 1
    cells = re.findall(r"<td[^>]*>(.*?)</td>", private[0])
    assert cells[-2] == "2026-11-02 00:00 UTC (200)<br>2026-11-02 10:00 UTC (200)" and cells[-1] == "2"
