"""`crawl-audit update-ranges import-git` on a repository the test makes, then `run` and `verify`
against the snapshots it wrote: requests before, between and after them."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from config.registry import default_registry
from config.snapshots import load_ranges
from pipeline.evidence.ranges_git import import_range_history

from helpers import GOOGLEBOT, crawl_audit, git_commit, git_in, log_line, read_jsonl, run_audit, write_jsonl

GPTBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)"


def google_file(*prefixes: str) -> bytes:
    document = {"creationTime": "2026-03-01T00:00:00.000000", "prefixes": [{"ipv4Prefix": p} for p in prefixes]}
    return json.dumps(document, indent=2).encode()


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    """A mirror of Google's JSON file and of a plain list of GPTBot's prefixes."""
    repo = tmp_path / "mirror"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2026-03-01T08:00:00Z", {
        "google/common-crawlers.json": google_file("66.249.64.0/19"),
        "openai/gptbot.txt": b"# GPTBot\n20.171.206.0/24\n",
    })
    # the same UTC day: this later commit gives the day's snapshot
    git_commit(repo, "2026-03-01T20:00:00Z", {"google/common-crawlers.json": google_file("66.249.64.0/19", "66.249.96.0/20")})
    # 2026-04-01 08:00 UTC
    git_commit(repo, "2026-04-01T10:00:00+02:00", {
        "google/common-crawlers.json": google_file("66.249.96.0/20"),
        "openai/gptbot.txt": b"# GPTBot\n20.171.206.0/24\n20.171.207.0/24\n0.0.0.0/0\nnot-a-prefix\n",
    })
    # the mirror is alive on 2026-04-20 with neither file changed
    git_commit(repo, "2026-04-20T06:00:00Z", {"README.md": b"mirror of published crawler ranges\n"})
    return repo


def test_each_day_a_file_changed_becomes_a_snapshot_current_to_head(mirror, tmp_path):
    ranges = tmp_path / "ranges"
    source = default_registry().range_sources["google-common-crawlers"]
    result = import_range_history(mirror, ["google/common-crawlers.json"], source, ranges)
    assert [d.isoformat() for d in result.days] == ["2026-03-01", "2026-04-01", "2026-04-20"]
    assert result.current_to.isoformat() == "2026-04-20"
    assert (len(result.written), result.already_there, result.problems) == (3, 0, ())
    folder = ranges / "google-common-crawlers"
    # the operator's JSON is kept byte for byte; the day's last commit won
    assert (folder / "2026-03-01.json").read_bytes() == google_file("66.249.64.0/19", "66.249.96.0/20")
    assert (folder / "2026-04-20.json").read_bytes() == google_file("66.249.96.0/20")

    again = import_range_history(mirror, ["google/common-crawlers.json"], source, ranges)
    assert (again.written, again.already_there) == ((), 3)
    # an interrupted import finishes when run again
    (folder / "2026-04-01.json").unlink()
    resumed = import_range_history(mirror, ["google/common-crawlers.json"], source, ranges)
    assert (resumed.written, resumed.already_there) == ((folder / "2026-04-01.json",), 2)


def test_a_plain_list_is_saved_as_the_operators_json_without_refused_prefixes(mirror, tmp_path, capsys):
    ranges = tmp_path / "ranges"
    status = crawl_audit([
        "update-ranges", "--ranges", str(ranges), "import-git", str(mirror), "openai/gptbot.txt", "--source", "openai-gptbot",
    ])
    out = capsys.readouterr().out
    assert status == 1  # two lines were reported
    assert "openai-gptbot: 3 daily snapshots 2026-03-01 .. 2026-04-20 (current to main, 2026-04-20): 3 written" in out
    assert "line 4 0.0.0.0/0 is broader than /8, the broadest prefix accepted for IPv4; ignored" in out
    assert "line 5 'not-a-prefix' is not an IP prefix; ignored" in out
    saved = json.loads((ranges / "openai-gptbot" / "2026-04-01.json").read_text())
    assert saved == {"prefixes": [{"ipv4Prefix": "20.171.206.0/24"}, {"ipv4Prefix": "20.171.207.0/24"}]}
    index = load_ranges(ranges)
    assert index.problems == ()  # what the audit would refuse was never saved


def test_a_merged_change_counts_on_its_merge_day_and_a_renamed_file_is_followed(tmp_path, capsys):
    repo = tmp_path / "mirror"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2026-03-01T08:00:00Z", {"gptbot.txt": b"20.171.206.0/24\n"})
    git_in(repo, "checkout", "-q", "-b", "update")
    git_commit(repo, "2026-03-10T08:00:00Z", {"gptbot.txt": b"20.171.207.0/24\n"})
    git_in(repo, "checkout", "-q", "main")
    git_in(repo, "merge", "-q", "--no-ff", "update", "-m", "merge", when="2026-03-12T08:00:00Z")
    git_in(repo, "mv", "gptbot.txt", "openai-gptbot.txt")
    git_commit(repo, "2026-03-20T08:00:00Z", {})
    ranges = tmp_path / "ranges"
    status = crawl_audit([
        "update-ranges", "--ranges", str(ranges), "import-git", str(repo), "openai-gptbot.txt", "--source", "openai-gptbot",
    ])
    assert status == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("openai-gptbot: 3 daily snapshots 2026-03-01 .. 2026-03-20 (current to main, 2026-03-20)")
    assert out[1:] == [
        "  read main, first-parent history:",
        "    openai-gptbot.txt  2026-03-20T08:00:00Z .. today (main at 2026-03-20T08:00:00Z)",
        "    gptbot.txt  2026-03-01T08:00:00Z .. 2026-03-20T08:00:00Z",
    ]
    assert sorted(path.name for path in (ranges / "openai-gptbot").glob("20*.json")) == [
        "2026-03-01.json", "2026-03-12.json", "2026-03-20.json",  # the merge's day, not the branch commit's
    ]


def test_import_mistakes_are_one_line(mirror, tmp_path, capsys):
    ranges = str(tmp_path / "ranges")
    assert crawl_audit(["update-ranges", "import-git", str(mirror), "x.json", "--source", "no-such", "--ranges", ranges]) == 2
    assert "unknown range source no-such" in capsys.readouterr().err
    assert crawl_audit(["update-ranges", "import-git", str(tmp_path), "x.json", "--source", "bingbot", "--ranges", ranges]) == 2
    assert capsys.readouterr().err.startswith("crawl-audit: git rev-parse in ")
    assert crawl_audit(["update-ranges", "import-git", str(mirror), "missing.json", "--source", "bingbot", "--ranges", ranges]) == 1
    assert "bingbot: no usable version of missing.json" in capsys.readouterr().out


# request day, client, claimed crawler -> identity, evidence
CASES = [
    ("2026-01-15", "66.249.64.5", GOOGLEBOT, "unverified",
     "no snapshot of google-common-crawlers within 30 days of 2026-01-15 (nearest 2026-03-01, 45 days after the request)"),
    ("2026-02-10", "66.249.64.5", GOOGLEBOT, "verified", "66.249.64.0/19 in google-common-crawlers snapshot 2026-03-01 (later: 19 days after the request)"),
    ("2026-02-10", "203.0.113.5", GOOGLEBOT, "spoofed", "not in google-common-crawlers snapshot 2026-03-01"),
    ("2026-03-15", "66.249.96.9", GOOGLEBOT, "verified", "66.249.96.0/20 in google-common-crawlers snapshot 2026-03-01"),
    ("2026-04-10", "66.249.64.5", GOOGLEBOT, "verified",
     "66.249.64.0/19 in google-common-crawlers snapshot 2026-03-01 (earlier: stood to 2026-03-31, 10 days before the request)"),
    ("2026-04-10", "203.0.113.5", GOOGLEBOT, "spoofed", "not in the 3 snapshots of google-common-crawlers from 2026-03-01 to 2026-04-20"),
    ("2026-05-15", "66.249.96.9", GOOGLEBOT, "verified",
     "66.249.96.0/20 in google-common-crawlers snapshot 2026-04-20 (earlier: 25 days before the request)"),
    ("2026-06-01", "203.0.113.5", GOOGLEBOT, "unverified",
     "no snapshot of google-common-crawlers within 30 days of 2026-06-01 (nearest 2026-04-20, 42 days before the request)"),
    ("2026-03-10", "20.171.207.9", GPTBOT, "verified", "20.171.207.0/24 in openai-gptbot snapshot 2026-04-01 (later: 22 days after the request)"),
    ("2026-04-10", "20.171.207.9", GPTBOT, "verified", "20.171.207.0/24 in openai-gptbot snapshot 2026-04-01"),
]


@pytest.mark.slow
def test_run_and_verify_judge_requests_before_between_and_after_the_snapshots(mirror, tmp_path, capsys):
    ranges = tmp_path / "ranges"
    for path, source in (("google/common-crawlers.json", "google-common-crawlers"), ("openai/gptbot.txt", "openai-gptbot")):
        crawl_audit(["update-ranges", "import-git", str(mirror), path, "--source", source, "--ranges", str(ranges)])
    (tmp_path / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    write_jsonl(tmp_path / "robots.jsonl", [
        {"host": "example.com", "effective_from": "2025-01-01T00:00:00Z", "status": 200, "body_file": "robots.txt"},
    ])
    lines = [
        log_line("example.com", datetime.fromisoformat(f"{day}T12:00:00+00:00"), "/", agent, ip=ip)
        for day, ip, agent, _, _ in CASES
    ]
    (tmp_path / "access.log").write_text("\n".join(lines) + "\n")
    assert run_audit([
        f"--logs={tmp_path / 'access.log'}", "--log-format=host_combined", f"--robots={tmp_path / 'robots.jsonl'}",
        f"--ranges={ranges}", f"--out={tmp_path / 'out'}", "--runner=FnApiRunner",
    ]) == 0
    verdicts = sorted(read_jsonl(tmp_path / "out" / "verdicts"), key=lambda v: int(v["source"].rsplit(":", 1)[1]))
    dns_off = "dns-off: needs reverse DNS; "
    got = [(v["identity"], v["identity_evidence"].removeprefix(dns_off)) for v in verdicts]
    assert got == [(identity, evidence) for *_, identity, evidence in CASES]

    capsys.readouterr()
    for day, ip, agent, identity, evidence in CASES:
        status = crawl_audit(["verify", ip, agent, "--ranges", str(ranges), "--at", f"{day}T12:00:00Z", "--json"])
        shown = json.loads(capsys.readouterr().out)
        assert (shown["identity"], shown["evidence"].removeprefix(dns_off)) == (identity, evidence)
        assert status == (0 if identity == "verified" else 1)


def test_a_later_import_carries_the_last_version_on_to_the_new_head(mirror, tmp_path):
    ranges = tmp_path / "ranges"
    source = default_registry().range_sources["google-common-crawlers"]
    import_range_history(mirror, ["google/common-crawlers.json"], source, ranges)
    spans = ranges / "google-common-crawlers" / "span-ends.json"
    assert json.loads(spans.read_text()) == {"2026-03-01": "2026-03-31", "2026-04-01": "2026-04-19", "2026-04-20": "2026-04-20"}
    git_commit(mirror, "2026-05-10T06:00:00Z", {"README.md": b"still mirrored\n"})
    import_range_history(mirror, ["google/common-crawlers.json"], source, ranges)
    # the old HEAD's day is no end any more: the version of 2026-04-01 stood until the new HEAD
    assert json.loads(spans.read_text()) == {"2026-03-01": "2026-03-31", "2026-04-01": "2026-05-09", "2026-05-10": "2026-05-10"}
    index = load_ranges(ranges)
    assert [(s.first.isoformat(), s.last.isoformat()) for s in index.spans("google-common-crawlers")] == [
        ("2026-03-01", "2026-03-31"), ("2026-04-01", "2026-04-19"), ("2026-04-20", "2026-05-09"), ("2026-05-10", "2026-05-10"),
    ]
