"""A run over a robots.txt history whose usage preferences change: each verdict carries the
preferences of the version in effect, and the conflicts follow them into the summary and report,
apart from the access decisions, which the preferences never change."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import htmldom
from helpers import jsonl_log_run, read_jsonl, run_audit, write_jsonl
from pipeline.cli import main as cli
from pipeline.report import text as text_report

HOST = "books.example.org"
BEFORE = "User-agent: *\nContent-Signal: search=yes, ai-train=no\nDisallow: /private/\n"
# The next version lifts the training refusal site-wide but keeps it for /books/ (aipref, by path),
# and asks search engines to stay out of the search index for /drafts/.
AFTER = (
    "User-agent: *\nContent-Signal: search=yes, ai-train=yes\nContent-Usage: /books/ train-ai=n\n"
    "Content-Usage: /drafts/ search=n\nDisallow: /private/\nLicense: https://books.example.org/license.xml\n"
)
GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"
BINGBOT = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"
REQUESTS = [
    # (time, user agent, path)
    ("2026-11-02T10:00:00Z", GPTBOT, "/books/1"),
    ("2026-11-02T10:00:01Z", GPTBOT, "/news/1"),
    ("2026-11-02T10:00:02Z", GPTBOT, "/private/x"),
    ("2026-11-02T10:00:03Z", BINGBOT, "/drafts/1"),
    ("2026-11-02T10:00:04Z", "python-requests/2.32.3", "/private/x"),
    ("2026-11-04T10:00:00Z", GPTBOT, "/books/1"),
    ("2026-11-04T10:00:01Z", GPTBOT, "/news/1"),
    ("2026-11-04T10:00:02Z", GPTBOT, "/private/x"),
    ("2026-11-04T10:00:03Z", BINGBOT, "/drafts/1"),
    ("2026-11-04T10:00:04Z", "python-requests/2.32.3", "/private/x"),
    ("2026-11-04T10:00:05Z", GPTBOT, "/llms.txt"),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("preferences"))


def _run(folder: Path, *extra: str) -> Path:
    write_jsonl(folder / "robots.jsonl", [
        {"host": HOST, "effective_from": "2026-11-01T00:00:00Z", "status": 200, "body": BEFORE},
        {"host": HOST, "effective_from": "2026-11-03T00:00:00Z", "status": 200, "body": AFTER},
    ])
    lines = [
        {"ts": ts, "ip": "192.0.2.7", "host": HOST, "method": "GET", "target": path, "status": 200, "ua": ua}
        for ts, ua, path in REQUESTS
    ]
    argv = jsonl_log_run(folder, lines, *extra)
    assert run_audit(argv) == 0
    return folder / "out"


@pytest.mark.slow
def test_truncated_addresses_in_the_written_verdicts(tmp_path):
    out = _run(tmp_path, "--truncate-addresses")
    addresses = {(v["client_kind"], v["identity"]): v["client_ip"] for v in read_jsonl(out / "verdicts")}
    assert addresses[("automated", "unverifiable")] == "192.0.2.0/24"
    assert addresses[("crawler", "spoofed")] == "192.0.2.7"  # the evidence that the claim is false


def _verdicts(out: Path) -> dict[tuple[str, str], dict]:
    return {(v["ts"][:10], v["path"] + " " + (v["crawler"] or "")): v for v in read_jsonl(out / "verdicts")}


@pytest.mark.slow
def test_conflicts_follow_the_version_in_effect(run):
    verdicts = _verdicts(run)
    assert len(verdicts) == len(REQUESTS)
    conflicts = {key: tuple(v["preference_conflicts"]) for key, v in verdicts.items() if v["preference_conflicts"]}
    assert conflicts == {
        # before: ai-train=no for every path of the group, allowed or not
        ("2026-11-02", "/books/1 GPTBot"): ("ai-training: ai-train=no",),
        ("2026-11-02", "/news/1 GPTBot"): ("ai-training: ai-train=no",),
        ("2026-11-02", "/private/x GPTBot"): ("ai-training: ai-train=no",),
        # after: only where the aipref rule's path matches
        ("2026-11-04", "/books/1 GPTBot"): ("ai-training: train-ai=n",),
        ("2026-11-04", "/drafts/1 bingbot"): ("search-engine: search=n",),
    }
    after = verdicts["2026-11-04", "/books/1 GPTBot"]["preferences"]
    assert after == {
        "content_signal": {"search": "yes", "ai-train": "yes"}, "content_signal_lines": [2],
        "content_usage": {"train-ai": "n"}, "content_usage_line": 3, "content_usage_path": "/books/",
        "license": ["https://books.example.org/license.xml"],
    }
    # The preferences change no access decision.
    assert {key: v["decision"] for key, v in verdicts.items() if key[1].startswith("/private/")} == {
        ("2026-11-02", "/private/x GPTBot"): "disallowed", ("2026-11-02", "/private/x python-requests"): "disallowed",
        ("2026-11-04", "/private/x GPTBot"): "disallowed", ("2026-11-04", "/private/x python-requests"): "disallowed",
    }
    assert all(v["decision"] == "allowed" for key, v in verdicts.items() if not key[1].startswith("/private/"))


def test_the_summary_and_the_report_count_conflicts_apart_from_violations(run):
    summary = {(r["crawler"], r["client_kind"]): r for r in read_jsonl(run / "summary", "part*")}
    gptbot = summary["GPTBot", "crawler"]
    assert (gptbot["requests"], gptbot["disallowed"], gptbot["preference_conflicts"]) == (7, 2, 4)
    assert gptbot["purpose"] == ["ai-training"]
    assert summary["bingbot", "crawler"]["preference_conflicts"] == 1
    automated = summary["python-requests", "automated"]
    assert (automated["identity"], automated["disallowed"], automated["preference_conflicts"]) == ("unverifiable", 2, 0)
    dom = htmldom.read((run / "report.html").read_text("utf-8"))
    rows = dom.tables["conflicts-table"][1:]
    assert sorted((r[0], r[2], htmldom.number(r[3])) for r in rows) == [
        ("GPTBot", "ai-training: ai-train=no", 3), ("GPTBot", "ai-training: train-ai=n", 1),
        ("bingbot", "search-engine: search=n", 1),
    ]
    assert dom.tables["llms-txt-table"][1:] == [["GPTBot", gptbot["identity"], "/llms.txt", "1"]]
    summary_text = text_report.render(text_report.load(str(run)))
    conflicts_at = summary_text.index("preference conflicts:")
    assert "GPTBot" in summary_text[conflicts_at:] and "automated clients   " in summary_text
    automated_at = summary_text.index("automated clients: audited")
    assert "python-requests" in summary_text[automated_at:] and "python-requests" not in summary_text[:automated_at]


def test_whatif_shows_the_conflicts_a_proposal_creates_and_removes(run, tmp_path):
    proposal = tmp_path / "proposal.txt"
    # No training anywhere, search welcome again in /drafts/, and GPTBot shut out of /news/.
    proposal.write_text("User-agent: *\nContent-Signal: ai-train=no\nDisallow: /private/\n\nUser-agent: GPTBot\nDisallow: /news/\n")
    assert cli.main(["whatif", str(run), "--host", HOST, "--proposed", str(proposal)]) == 0
    digest = json.loads((run / "whatif" / "summary.json").read_text("utf-8"))
    rows = {(r["change"], r["crawler"], r["conflict"]): r["requests"] for r in digest["preference_conflicts"]["rows"]}
    assert rows == {
        # GPTBot's own group states no preference: every conflict it had goes
        ("removed", "GPTBot", "ai-training: ai-train=no"): 3,
        ("removed", "GPTBot", "ai-training: train-ai=n"): 1,
        ("removed", "bingbot", "search-engine: search=n"): 1,
    }
    assert (digest["preference_conflicts"]["created"], digest["preference_conflicts"]["removed"]) == (0, 5)
    assert digest["by_purpose"] == {"ai-training": {"allowed-to-disallowed": 2, "disallowed-to-allowed": 2}}
    again = tmp_path / "again.html"
    assert cli.main(["report", str(run), "--html", str(again)]) == 0
    dom = htmldom.read(again.read_text("utf-8"))
    assert len(dom.tables["whatif-conflicts-table"]) == 4


def test_whatif_counts_conflicts_a_proposal_creates(run, tmp_path):
    proposal = tmp_path / "strict.txt"
    proposal.write_text("User-agent: *\nContent-Usage: all=n\nDisallow: /private/\n")
    assert cli.main(["whatif", str(run), "--host", HOST, "--proposed", str(proposal)]) == 0
    digest = json.loads((run / "whatif" / "summary.json").read_text("utf-8"))
    created = {(r["crawler"], r["conflict"]): r["requests"] for r in digest["preference_conflicts"]["rows"] if r["change"] == "created"}
    # `all` is read as the three categories; a request that already had the conflict gains none
    assert created == {("GPTBot", "ai-training: train-ai=n"): 6, ("bingbot", "search-engine: search=n"): 1}
