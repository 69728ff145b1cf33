"""`crawl-audit history import-git`: a robots.txt history from the repository that deploys it.

Without deploy times, every commit that changed the file is a version at its commit time
(committer date: when it entered the branch, not when it was first written). With them
(`COMMIT TIMESTAMP` per line, the commit each deploy put live), each deploy is a version
holding the file as of that commit. A commit where the file does not exist is a 404: the
site served no robots.txt. Consecutive versions with the same content are one.
"""
from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from matcher.timerange import NoOffset, parse_timestamp
from pipeline.evidence.captures import HostFolder, Outcome, stamp


class GitError(ValueError):
    """git could not answer (not a repository, unknown commit); the message says what."""


@dataclass(frozen=True)
class GitImport:
    versions: int
    written: tuple[Path, ...]
    already_there: int


def commit_times(repo: Path, path: str) -> list[tuple[str, datetime]]:
    """(commit, committer time) of each commit that changed `path`, oldest first."""
    out = _git(repo, "log", "--reverse", "--format=%H %cI", "--", path).decode()
    return [(commit, parse_timestamp(when)) for commit, when in (line.split() for line in out.splitlines())]


def head_time(repo: Path) -> datetime:
    """The committer time of the repository's HEAD."""
    return parse_timestamp(_git(repo, "log", "-1", "--format=%cI", "HEAD").decode().strip())


def read_deploys(text: str, repo: Path) -> list[tuple[str, datetime]]:
    """`COMMIT TIMESTAMP` lines (blank lines and # comments skipped) -> full commit ids and times."""
    deploys = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        try:
            commit, when = fields
            moment = parse_timestamp(when)
        except NoOffset:
            raise GitError(f"deploy line {number}: {when!r} needs a UTC offset or Z") from None
        except ValueError:
            raise GitError(f"deploy line {number}: expected 'COMMIT TIMESTAMP', got {line.strip()!r}") from None
        try:
            full = _git(repo, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").decode().strip()
        except GitError:
            raise GitError(f"deploy line {number}: no commit {commit!r} in {repo}") from None
        deploys.append((full, moment))
    return sorted(deploys, key=lambda deploy: deploy[1])


def outcome_at(repo: Path, commit: str, path: str) -> Outcome:
    """The file as of `commit`: a 200 with its bytes, or a 404 when it does not exist there."""
    listed = _git(repo, "ls-tree", "--name-only", commit, "--", path).decode().strip()
    if listed != path.strip("/"):
        return Outcome(404)
    return Outcome(200, _git(repo, "cat-file", "blob", f"{commit}:{path.strip('/')}"))


def import_git(
    repo: Path, path: str, host: str, into: Path, deploys: Sequence[tuple[str, datetime]] | None = None
) -> GitImport:
    """Write the versions of `path` in `repo` as captures of `host` under `into`."""
    folder = HostFolder(into, host)
    moments = deploys if deploys is not None else commit_times(repo, path)
    versions: list[tuple[datetime, Outcome]] = []
    for commit, moment in moments:
        outcome = outcome_at(repo, commit, path)
        if versions and stamp(versions[-1][0]) == stamp(moment):
            versions.pop()  # within one second the later commit is what stayed
        if not versions or versions[-1][1].key != outcome.key:
            versions.append((moment, outcome))
    written = []
    already = 0
    with folder.locked():
        present = {stamp(moment): path for moment, path in folder.captures()}
        for moment, outcome in versions:
            if stamp(moment) in present:
                already += 1
            else:
                written.append(folder.write(moment, outcome))
    return GitImport(len(versions), tuple(written), already)


def _git(repo: Path, *arguments: str) -> bytes:
    try:
        result = subprocess.run(["git", "-C", str(repo), *arguments], capture_output=True, check=False)
    except OSError as error:
        raise GitError(f"cannot run git: {error}") from None
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {arguments[0]} in {repo}: {message[-1] if message else 'failed'}")
    return result.stdout
