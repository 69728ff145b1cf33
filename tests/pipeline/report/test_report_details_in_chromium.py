"""What the report's sections and charts show a site owner, checked in real Chromium: disallowed
requests split by identity (a spoofed claim never counts against the crawler it names), a 0 s
smallest gap drawn as a bar, robots.txt versions told apart, host names kept whole."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import htmldom
from browser import browse, chromium  # noqa: F401 (chromium: a fixture)
from helpers import BINGBOT, REPO, log_line, run_audit, write_jsonl

LONG_HOST = "catalogue-and-spare-parts-for-vintage-bicycles.example-shop.test"
FAKE_IP = "203.0.113.50"


@pytest.fixture(scope="module")
def burst_report(tmp_path_factory) -> Path:
    """bingbot twice in the same second under a 10 s Crawl-delay, on a long host name whose
    robots.txt changed once; spoofed bingbots fetch a disallowed path."""
    folder = tmp_path_factory.mktemp("details-burst")
    write_jsonl(folder / "robots.jsonl", [
        {"host": LONG_HOST, "effective_from": "2026-11-01T00:00:00Z", "status": 200,
         "body": "User-agent: *\nCrawl-delay: 10\nDisallow: /private/\n"},
        {"host": LONG_HOST, "effective_from": "2026-11-02T12:00:00Z", "status": 200,
         "body": "User-agent: *\nCrawl-delay: 10\nDisallow: /private/\nDisallow: /cart\n"},
    ])
    start = datetime(2026, 11, 2, 8, tzinfo=timezone.utc)
    lines = [log_line(LONG_HOST, start, "/a", BINGBOT), log_line(LONG_HOST, start, "/b", BINGBOT)]
    lines += [log_line(LONG_HOST, start + timedelta(minutes=i), "/private/x", BINGBOT) for i in range(1, 4)]
    lines += [log_line(LONG_HOST, start + timedelta(hours=6, minutes=i), "/private/y", BINGBOT, ip=FAKE_IP) for i in range(5)]
    (folder / "access.log").write_text("\n".join(lines) + "\n")
    out = folder / "out"
    assert run_audit([
        f"--logs={folder / 'access.log'}", "--log-format=host_combined", f"--robots={folder / 'robots.jsonl'}",
        f"--ranges={REPO / 'samples/ranges'}", f"--out={out}", "--runner=FnApiRunner",
    ]) == 0
    return out


def section(dom_text: str, ident: str) -> str:
    start = dom_text.index(f'<section id="{ident}"')
    return dom_text[start:dom_text.index("</section>", start)]


@pytest.mark.slow
def test_disallowed_requests_of_a_crawler_leave_out_those_spoofing_it(chromium, sample_run, tmp_path):
    dom_text, console = browse(chromium, sample_run / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    text = htmldom.read(section(dom_text, "disallowed")).text
    # The sample's Googlebot: 22 of its own requests within grace, 34 spoofed ones apart.
    assert "Googlebot: 22 requests disallowed of any kind (verified 22)" in text
    assert "Claimed Googlebot, not proven: 34 requests disallowed of any kind (spoofed 34)" in text
    assert "Googlebot: 56" not in text


@pytest.mark.slow
def test_a_spoofed_claim_is_listed_apart_with_its_identity(chromium, burst_report, tmp_path):
    dom_text, console = browse(chromium, burst_report / "report.html", tmp_path / "profile", "--dump-dom")
    assert console == []
    text = htmldom.read(section(dom_text, "disallowed")).text
    assert "bingbot: 3 requests disallowed of any kind (verified 3)" in text
    assert "Claimed bingbot, not proven: 5 requests disallowed of any kind (spoofed 5)" in text


@pytest.mark.slow
def test_a_zero_second_gap_draws_a_visible_bar(chromium, burst_report, tmp_path):
    dom_text, _ = browse(chromium, burst_report / "report.html", tmp_path / "profile", "--dump-dom")
    chart = section(dom_text, "crawl-delay")
    gap = re.search(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"[^>]*fill="#d62728"><title>bingbot \(verified\)[^<]*smallest gap 0 s', chart)
    assert gap is not None and float(gap.group(1)) >= 3
    assert "0 s" in htmldom.read(chart).text


@pytest.mark.slow
def test_two_robots_versions_are_two_colours_and_numbered(chromium, burst_report, tmp_path):
    dom_text, _ = browse(chromium, burst_report / "report.html", tmp_path / "profile", "--dump-dom")
    strip = section(dom_text, "robots-versions")
    fills = re.findall(r'<rect [^>]*fill="(#[0-9a-f]{6})"[^>]*class="version"', strip)
    assert len(fills) == 2 and fills[0] != fills[1]
    numbers = re.findall(r'class="version-number">(\d+)</text>', strip)
    assert numbers == ["1", "2"]


@pytest.mark.slow
def test_host_names_do_not_wrap_inside_a_name(chromium, burst_report, tmp_path):
    """The page as written, plus a script (the page's own policy runs none) that counts the
    lines each host cell takes in a narrow window."""
    page = (burst_report / "report.html").read_text()
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    probe = (
        "<script>addEventListener('load',()=>{const cells=[...document.querySelectorAll('td.host')];"
        "const lines=cells.map(c=>{const r=document.createRange();r.selectNodeContents(c);"
        "return new Set([...r.getClientRects()].map(x=>Math.round(x.top))).size});"
        "document.body.setAttribute('data-host-lines',lines.join(','))})</script>"
    )
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", probe + "</body>"))
    dom_text, _ = browse(chromium, probed, tmp_path / "profile", "--dump-dom", "--window-size=700,900")
    lines = re.search(r'data-host-lines="([\d,]*)"', dom_text).group(1).split(",")
    assert len(lines) >= 3 and set(lines) == {"1"}, lines
