"""`crawl-audit history import-git`, `history show` and `history diff` on a repository the test makes."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from pipeline.cli import main as cli
from pipeline.evidence.git_history import GitError, import_git, read_deploys
from pipeline.evidence.robots_table import read_robots_table

from helpers import git_commit, git_in

V1 = b"User-agent: *\nDisallow: /private\n\nUser-agent: Googlebot\nUser-agent: Bingbot\nDisallow: /tmp\n"
V2 = b"User-agent: *\nAllow: /private\nDisallow: /search\nCrawl-delay: 5\n\nUser-agent: Googlebot\nUser-agent: Bingbot\nDisallow: /tmp\n"


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "site"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    commits = [
        git_commit(repo, "2026-01-01T10:00:00Z", {"public/robots.txt": V1}),
        git_commit(repo, "2026-01-02T10:00:00Z", {"public/index.html": b"<html></html>"}),
        git_commit(repo, "2026-02-01T10:00:00+02:00", {"public/robots.txt": V2}),
        git_commit(repo, "2026-03-01T10:00:00Z", {"public/robots.txt": None}),
        git_commit(repo, "2026-04-01T10:00:00Z", {"public/robots.txt": V1}),
    ]
    return repo, commits


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def test_one_version_per_commit_that_changed_the_file(repo, tmp_path):
    path, _ = repo
    result = import_git(path, "public/robots.txt", "site.example", tmp_path / "captures")
    assert (result.versions, len(result.written), result.already_there) == (4, 4, 0)
    versions = read_robots_table(str(tmp_path / "captures"))
    assert [(v.effective_from, v.status, v.body, v.observed_before) for v in versions] == [
        (utc("2026-01-01T10:00:00Z"), 200, V1, None),
        (utc("2026-02-01T08:00:00Z"), 200, V2, None),  # commit time in UTC
        (utc("2026-03-01T10:00:00Z"), 404, b"", None),  # deleted: no robots.txt served
        (utc("2026-04-01T10:00:00Z"), 200, V1, None),
    ]
    again = import_git(path, "public/robots.txt", "site.example", tmp_path / "captures")
    assert (len(again.written), again.already_there) == (0, 4)


def test_deploy_times_replace_commit_times(repo, tmp_path, capsys):
    path, commits = repo
    deploys = tmp_path / "deploys.txt"
    deploys.write_text(
        "# commit deployed-at\n"
        f"{commits[1][:10]} 2026-01-05T00:00:00Z\n"  # the file as of a commit that did not touch it
        f"{commits[2]} 2026-02-10T12:00:00+01:00\n"
        f"{commits[2]} 2026-02-11T00:00:00Z\n"  # a redeploy of the same content: no new version
    )
    argv = ["history", "import-git", str(path), "public/robots.txt", "--host=site.example",
            f"--into={tmp_path / 'captures'}", f"--deployed-at={deploys}"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.startswith("site.example: 2 version(s), 2 written, 0 already there")
    versions = read_robots_table(str(tmp_path / "captures"))
    assert [(v.effective_from, v.body) for v in versions] == [
        (utc("2026-01-05T00:00:00Z"), V1), (utc("2026-02-10T11:00:00Z"), V2)
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [("abc", "expected 'COMMIT TIMESTAMP'"), ("deadbeef 2026-01-01T00:00:00Z", "no commit 'deadbeef'"),
     ("HEAD 2026-01-01T00:00:00", "needs a UTC offset")],
)
def test_a_bad_deploy_line_is_named(repo, line, message):
    with pytest.raises(GitError, match=f"deploy line 1: .*{message}"):
        read_deploys(line, repo[0])


def test_not_a_repository_exits_2(tmp_path, capsys):
    argv = ["history", "import-git", str(tmp_path), "robots.txt", "--host=site.example", f"--into={tmp_path / 'c'}"]
    assert cli.main(argv) == 2
    assert "crawl-audit: history import-git: git log in " in capsys.readouterr().err


def test_show_and_diff_describe_the_history(repo, tmp_path, capsys):
    path, _ = repo
    captures = tmp_path / "captures"
    import_git(path, "public/robots.txt", "site.example", captures)
    assert cli.main(["history", "show", str(captures)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "site.example"
    assert lines[1].startswith("  2026-01-01T10:00:00Z  200          rules  ")
    assert lines[1].endswith("groups: *, bingbot, googlebot")
    assert lines[3] == "  2026-03-01T10:00:00Z  404          allow all"

    assert cli.main(["history", "diff", str(captures), "--host=site.example", "2026-01-15", "2026-02-15"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2:] == [
        "User-agent: *  affects every crawler without a group of its own",
        "  + Disallow: /search  (line 3)",
        "  ~ Disallow -> Allow: /private  (line 2 -> 2)",
        "  ~ Crawl-delay: none -> 5s",
    ]
    assert cli.main(["history", "diff", str(captures), "--host=site.example", "2026-02-15", "2026-03-15"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "rules -> allow all"
    assert "User-agent: * (group removed)  affects every crawler without a group of its own" in out
    assert "  - Disallow: /search  (line 3)" in out

    table = tmp_path / "history.jsonl"
    table.write_text(
        '{"host": "site.example", "effective_from": "2026-01-01T00:00:00Z", "status": 200, "body": "User-agent: *"}\n'
        '{"host": "site.example", "effective_from": "2026-01-02T00:00:00Z", "status": 503,'
        ' "observed_before": "2026-01-01T12:00:00Z"}\n'
    )
    assert cli.main(["history", "diff", str(table), "--host=site.example", "2026-01-01", "2026-01-03"]) == 0
    assert capsys.readouterr().out.splitlines()[2:] == ["rules -> disallow all"]  # no rules to compare
    assert cli.main(["history", "show", str(table)]) == 0
    assert capsys.readouterr().out.splitlines()[2] == (
        "  2026-01-02T00:00:00Z  503          disallow all  (changed after 2026-01-01T12:00:00Z)"
    )
    assert cli.main(["history", "diff", str(captures), "--host=nope.example", "2026-02-15", "2026-03-15"]) == 2
    assert "no host 'nope.example' in the table (hosts: site.example)" in capsys.readouterr().err
