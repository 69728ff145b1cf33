"""The HTML report in a real browser: headless Chromium loads it from disk.

Skipped with a message when Chromium is absent, except under CI=true, where `.ci/run` installs
it and its absence is a failure.
"""
from __future__ import annotations

import html
import json
import re
from collections import Counter
from pathlib import Path

import pytest

import htmldom
from browser import browse, chromium  # noqa: F401 (chromium: a fixture)
from helpers import jsonl_log_run, read_jsonl, run_audit, write_jsonl
from pipeline.cli import main as cli
from pipeline.report import html as html_report

pytestmark = pytest.mark.slow


def test_the_console_check_sees_a_csp_violation(chromium, tmp_path):
    """Without this the other tests' `no console messages` could never fail."""
    page = tmp_path / "bad.html"
    page.write_text(
        f'<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="{html_report.CSP}">'
        '<p style="color:red">x</p>'
    )
    _, console = browse(chromium, page, tmp_path / "profile", "--dump-dom")
    assert any("Content Security Policy" in message for message in console)


def test_the_sample_report_loads_cleanly_with_the_run_s_numbers(chromium, sample_run, tmp_path):
    dom_text, console = browse(chromium, sample_run / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    dom = htmldom.read(dom_text)
    assert {ident for ident, _ in html_report.SECTIONS} - {"whatif"} <= dom.ids
    everything = read_jsonl(sample_run / "summary", "part*")
    columns = ("requests", "bytes", "allowed", "disallowed", "within_grace", "before_refetch", "between_captures", "unknown")
    words = {"unverifiable": "no way to verify"}
    counts = json.loads((sample_run / "counts.json").read_text())
    for tables, kind in ((("crawler-table", "claims-table"), "crawler"), (("automated-table",), "automated")):
        rows = [row for table in tables for row in dom.table(table)[1]]
        totals = [sum(htmldom.number(dom.table(table)[2][i]) for table in tables) for i in range(2, 2 + len(columns))]
        summary = [s for s in everything if s["client_kind"] == kind]
        assert summary, kind
        assert sorted(tuple([r[0], r[1], *map(htmldom.number, r[2:])]) for r in rows) == sorted(
            (s["crawler"] or "(none)", words.get(s["identity"], s["identity"]), *(s[c] for c in columns)) for s in summary
        )
        assert totals == [sum(s[c] for s in summary) for c in columns]
    assert sum(s["requests"] for s in everything) == counts["verdicts"]
    # The automated clients' disallowed requests are listed in their section, and only there.
    automated = dom_text[dom_text.index('<section id="automated"'):dom_text.index('<section id="llms-txt"')]
    crawlers = dom_text[dom_text.index('<section id="disallowed"'):dom_text.index('<section id="spoofing"')]
    for client in {s["crawler"] for s in everything if s["client_kind"] == "automated" and s["disallowed"]}:
        assert f"<h3>{client}: " in automated and f"<h3>{client}: " not in crawlers


def test_who_reads_your_robots_txt_shows_the_run_s_fetches(chromium, sample_run, tmp_path):
    dom_text, console = browse(chromium, sample_run / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    dom = htmldom.read(dom_text)
    _, *rows = dom.tables["robots-readers-table"]  # no footer
    fetches = read_jsonl(sample_run / "robots_fetches", "part*")
    expected = Counter((f["host"], f["family"], f["identity"]) for f in fetches)
    assert {(r[0], r[1], r[2]): htmldom.number(r[6]) for r in rows} == dict(expected)
    _, *unread = dom.tables["robots-unread-table"]
    assert [(r[0], r[1]) for r in unread] == [("Googlebot", "spoofed")]
    section = htmldom.read(dom_text[dom_text.index('<section id="robots-readers"'):]).text
    assert "CDN" in section and "no robots.txt fetch seen" in section.lower()
    # one dot per fetch on the time lines of the hosts whose robots.txt changed
    assert dom_text.count("<circle") == sum(n for (host, _, _), n in expected.items())


def test_a_screenshot_of_the_sample_report(chromium, sample_run, tmp_path):
    shot = tmp_path / "report.png"
    _, console = browse(
        chromium, sample_run / "report.html", tmp_path / "profile", f"--screenshot={shot}", "--window-size=1100,2400"
    )
    assert console == []
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a page was drawn, not a blank


def section_of(dom_text: str, ident: str) -> str:
    start = dom_text.index(f'<section id="{ident}"')
    return dom_text[start:dom_text.index("</section>", start) + len("</section>")]


def test_the_page_answers_first_with_the_sample_s_change_audit(chromium, sample_run, tmp_path):
    dom_text, console = browse(chromium, sample_run / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    main = dom_text[dom_text.index("<main>") + len("<main>"):]
    assert main.startswith('<section id="changes">')
    assert dom_text.index('id="health"') < dom_text.index('<section id="changes"')
    changes = read_jsonl(sample_run / "changes", "part*")
    assert changes
    dom = htmldom.read(dom_text)
    header, *rows = dom.tables["changes-table-1"]
    counts = ("requests_before", "requests_after", "within_grace", "before_refetch", "violations", "between_captures")
    assert sorted(tuple(htmldom.number(r[header.index(c.replace("_", " "))]) for c in counts) for r in rows) == sorted(
        tuple(row[c] for c in counts) for row in changes
    )
    # one sentence per row, the claims named as claims
    items = re.findall(r'<li data-crawler="([^"]*)" data-identity="([^"]*)">(.*?)</li>', section_of(dom_text, "changes"))
    assert sorted((c, i) for c, i, _ in items) == sorted((row["crawler"], row["identity"]) for row in changes)
    assert all(text.startswith(f"Claimed {c} ({i}, not proven)") == (i in ("spoofed", "unverified")) for c, i, text in items)


def test_the_what_if_sits_beside_the_change_audit(chromium, hostile_report, tmp_path):
    dom_text, console = browse(chromium, hostile_report / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    sections = re.findall(r'<section id="([^"]+)"', dom_text)
    assert sections[sections.index("changes"):][:2] == ["changes", "whatif"]
    assert sections.index("changes") == (1 if sections[0] == "health" else 0)


def test_the_timeline_marks_each_change_and_draws_the_disallowed_requests(chromium, sample_run, tmp_path):
    dom_text, console = browse(chromium, sample_run / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    timeline = section_of(dom_text, "timeline")
    chart = timeline[timeline.index("<svg"):timeline.index("</svg>")]
    versions = sorted(read_jsonl(sample_run / "robots_versions", "part*"), key=lambda v: (v["host"], v["effective_from"]))
    changes = {
        (new["host"], new["effective_from"][:16].replace("T", " "))
        for old, new in zip(versions, versions[1:])
        if old["host"] == new["host"] and old["kind"] == new["kind"] == "ok" and old["sha256"] != new["sha256"]
    }
    assert changes
    marked = set(re.findall(r'class="marker"><title>([^:]+): robots.txt changed ([\d-]+ [\d:]+) UTC</title>', chart))
    assert marked == changes
    drawn = sum(htmldom.number(n) for n in re.findall(r"<rect [^>]*><title>[^<]*: [^<]* ([\d,]+)</title></rect>", chart))
    disallowed = ("disallowed", "within_grace", "before_refetch", "between_captures")
    summary = [row for row in read_jsonl(sample_run / "summary", "part*") if row["client_kind"] == "crawler"]
    assert drawn == sum(row[c] for row in summary for c in disallowed) > 0


def test_long_sections_fold_and_empty_ones_are_one_line(chromium, sample_run, tmp_path):
    dom_text, console = browse(chromium, sample_run / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    folded = empty = 0
    for ident, _ in html_report.SECTIONS:
        if f'<section id="{ident}"' not in dom_text:
            continue
        section = section_of(dom_text, ident)
        if 'class="empty"' in section[:section.index(">")]:
            empty += 1
            assert "<h2" not in section and section.count("<p") == 1 and "<table" not in section, ident
            continue
        shown = re.sub(r"<details.*?</details>", "", section, flags=re.DOTALL)
        folded += shown != section and "Show the details" in section
        if ident != "changes":
            assert shown.count("<tr") <= html_report.FOLD_ROWS, ident
    assert folded and empty


# Opens every fold, then records each break between two letters or digits of a table cell's
# text (a word cut in two) and how far the page reaches past the window's width.
LAYOUT_PROBE = """<script>addEventListener('load',()=>{
document.querySelectorAll('details').forEach(d=>{d.open=true});
const broken=[];const word=/[\\p{L}\\p{N}]/u;
for(const cell of document.querySelectorAll('td,th')){
 const walk=document.createTreeWalker(cell,NodeFilter.SHOW_TEXT);let node;
 while((node=walk.nextNode())){let top=null;const text=node.data;
  for(let i=0;i<text.length;i++){const r=document.createRange();r.setStart(node,i);r.setEnd(node,i+1);
   const rect=r.getClientRects()[0];if(!rect){top=null;continue}
   if(top!==null&&rect.top>top+2&&word.test(text[i])&&word.test(text[i-1]))broken.push(text.slice(Math.max(0,i-10),i+10));
   top=rect.top}}}
document.body.setAttribute('data-broken',broken.join('|'));
document.body.setAttribute('data-cells',String(document.querySelectorAll('td,th').length));
document.body.setAttribute('data-overflow',String(document.documentElement.scrollWidth-innerWidth))})</script>"""


@pytest.mark.parametrize("width", [420, 1100])
def test_no_table_cell_breaks_inside_a_word_and_the_page_fits_the_window(chromium, sample_run, tmp_path, width):
    """The page as written plus a script that measures it (the page's own policy runs none)."""
    page = (sample_run / "report.html").read_text()
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", LAYOUT_PROBE + "</body>"))
    dom_text, console = browse(chromium, probed, tmp_path / "profile", "--dump-dom", f"--window-size={width},900")
    assert console == []
    body = dict(re.findall(r'data-(broken|cells|overflow)="([^"]*)"', dom_text))
    assert int(body["cells"]) > 500
    assert html.unescape(body["broken"]) == ""
    assert int(body["overflow"]) <= 0


INJECTIONS = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "javascript:alert(3)",
)
HOSTILE_HOST = '"><img/src=x/onerror=alert(4)>.example'
PROPOSAL_NAME = '"><img src=x onerror=alert(8)>.txt'
HOSTILE_ROBOTS = (
    "# <script>alert(5)</script>\nUser-agent: *\nDisallow: /\"><img src=x onerror=alert(6)>\nDisallow: /javascript:\n"
)


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    robots = [
        {"host": HOSTILE_HOST, "effective_from": "2026-11-01T00:00:00Z", "status": 200, "body": "User-agent: *\nDisallow: /\n"},
        {"host": HOSTILE_HOST, "effective_from": "2026-11-02T00:00:00Z", "status": 200, "body": HOSTILE_ROBOTS},
        {"host": "<script>alert(7)</script>", "effective_from": "2026-11-01T00:00:00Z", "status": 503},
    ]
    write_jsonl(folder / "robots.jsonl", robots)
    lines = []
    for i, injection in enumerate(INJECTIONS):
        for host in (HOSTILE_HOST, "<script>alert(7)</script>", injection):
            lines.append({
                "ts": f"2026-11-03T0{i}:00:00Z", "ip": "203.0.113.66", "host": host, "method": "GET",
                "target": f"/{injection}/x?next={injection}", "status": 200,
                "ua": f"Mozilla/5.0 (compatible; Googlebot/2.1; {injection})",
            })
            lines.append({**lines[-1], "ua": f"Evil{injection}Bot/1.0 {injection}"})
    argv = jsonl_log_run(folder, lines)
    assert run_audit(argv) == 0
    # A proposal that shuts the hostile paths out, named like one.
    proposal = folder / PROPOSAL_NAME
    proposal.write_text('User-agent: *\nDisallow: /"><img\nDisallow: /<script>\n')
    assert cli.main(["whatif", str(folder / "out"), "--host", HOSTILE_HOST, "--proposed", str(proposal)]) == 0
    return folder / "out"


ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "nav", "ul", "li", "a",
    "main", "section", "p", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "details", "summary", "pre",
    "span", "svg", "desc", "rect", "text", "line", "circle", "br", "strong", "code",
}


def test_hostile_log_and_robots_strings_stay_text(chromium, hostile_report, tmp_path):
    dom_text, console = browse(chromium, hostile_report / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    dom = htmldom.read(dom_text)
    assert {tag for tag, _ in dom.elements} <= ALLOWED_TAGS
    assert all(not name.startswith("on") and name != "style" for _, attrs in dom.elements for name in attrs)
    assert all(attrs["href"].startswith("#") for tag, attrs in dom.elements if tag == "a")
    # Shown, as text: the User-Agents (spoofed claims), the paths (disallowed), the hosts, the robots.txt.
    for injection in INJECTIONS:
        assert f"Googlebot/2.1; {injection}" in dom.text
        assert f"/{injection}/x?next={injection}" in dom.text
    for text in (HOSTILE_HOST, "<script>alert(7)</script>", "# <script>alert(5)</script>",
                 'Disallow: /"><img src=x onerror=alert(6)>'):
        assert text in dom.text
    # The what-if section names the hostile host, proposal, paths and rules as text too.
    whatif = htmldom.read(dom_text[dom_text.index('<section id="whatif"'):]).text
    for text in (HOSTILE_HOST, PROPOSAL_NAME, '/"><img src=x onerror=alert(2)>/x', "/<script>alert(1)</script>/x",
                 'Disallow: /"><img (line 2)', "Disallow: /<script> (line 3)"):
        assert text in whatif
