"""Range evidence over time, end to end: mirrors of range files in git imported with
`update-ranges import-git`, a snapshot saved later as `update-ranges` saves one, one `run` over a
log of dated claims, and `verify --at` on each: every verdict with its evidence, and the `ranges`
run-health check naming the sources without a snapshot within the window.

The histories: an address added between two snapshots, a mirror with no commit for 162 days, a
mirror that stops months before the next snapshot, a source with only one snapshot (what a new
user has), and one crawler published in three files. Prefixes are documentation and shared
address space (RFC 5737, RFC 6598) or the operators' own, never a real crawler's address.
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from pipeline.report.health import findings

from helpers import GOOGLEBOT, crawl_audit, git_commit, git_in, log_line, read_jsonl, run_audit, write_jsonl

pytestmark = pytest.mark.slow

GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)"
FEEDFETCHER = "FeedFetcher-Google; (+http://www.google.com/feedfetcher.html)"
DNS_OFF = "dns-off: needs reverse DNS; "


def ranges_file(*prefixes: str) -> bytes:
    return json.dumps({"prefixes": [{"ipv4Prefix": p} for p in prefixes]}, indent=1).encode()


def google_mirror(root: Path) -> Path:
    """Google's common-crawler file: 66.249.80.0/20 added on 2025-02-01, then no commit for 162
    days until 66.249.96.0/20 is added on 2025-07-13; the mirror's last commit is on 2025-08-01."""
    repo = root / "google-mirror"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2025-01-10T09:00:00Z", {"common.json": ranges_file("66.249.64.0/20")})
    git_commit(repo, "2025-02-01T09:00:00Z", {"common.json": ranges_file("66.249.64.0/20", "66.249.80.0/20")})
    git_commit(repo, "2025-07-13T09:00:00Z", {"common.json": ranges_file("66.249.64.0/20", "66.249.80.0/20", "66.249.96.0/20")})
    git_commit(repo, "2025-08-01T09:00:00Z", {"README.md": b"mirror, no longer updated\n"})
    return repo


def user_triggered_mirror(root: Path) -> Path:
    """Two of the three files of Google's user-triggered fetchers from 2025-10-01, the third
    from 2026-01-10, the mirror's HEAD."""
    repo = root / "user-triggered-mirror"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2025-10-01T09:00:00Z", {
        "fetchers.json": ranges_file("192.0.2.0/24"), "fetchers-google.json": ranges_file("198.51.100.0/24"),
    })
    git_commit(repo, "2026-01-10T09:00:00Z", {"agents.json": ranges_file("100.64.0.0/24")})
    return repo


# request day, client, User-Agent -> identity, evidence (without the dns-off preface)
CASES = [
    # published between two snapshots: the later one, 13 days after the request, proves it
    ("2025-01-19", "66.249.80.5", GOOGLEBOT, "verified",
     "66.249.80.0/20 in google-common-crawlers snapshot 2025-02-01 (later: 13 days after the request)"),
    # after 162 days without a commit, the next version lists the address 12 days after the request
    ("2025-07-01", "66.249.96.5", GOOGLEBOT, "verified",
     "66.249.96.0/20 in google-common-crawlers snapshot 2025-07-13 (later: 12 days after the request)"),
    # in the middle of the gap the version before it stood, and does not list the fake
    ("2025-04-20", "203.0.113.5", GOOGLEBOT, "spoofed", "not in google-common-crawlers snapshot 2025-02-01"),
    # the mirror stopped on 2025-08-01, the next snapshot is from 2026-03-01: nothing speaks for November
    ("2025-11-01", "203.0.113.5", GOOGLEBOT, "unverified",
     "no snapshot of google-common-crawlers within 30 days of 2025-11-01 (nearest 2025-08-01, 92 days before the request)"),
    ("2025-11-01", "66.249.96.5", GOOGLEBOT, "verified",
     "66.249.96.0/20 in google-common-crawlers snapshot 2025-08-01 (stale: 92 days before the request)"),
    # the fresh snapshot speaks for the days before it
    ("2026-02-20", "203.0.113.5", GOOGLEBOT, "spoofed", "not in google-common-crawlers snapshot 2026-03-01"),
    ("2026-02-20", "66.249.112.5", GOOGLEBOT, "verified",
     "66.249.112.0/20 in google-common-crawlers snapshot 2026-03-01 (later: 9 days after the request)"),
    # a new user's one snapshot proves a fake from ten days ago, and says nothing of 40 days ago
    ("2026-02-19", "203.0.113.9", GPTBOT, "spoofed", "not in openai-gptbot snapshot 2026-03-01"),
    ("2026-02-19", "20.171.206.9", GPTBOT, "verified",
     "20.171.206.0/24 in openai-gptbot snapshot 2026-03-01 (later: 10 days after the request)"),
    ("2026-01-20", "203.0.113.9", GPTBOT, "unverified",
     "no snapshot of openai-gptbot within 30 days of 2026-01-20 (nearest 2026-03-01, 40 days after the request)"),
    # three files for one crawler: one without a snapshot near the request proves nothing absent
    ("2025-11-01", "203.0.113.7", FEEDFETCHER, "unverified",
     "no snapshot of google-user-triggered-agents within 30 days of 2025-11-01 (nearest 2026-01-10, 70 days after"
     " the request); not in google-user-triggered-fetchers snapshot 2025-10-01,"
     " google-user-triggered-fetchers-google snapshot 2025-10-01"),
    ("2026-01-05", "203.0.113.7", FEEDFETCHER, "spoofed",
     "not in the 2 snapshots of google-user-triggered-fetchers from 2025-10-01 to 2026-01-10,"
     " the 2 snapshots of google-user-triggered-fetchers-google from 2025-10-01 to 2026-01-10,"
     " google-user-triggered-agents snapshot 2026-01-10"),
    ("2025-12-20", "100.64.0.9", FEEDFETCHER, "verified",
     "100.64.0.0/24 in google-user-triggered-agents snapshot 2026-01-10 (later: 21 days after the request)"),
]


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> tuple[Path, Path]:
    """The ranges folder and the run folder of one run over CASES."""
    root = tmp_path_factory.mktemp("over-time")
    ranges = root / "ranges"
    user_triggered = user_triggered_mirror(root)
    imports = [
        (google_mirror(root), "common.json", "google-common-crawlers"),
        *((user_triggered, f"{name}.json", f"google-user-triggered-{name}") for name in ("fetchers", "fetchers-google", "agents")),
    ]
    for repo, path, source in imports:
        assert crawl_audit(["update-ranges", "import-git", str(repo), path, "--source", source, "--ranges", str(ranges)]) == 0
    # saved as `update-ranges` saves a download: one file named by its day
    (ranges / "google-common-crawlers" / "2026-03-01.json").write_bytes(
        ranges_file("66.249.64.0/20", "66.249.80.0/20", "66.249.96.0/20", "66.249.112.0/20")
    )
    (ranges / "openai-gptbot").mkdir()
    (ranges / "openai-gptbot" / "2026-03-01.json").write_bytes(ranges_file("20.171.206.0/24"))
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    write_jsonl(root / "robots.jsonl", [
        {"host": "example.com", "effective_from": "2024-01-01T00:00:00Z", "status": 200, "body_file": "robots.txt"},
    ])
    lines = [
        log_line("example.com", datetime.fromisoformat(f"{day}T12:00:00+00:00"), "/", agent, ip=ip)
        for day, ip, agent, _, _ in CASES
    ]
    (root / "access.log").write_text("\n".join(lines) + "\n")
    out = root / "out"
    assert run_audit([
        f"--logs={root / 'access.log'}", "--log-format=host_combined", f"--robots={root / 'robots.jsonl'}",
        f"--ranges={ranges}", f"--out={out}", "--runner=FnApiRunner",
    ]) == 0
    return ranges, out


def test_import_records_how_long_each_version_stood(audited):
    ranges, _ = audited
    recorded = json.loads((ranges / "google-common-crawlers" / "span-ends.json").read_text())
    assert recorded == {
        "2025-01-10": "2025-01-31", "2025-02-01": "2025-07-12", "2025-07-13": "2025-07-31", "2025-08-01": "2025-08-01",
    }


def test_each_run_verdict_and_its_evidence(audited):
    _, out = audited
    verdicts = sorted(read_jsonl(out / "verdicts"), key=lambda v: int(v["source"].rsplit(":", 1)[1]))
    got = [(v["identity"], v["identity_evidence"].removeprefix(DNS_OFF)) for v in verdicts]
    assert got == [(identity, evidence) for *_, identity, evidence in CASES]


@pytest.mark.parametrize("day, ip, agent, identity, evidence", CASES)
def test_verify_at_the_request_time_says_the_same(audited, capsys, day, ip, agent, identity, evidence):
    ranges, _ = audited
    capsys.readouterr()
    status = crawl_audit(["verify", ip, agent, "--ranges", str(ranges), "--at", f"{day}T12:00:00Z", "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert (shown["identity"], shown["evidence"].removeprefix(DNS_OFF)) == (identity, evidence)
    assert status == (0 if identity == "verified" else 1)


def test_verify_lists_the_snapshots_within_the_window_of_each_source(audited, capsys):
    ranges, _ = audited
    capsys.readouterr()
    crawl_audit(["verify", "203.0.113.7", FEEDFETCHER, "--ranges", str(ranges), "--at", "2025-11-01T12:00:00Z"])
    shown = capsys.readouterr().out
    assert "  ranges:   google-user-triggered-fetchers: snapshot 2025-10-01\n" in shown
    assert "            google-user-triggered-fetchers-google: snapshot 2025-10-01\n" in shown
    assert (
        "            google-user-triggered-agents: none within 30 days (nearest 2026-01-10, 70 days after the request)"
        in shown
    )


def test_a_narrower_window_makes_a_late_publication_no_proof(audited, capsys):
    ranges, _ = audited
    capsys.readouterr()
    argv = ["verify", "66.249.80.5", GOOGLEBOT, "--ranges", str(ranges), "--at", "2025-01-19T12:00:00Z", "--json"]
    assert crawl_audit([*argv, "--range-window", "10"]) == 1
    shown = json.loads(capsys.readouterr().out)
    assert (shown["identity"], shown["evidence"].removeprefix(DNS_OFF)) == (
        "spoofed", "not in google-common-crawlers snapshot 2025-01-10"
    )
    assert shown["range_window"] == 10


def test_run_health_names_the_sources_without_a_snapshot_within_the_window(audited):
    _, out = audited
    (found,) = [finding for finding in findings(str(out)) if finding.check == "ranges"]
    assert "3 crawler requests could be neither verified nor proven spoofed" in found.problem
    assert (
        "no snapshot within --range-window days of the requests of google-common-crawlers,"
        " google-user-triggered-agents, openai-gptbot" in found.problem
    )
    assert "Googlebot 1" in found.problem and "GPTBot 1" in found.problem and "FeedFetcher-Google 1" in found.problem
    assert "Run health" in (out / "report.html").read_text() and "google-user-triggered-agents" in (out / "report.html").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["range_window"] == 30
