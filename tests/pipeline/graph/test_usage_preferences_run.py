"""One run over an Apache log that logs the Content-Usage response header, on a site whose
robots.txt has a per-purpose group and a Content-Usage line in a crawler's own group: each verdict
carries the conflicts of every statement that refuses its crawler's purpose, the header as logged,
and the same access decision as without any of them; `lint` explains the file and `whatif` shows
the conflicts a proposal creates and removes, never those of the header."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import htmldom
from helpers import GOOGLEBOT, REPO, read_jsonl, run_audit, write_jsonl
from pipeline.cli import main as cli

HOST = "www.example.com"
ROBOTS = (
    "User-agent: *\n"                           # 1
    "Allow: /\n"                                # 2
    "\n"                                        # 3
    "User-agent: GPTBot\n"                      # 4
    "Allow: /\n"                                # 5
    "Content-Usage: /books/ train-ai=n\n"       # 6
    "\n"                                        # 7
    "User-agent: __usage_ai-training\n"         # 8
    "Disallow: /blog/drafts/\n"                 # 9
    "Allow: /blog/drafts/public/\n"             # 10
)
LOG_FORMAT = 'apache:%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" "%{Content-Usage}o"'
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"
CCBOT = "CCBot/2.0 (https://commoncrawl.org/faq/)"
GROUP_DRAFTS = "ai-training: __usage_ai-training Disallow: /blog/drafts/ line 9"
REQUESTS = [
    # (second, user agent, path, Content-Usage header as logged), and the conflicts it must carry
    (0, GPTBOT, "/blog/drafts/a", "-", (GROUP_DRAFTS,)),
    (1, GPTBOT, "/blog/drafts/public/a", "-", ()),
    (2, GPTBOT, "/books/1", "-", ("ai-training: train-ai=n",)),
    (3, GPTBOT, "/news/1", "train-ai=n", ("ai-training: Content-Usage header train-ai=n",)),
    (4, GPTBOT, "/news/2", "train-ai=y, search=y", ()),
    # the robots.txt line refuses what the header allows: the most restrictive holds
    (5, GPTBOT, "/books/2", "train-ai=y", ("ai-training: train-ai=n",)),
    # search first: a search engine is judged by search alone
    (6, GOOGLEBOT, "/blog/drafts/a", "train-ai=n", ()),
    # a crawler that falls to `*` is refused its training purpose by the per-purpose group all the same
    (7, CCBOT, "/blog/drafts/a", "-", (GROUP_DRAFTS,)),
]


def _line(second: int, agent: str, path: str, header: str) -> str:
    return (
        f'192.0.2.7 - - [02/Nov/2026:10:00:{second:02d} +0000] "GET {path} HTTP/1.1" 200 512 "-" "{agent}" "{header}"'
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("usage")
    write_jsonl(folder / "robots.jsonl", [{"host": HOST, "effective_from": "2026-11-01T00:00:00Z", "status": 200, "body": ROBOTS}])
    (folder / "access.log").write_text("".join(_line(*request[:4]) + "\n" for request in REQUESTS))
    argv = [
        f"--logs={folder / 'access.log'}", f"--log-format={LOG_FORMAT}", f"--default-host={HOST}",
        f"--robots={folder / 'robots.jsonl'}", f"--ranges={REPO / 'samples/ranges'}", f"--out={folder / 'out'}",
        "--runner=FnApiRunner",
    ]
    assert run_audit(argv) == 0
    return folder / "out"


def _verdicts(out: Path) -> dict[str, dict]:
    return {v["ts"][17:19]: v for v in read_jsonl(out / "verdicts")}


@pytest.mark.slow
def test_each_verdict_carries_the_conflicts_of_every_statement_that_refuses_its_purpose(run):
    verdicts = _verdicts(run)
    assert len(verdicts) == len(REQUESTS)
    for second, agent, path, header, conflicts in REQUESTS:
        verdict = verdicts[f"{second:02d}"]
        assert (verdict["path"], tuple(verdict["preference_conflicts"])) == (path, conflicts), second
        assert verdict["content_usage"] == (None if header == "-" else header), second
        # none of it is about access
        assert verdict["decision"] == "allowed" and verdict["robots_group"] != ["__usage_ai-training"], second


@pytest.mark.slow
def test_the_verdict_records_the_group_rule_and_the_header_in_the_indexing_facet(run):
    verdicts = _verdicts(run)
    assert verdicts["00"]["preferences"] == {
        "usage_groups": [
            {"group": "__usage_ai-training", "purpose": "ai-training", "rule": "disallow", "pattern": "/blog/drafts/", "line": 9}
        ],
    }
    assert verdicts["00"]["robots_group"] == ["GPTBot"] and verdicts["07"]["robots_group"] == ["*"]
    assert verdicts["01"]["preferences"]["usage_groups"][0]["rule"] == "allow"
    assert verdicts["02"]["preferences"] == {"content_usage": {"train-ai": "n"}, "content_usage_line": 6, "content_usage_path": "/books/"}
    assert verdicts["03"]["indexing"] == {"content_usage": {"train-ai": "n"}}
    assert verdicts["04"]["indexing"] == {"content_usage": {"train-ai": "y", "search": "y"}}
    assert verdicts["02"]["indexing"] is None


@pytest.mark.slow
def test_the_report_counts_the_conflicts_by_where_they_come_from(run):
    dom = htmldom.read((run / "report.html").read_text("utf-8"))
    rows = sorted((r[0], r[2], htmldom.number(r[3])) for r in dom.tables["conflicts-table"][1:])
    assert rows == [
        ("CCBot", GROUP_DRAFTS, 1),
        ("GPTBot", "ai-training: Content-Usage header train-ai=n", 1),
        ("GPTBot", GROUP_DRAFTS, 1),
        ("GPTBot", "ai-training: train-ai=n", 2),
    ]


def test_lint_explains_the_per_purpose_group_and_finds_nothing_wrong(tmp_path, capsys):
    robots_txt = tmp_path / "robots.txt"
    robots_txt.write_text(ROBOTS + "\nUser-agent: __usage_ai-crawling\nDisallow: /\n")
    assert cli.main(["lint", str(robots_txt)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{robots_txt}:8: note: usage-group: user-agent '__usage_ai-training' states the site's preference for ai-training (train-ai)")
    assert out[1].startswith(f"{robots_txt}:12: note: unknown-usage-group: ")
    assert out[2] == f"{robots_txt}: no findings"
    robots_txt.write_text("User-agent: *\nContent-Usage: train-genai=n\n")
    assert cli.main(["lint", str(robots_txt)]) == 1
    assert "2: obsolete-content-usage-label: content-usage: 'train-genai' is a label of earlier aipref drafts, read as train-ai" in capsys.readouterr().out


@pytest.mark.slow
def test_whatif_shows_the_conflicts_a_proposal_creates_and_removes_and_leaves_the_header_s(run, tmp_path, capsys):
    proposal = tmp_path / "proposal.txt"
    proposal.write_text(ROBOTS.replace("Disallow: /blog/drafts/", "Disallow: /news/"))
    assert cli.main(["whatif", str(run), "--host", HOST, "--proposed", str(proposal)]) == 0
    digest = json.loads((run / "whatif" / "summary.json").read_text("utf-8"))
    rows = {(r["change"], r["crawler"], r["conflict"]): r["requests"] for r in digest["preference_conflicts"]["rows"]}
    assert rows == {
        ("removed", "GPTBot", GROUP_DRAFTS): 1,
        ("removed", "CCBot", GROUP_DRAFTS): 1,
        ("created", "GPTBot", "ai-training: __usage_ai-training Disallow: /news/ line 9"): 2,
    }
    printed = capsys.readouterr().out
    assert "preference conflicts: 2 created, 2 removed" in printed
    assert "Disallow: /news/ line 9" in printed
