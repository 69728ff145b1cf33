"""`crawl-audit history import-git`, `history show` and `history diff` on a repository the test makes."""
from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from matcher.robots import MAX_BYTES
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
    result = import_git(path, ["public/robots.txt"], "site.example", tmp_path / "captures")
    assert (result.versions, len(result.written), result.already_there) == (4, 4, 0)
    versions = read_robots_table(str(tmp_path / "captures"))
    assert [(v.effective_from, v.status, v.body, v.observed_before) for v in versions] == [
        (utc("2026-01-01T10:00:00Z"), 200, V1, None),
        (utc("2026-02-01T08:00:00Z"), 200, V2, None),  # commit time in UTC
        (utc("2026-03-01T10:00:00Z"), 404, b"", None),  # deleted: no robots.txt served
        (utc("2026-04-01T10:00:00Z"), 200, V1, None),
    ]
    again = import_git(path, ["public/robots.txt"], "site.example", tmp_path / "captures")
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
    assert "crawl-audit: history import-git: git rev-parse in " in capsys.readouterr().err


def test_show_and_diff_describe_the_history(repo, tmp_path, capsys):
    path, _ = repo
    captures = tmp_path / "captures"
    import_git(path, ["public/robots.txt"], "site.example", captures)
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


def _merge(repo: Path, branch: str, when: str) -> str:
    git_in(repo, "merge", "-q", "--no-ff", branch, "-m", f"merge {branch}", when=when)
    return git_in(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def deployed(tmp_path: Path) -> Path:
    """main deploys: V1; V2 written on a branch on the 15th and merged on the 18th; the file moved to
    public/ on 1 February; V3 committed on main on 1 March; a branch never merged holds V1 again."""
    repo = tmp_path / "deploy"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2026-01-01T10:00:00Z", {"robots.txt": V1})
    git_in(repo, "checkout", "-q", "-b", "feature")
    git_commit(repo, "2026-01-15T10:00:00Z", {"robots.txt": V2})
    git_in(repo, "checkout", "-q", "main")
    git_commit(repo, "2026-01-16T10:00:00Z", {"index.html": b"<html></html>"})
    _merge(repo, "feature", "2026-01-18T09:30:00Z")
    git_in(repo, "mv", "robots.txt", "public-robots.txt")
    (repo / "public").mkdir()
    git_in(repo, "mv", "public-robots.txt", "public/robots.txt")
    git_commit(repo, "2026-02-01T10:00:00Z", {})
    git_commit(repo, "2026-03-01T10:00:00Z", {"public/robots.txt": V2 + b"Disallow: /drafts\n"})
    git_in(repo, "checkout", "-q", "-b", "experiment")
    git_commit(repo, "2026-03-05T10:00:00Z", {"public/robots.txt": V1})
    git_in(repo, "checkout", "-q", "main")
    return repo


def test_a_merged_change_is_dated_by_its_merge_and_a_rename_is_followed(deployed, tmp_path, capsys):
    argv = ["history", "import-git", str(deployed), "public/robots.txt", "--host=site.example",
            f"--into={tmp_path / 'captures'}"]
    assert cli.main(argv) == 0
    versions = read_robots_table(str(tmp_path / "captures"))
    assert [(v.effective_from, v.body) for v in versions] == [
        (utc("2026-01-01T10:00:00Z"), V1),
        (utc("2026-01-18T09:30:00Z"), V2),  # live when the merge reached main, not when written
        (utc("2026-03-01T10:00:00Z"), V2 + b"Disallow: /drafts\n"),  # the move itself changed nothing
    ]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "site.example: 3 version(s), 3 written, 0 already there"
    assert out[4:] == [
        "  read main, first-parent history:",
        "    public/robots.txt  2026-02-01T10:00:00Z .. today (main at 2026-03-01T10:00:00Z)",
        "    robots.txt  2026-01-01T10:00:00Z .. 2026-02-01T10:00:00Z",
        "  each version dated when it reached main: a merge by its committer time",
        "  2 version(s) came by a commit of their own (made on main, fast-forwarded or rebased) and keep its"
        " commit time; if a deploy put them live later, give the deploy times with --deployed-at FILE",
    ]


def test_the_branch_read_is_the_one_given_or_heads(deployed, tmp_path, capsys):
    git_in(deployed, "checkout", "-q", "experiment")
    into = f"--into={tmp_path / 'captures'}"
    assert cli.main(["history", "import-git", str(deployed), "public/robots.txt", "--host=a.example", into]) == 0
    assert "  read experiment, first-parent history:" in capsys.readouterr().out
    assert read_robots_table(str(tmp_path / "captures"))[-1].body == V1
    argv = ["history", "import-git", str(deployed), "public/robots.txt", "--host=b.example", into, "--branch=main"]
    assert cli.main(argv) == 0
    assert [v.body for v in read_robots_table(str(tmp_path / "captures")) if v.host == "b.example"][-1] != V1
    assert cli.main([*argv[:-1], "--branch=nope"]) == 2
    assert "no commit 'nope' in" in capsys.readouterr().err


def test_an_older_path_given_covers_a_move_git_does_not_see_as_a_rename(tmp_path, capsys):
    repo = tmp_path / "site"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2026-01-01T00:00:00Z", {"robots.txt": V1})
    git_commit(repo, "2026-02-01T00:00:00Z", {"robots.txt": None, "web/robots.txt": b"User-agent: *\nAllow: /\n"})
    into = tmp_path / "captures"
    assert cli.main(["history", "import-git", str(repo), "web/robots.txt", "--host=a.example", f"--into={into}"]) == 0
    assert [v.body for v in read_robots_table(str(into))] == [b"User-agent: *\nAllow: /\n"]
    argv = ["history", "import-git", str(repo), "web/robots.txt", "robots.txt", "--host=b.example", f"--into={into}"]
    assert cli.main(argv) == 0
    assert [v.body for v in read_robots_table(str(into)) if v.host == "b.example"] == [V1, b"User-agent: *\nAllow: /\n"]
    assert "    robots.txt  2026-01-01T00:00:00Z .. 2026-02-01T00:00:00Z" in capsys.readouterr().out.splitlines()


def test_a_folder_or_a_submodule_at_the_path_is_no_file(tmp_path, capsys):
    repo = tmp_path / "site"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2026-01-01T00:00:00Z", {"robots.txt": V1})
    git_commit(repo, "2026-02-01T00:00:00Z", {"robots.txt": None, "robots.txt/index.html": b"<html></html>"})
    git_in(repo, "rm", "-q", "-r", "robots.txt")
    git_in(repo, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},robots.txt")
    git_commit(repo, "2026-03-01T00:00:00Z", {})
    git_in(repo, "rm", "-q", "--cached", "robots.txt")
    git_commit(repo, "2026-04-01T00:00:00Z", {"robots.txt": V2})
    argv = ["history", "import-git", str(repo), "robots.txt", "--host=a.example", f"--into={tmp_path / 'captures'}"]
    assert cli.main(argv) == 0
    assert [(v.effective_from, v.status) for v in read_robots_table(str(tmp_path / "captures"))] == [
        (utc("2026-01-01T00:00:00Z"), 200), (utc("2026-02-01T00:00:00Z"), 404), (utc("2026-04-01T00:00:00Z"), 200),
    ]
    assert "robots.txt is a folder in commit " in capsys.readouterr().out


def test_a_large_file_is_read_no_further_than_the_parser_keeps(tmp_path):
    repo = tmp_path / "site"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2026-01-01T00:00:00Z", {"robots.txt": b"User-agent: *\n" + b"Disallow: /x\n" * 400_000})
    import_git(repo, ["robots.txt"], "a.example", tmp_path / "captures")
    (capture,) = (tmp_path / "captures" / "a.example").glob("*.txt")
    assert capture.stat().st_size == MAX_BYTES + 1  # one byte more: the parser knows it was cut


def test_the_repositorys_own_configuration_runs_no_program(tmp_path, capsys):
    """A repository that names programs (a signature checker shown with every log, an fsmonitor)
    and holds a signed commit: importing from it runs none of them."""
    repo = tmp_path / "site"
    repo.mkdir()
    git_in(repo, "init", "-q", "-b", "main")
    git_commit(repo, "2026-01-01T00:00:00Z", {"robots.txt": V1, "ranges.txt": b"20.171.206.0/24\n"})
    marker = tmp_path / "ran"
    program = tmp_path / "program.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    commit = git_in(repo, "cat-file", "commit", "HEAD")
    header, _, message = commit.partition("\n\n")
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n =abcd\n -----END PGP SIGNATURE-----"
    signed = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=f"{header}\n{signature}\n\n{message}", capture_output=True, text=True, check=True,
    ).stdout.strip()
    git_in(repo, "update-ref", "refs/heads/main", signed)
    for setting in ("log.showSignature=true", f"gpg.program={program}", f"core.fsmonitor={program}",
                    f"diff.external={program}", f"core.pager={program}"):
        git_in(repo, "config", *setting.split("=", 1))
    assert cli.main(["history", "import-git", str(repo), "robots.txt", "--host=a.example",
                     f"--into={tmp_path / 'captures'}"]) == 0
    assert cli.main(["update-ranges", f"--ranges={tmp_path / 'ranges'}", "import-git", str(repo), "ranges.txt",
                     "--source=openai-gptbot"]) == 0
    assert not marker.exists()
    assert [v.body for v in read_robots_table(str(tmp_path / "captures"))] == [V1]
