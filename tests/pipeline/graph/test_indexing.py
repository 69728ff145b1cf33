"""The indexing facet in real pipeline runs: separate from the crawl decision, in both directions."""
from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from helpers import BINGBOT, GOOGLEBOT, read_jsonl, run_audit, run_settings, write_jsonl
from pipeline.graph import build as graph
from pipeline.report import text as report

ROBOTS = "User-agent: *\nDisallow: /private/\n"


def _line(ip: str, when: str, path: str, ua: str, x_robots_tag: str = "-") -> str:
    return f'{ip} - - [{when}] "GET {path} HTTP/1.1" 200 100 "-" "{ua}" "{x_robots_tag}"'


LINES = [
    # crawl allowed, indexing forbidden (by the header, for Googlebot only)
    _line("198.51.100.1", "02/Nov/2026:10:00:00 +0000", "/report.pdf", GOOGLEBOT, "googlebot: noindex"),
    # the same header says nothing to bingbot: allowed and nothing restricted
    _line("198.51.100.2", "02/Nov/2026:10:01:00 +0000", "/report.pdf", BINGBOT, "googlebot: noindex"),
    # crawl disallowed while the page relies on noindex (from the table): the noindex is never seen
    _line("198.51.100.1", "02/Nov/2026:10:02:00 +0000", "/private/old", GOOGLEBOT),
    # crawl disallowed, page indexable: no finding, but the facet still says unseen
    _line("198.51.100.1", "02/Nov/2026:10:03:00 +0000", "/private/open", GOOGLEBOT),
    # crawled after unavailable_after
    _line("198.51.100.2", "02/Nov/2026:10:04:00 +0000", "/sale", BINGBOT),
    # no source covers it
    _line("198.51.100.2", "02/Nov/2026:10:05:00 +0000", "/plain", BINGBOT),
]
PAGES = [
    {"host": "example.com", "path": "/private/old", "effective_from": "2026-11-01T00:00:00Z",
     "x_robots_tag": ["noindex"]},
    {"host": "example.com", "path": "/private/open", "effective_from": "2026-11-01T00:00:00Z",
     "meta_robots": [{"name": "robots", "content": "all"}]},
    {"host": "example.com", "path": "/sale", "effective_from": "2026-11-01T00:00:00Z",
     "x_robots_tag": ["unavailable_after: 2026-11-02T00:00:00Z", "bingbot: max-snippet: 20"]},
]
EXPECTED = [
    ("/report.pdf", "Googlebot", "allowed", {"noindex": True}, False),
    ("/report.pdf", "bingbot", "allowed", {}, False),
    ("/private/old", "Googlebot", "disallowed", {"noindex": True}, True),
    ("/private/open", "Googlebot", "disallowed", {}, True),
    ("/sale", "bingbot", "allowed", {"max-snippet": 20, "unavailable_after": "2026-11-02T00:00:00Z"}, False),
    ("/plain", "bingbot", "allowed", None, False),
]


@pytest.fixture
def fixture_dir(tmp_path: Path) -> Path:
    (tmp_path / "access.log").write_text("\n".join(LINES) + "\n")
    write_jsonl(tmp_path / "robots.jsonl",
                [{"host": "example.com", "effective_from": "2026-11-01T00:00:00Z", "status": 200, "body": ROBOTS}])
    write_jsonl(tmp_path / "pages.jsonl", PAGES)
    (tmp_path / "ranges").mkdir()
    return tmp_path


def _argv(folder: Path) -> list[str]:
    return [
        f"--logs={folder / 'access.log'}",
        "--log-format=combined_xrt",
        "--default-host=example.com",
        f"--robots={folder / 'robots.jsonl'}",
        f"--page-directives={folder / 'pages.jsonl'}",
        f"--ranges={folder / 'ranges'}",
        f"--out={folder / 'out'}",
        "--runner=FnApiRunner",
    ]


@pytest.mark.slow
def test_crawl_decision_and_indexing_facet_stay_separate(fixture_dir):
    settings, options = run_settings(_argv(fixture_dir))
    with TestPipeline(options=options) as p:
        verdicts = graph.build(p, settings)["verdict_batches"] | beam.FlatMap(graph.verdict_rows)
        facets = verdicts | beam.Map(
            lambda v: (v["path"], v["crawler"], v["decision"], v["indexing"], v["indexing_unseen"])
        )
        assert_that(facets, equal_to(EXPECTED))


@pytest.mark.slow
def test_report_lists_unseen_noindex_and_expired_pages(fixture_dir, capsys):
    run_audit(_argv(fixture_dir))
    findings = report.load(str(fixture_dir / "out")).indexing_findings
    assert sorted((f["finding"], f["path"], f["crawler"], f["requests"]) for f in findings) == [
        ("crawled-after-unavailable", "/sale", "bingbot", 1),
        ("noindex-unseen", "/private/old", "Googlebot", 1),
    ]
    printed = capsys.readouterr().out
    assert "disallowed yet relying on noindex" in printed and "/private/old" in printed
    written = read_jsonl(fixture_dir / "out" / "verdicts", "part*")
    pdf = next(v for v in written if v["path"] == "/report.pdf" and v["crawler"] == "Googlebot")
    assert (pdf["decision"], pdf["indexing"], pdf["indexing_unseen"]) == ("allowed", {"noindex": True}, False)
