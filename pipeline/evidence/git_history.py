"""`crawl-audit history import-git`: a robots.txt history from the repository that deploys it.

Without deploy times, each change to the file on the branch's first-parent history is a version,
dated when it reached the branch (a merge's committer time; a commit made on the branch, or
fast-forwarded or rebased onto it, by its own committer time), with renames followed back from
today's path. With deploy times (`COMMIT TIMESTAMP` per line, the commit each deploy put live),
each deploy is a version holding the file as of that commit. A commit where no file stands at the
path (none, a folder, a submodule) is a 404: the site served no robots.txt. Consecutive versions
with the same content are one. A file is read to one byte past what the robots.txt parser keeps,
so a larger one is parsed as cut, as a fetch would be.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from matcher.robots import MAX_BYTES
from matcher.timerange import NoOffset, parse_timestamp
from pipeline.evidence.captures import HostFolder, Outcome, stamp
from pipeline.evidence.git_repository import BranchHistory, FileAt, GitError, Repository, branch_history

# What the parser reads of a body, and one byte more so that it knows the body was cut.
_BODY_LIMIT = MAX_BYTES + 1


@dataclass(frozen=True)
class GitImport:
    versions: int
    written: tuple[Path, ...]
    already_there: int
    history: BranchHistory
    by_own_time: int  # versions dated by a commit of their own rather than a merge (with no deploy times)
    notes: tuple[str, ...]


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
            full = Repository(repo).commit(commit)
        except GitError:
            raise GitError(f"deploy line {number}: no commit {commit!r} in {repo}") from None
        deploys.append((full, moment))
    return sorted(deploys, key=lambda deploy: deploy[1])


def import_git(
    repo: Path, paths: Sequence[str], host: str, into: Path,
    deploys: Sequence[tuple[str, datetime]] | None = None, branch: str | None = None,
) -> GitImport:
    """Write the versions of the file (`paths[0]` today, older paths after it) in `repo` as
    captures of `host` under `into`."""
    repository = Repository(repo)
    folder = HostFolder(into, host)
    history = branch_history(repository, paths, branch)
    if deploys is not None:
        moments = [(commit, moment, False) for commit, moment in deploys]
        files = _deployed_files(repository, deploys, history.paths or tuple(paths))
    else:
        moments = [(change.commit, change.moment, change.merged) for change in history.changes]
        files = repository.files_at([(change.commit, change.path) for change in history.changes])
    versions: list[tuple[datetime, FileAt, bool]] = []
    for (_, moment, merged), found in zip(moments, files):
        if versions and stamp(versions[-1][0]) == stamp(moment):
            versions.pop()  # within one second the later commit is what stayed
        if not versions or versions[-1][1].blob != found.blob:
            versions.append((moment, found, merged))
    notes = tuple(dict.fromkeys(found.note for found in files if found.note))
    written = []
    already = 0
    with folder.locked():
        present = {stamp(moment) for moment, _ in folder.captures()}
        for moment, found, _ in versions:
            if stamp(moment) in present:
                already += 1
            else:
                written.append(folder.write(moment, _outcome(repository, found)))
    by_own_time = 0 if deploys is not None else sum(not merged for _, _, merged in versions)
    return GitImport(len(versions), tuple(written), already, history, by_own_time, notes)


def _deployed_files(repository: Repository, deploys: Sequence[tuple[str, datetime]], paths: Sequence[str]) -> list[FileAt]:
    """The file each deployed commit holds: at the newest of `paths` where it has one."""
    asked = [(commit, path) for commit, _ in deploys for path in paths]
    found = repository.files_at(asked)
    per_deploy = [found[index:index + len(paths)] for index in range(0, len(found), len(paths))]
    return [next((file for file in files if file.blob is not None), files[0]) for files in per_deploy]


def _outcome(repository: Repository, found: FileAt) -> Outcome:
    if found.blob is None:
        return Outcome(404)
    return Outcome(200, repository.read_blob(found.blob, _BODY_LIMIT))
