"""A git repository read as the history of one file on the branch that deploys it.

The repository is someone else's: its own configuration could name programs for git to run
(a signature checker with `log.showSignature`, an fsmonitor, a text conversion, an external
diff, a pager). git therefore runs here with a fixed environment (no user or system
configuration, no terminal prompt) and `-c` overrides that switch each of them off, and a blob is
read through a pipe only as far as the caller's limit.

What was deployed is the branch's first-parent history: a change made on another branch went
live when its merge reached the branch, so it is dated by the merge's committer time, while a
fast-forward or a rebase leaves the commits' own times. Renames on that history are followed back
from today's path.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from matcher.timerange import parse_timestamp


class GitError(ValueError):
    """git could not answer (not a repository, unknown commit or branch); the message says what."""


# Each setting that could make a read run a program named by the repository, switched off; and
# `log.follow`, which would change what a path-limited log lists.
_OVERRIDES = (
    "log.showSignature=false", "core.fsmonitor=false", "core.hooksPath=" + os.devnull,
    "core.pager=cat", "diff.external=", "log.follow=false", "core.untrackedCache=false",
)
_ENVIRONMENT = {
    "HOME": os.devnull, "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "GIT_TERMINAL_PROMPT": "0",
    "GIT_ATTR_NOSYSTEM": "1", "GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0",
}


def _environment() -> dict[str, str]:
    return {**_ENVIRONMENT, "PATH": os.pathsep.join([os.path.dirname(_git_program()), os.defpath])}


# Options for every command that can show a diff: no text conversion, no external diff program.
_NO_PROGRAMS = ("--no-textconv", "--no-ext-diff")
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Change:
    """A commit on the branch's first-parent history that changed the file at `path`, dated when
    it reached the branch; `merged`: it is a merge (a change from another branch, dated by the merge)."""

    commit: str
    moment: datetime
    path: str
    merged: bool


@dataclass(frozen=True)
class PathSpan:
    """Where the file lived for a time: from its first change at that path until `until` (None: still there)."""

    path: str
    first: datetime
    until: datetime | None


@dataclass(frozen=True)
class BranchHistory:
    branch: str
    tip_time: datetime
    changes: tuple[Change, ...]  # oldest first
    spans: tuple[PathSpan, ...]  # today's path first

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(span.path for span in self.spans)


@dataclass(frozen=True)
class FileAt:
    """What a commit holds at a path: a file's blob (`blob`, its size), or nothing (`blob` None);
    `note` says why nothing when a folder stands there."""

    blob: str | None
    size: int = 0
    note: str | None = None


class Repository:
    """One repository, read with git under the fixed environment."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def run(self, *arguments: str, stdin: bytes | None = None) -> bytes:
        try:
            result = subprocess.run(
                self._command(arguments), input=stdin, capture_output=True, check=False, env=_environment()
            )
        except OSError as error:
            raise GitError(f"cannot run git: {error}") from None
        if result.returncode != 0:
            message = result.stderr.decode(errors="replace").strip().splitlines()
            raise GitError(f"git {arguments[0]} in {self.path}: {message[-1] if message else 'failed'}")
        return result.stdout

    def commit(self, name: str) -> str:
        """The full id of the commit `name` names; GitError when none."""
        try:
            return self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}").decode().strip()
        except GitError:
            raise GitError(f"no commit {name!r} in {self.path}") from None

    def head_branch(self) -> str:
        """The branch HEAD names (HEAD itself when detached)."""
        self.run("rev-parse", "--git-dir")  # not a repository: said as git says it
        try:
            return self.run("symbolic-ref", "--quiet", "--short", "HEAD").decode().strip()
        except GitError:
            return "HEAD"

    def time_of(self, commit: str) -> datetime:
        return parse_timestamp(self.run("log", "-1", "--format=%cI", commit, "--").decode().strip())

    def files_at(self, places: Sequence[tuple[str, str]]) -> list[FileAt]:
        """What each (commit, path) holds, symbolic links inside the repository followed; one git
        process for all of them."""
        for _, path in places:
            if "\n" in path or "\0" in path:
                raise GitError(f"a path with a line break cannot be read from git: {path!r}")
        asked = "".join(f"{commit}:{path.strip('/')}\n" for commit, path in places).encode()
        out = self.run(
            "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", "--follow-symlinks", stdin=asked
        ).decode(errors="replace").split("\n")
        found = []
        lines = iter(out)
        for commit, path in places:
            fields = next(lines).split(" ")
            if fields[0] in ("symlink", "dangling", "loop", "notdir"):
                next(lines)  # the link's target or the name asked: a second line
                found.append(FileAt(None, note=f"{path} is a symbolic link to nothing in the repository at {commit[:12]}"
                                    if fields[0] != "notdir" else None))
            elif len(fields) == 3 and fields[1] == "blob":
                found.append(FileAt(fields[0], int(fields[2])))
            elif len(fields) == 3 and fields[1] == "tree":
                found.append(FileAt(None, note=f"{path} is a folder in commit {commit[:12]}: read as no file"))
            else:
                found.append(FileAt(None))  # missing, or a submodule's commit
        return found

    def read_blob(self, blob: str, limit: int) -> bytes:
        """The blob's first `limit` bytes, read through a pipe: a larger one is never held whole."""
        try:
            process = subprocess.Popen(
                self._command(("cat-file", "blob", blob)),
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_environment(),
            )
        except OSError as error:
            raise GitError(f"cannot run git: {error}") from None
        chunks: list[bytes] = []
        kept = 0
        with process:
            while kept < limit:
                chunk = process.stdout.read(min(_CHUNK, limit - kept))
                if not chunk:
                    break
                chunks.append(chunk)
                kept += len(chunk)
            if kept >= limit:
                process.kill()
        if process.returncode not in (0, -9):
            raise GitError(f"git cat-file in {self.path}: cannot read blob {blob}")
        return b"".join(chunks)

    def _command(self, arguments: Iterable[str]) -> list[str]:
        overrides = [part for setting in _OVERRIDES for part in ("-c", setting)]
        return [_git_program(), "--no-pager", *overrides, "-C", str(self.path), *arguments]


def _git_program() -> str:
    """git as the user's PATH finds it; the environment git itself runs in has no PATH of the user's."""
    found = shutil.which("git")
    if found is None:
        raise GitError("cannot run git: no git on PATH")
    return found


def branch_history(repository: Repository, paths: Sequence[str], branch: str | None = None) -> BranchHistory:
    """The changes to the file on `branch`'s first-parent history (default: HEAD's branch), from
    `paths[0]` (today's path) back through each rename, then through each older path given."""
    name = branch or repository.head_branch()
    tip = repository.commit(name)
    changes: list[Change] = []
    spans: list[PathSpan] = []
    waiting = [path.strip("/") for path in paths]
    start: str | None = tip
    until = None
    while waiting and start is not None:
        path = waiting.pop(0)
        if path in (span.path for span in spans):
            continue
        found, renamed_from, start_before = _changes_at(repository, start, path)
        if not found:
            continue
        changes.extend(found)
        spans.append(PathSpan(path, found[-1].moment, until))
        if renamed_from is not None:
            waiting.insert(0, renamed_from)
        start, until = start_before, found[-1].moment
    return BranchHistory(name, repository.time_of(tip), tuple(reversed(changes)), tuple(spans))


def _changes_at(repository: Repository, start: str, path: str) -> tuple[list[Change], str | None, str | None]:
    """The first-parent changes at `path` from `start` back, newest first, up to the commit that
    renamed another path to it; that path, if one did; and the first parent of the oldest change
    (None: it was the first commit)."""
    out = repository.run(
        "log", "--first-parent", "--format=%H %cI %P", *_NO_PROGRAMS,
        start, "--", f":(literal){path}",
    ).decode()
    listed = [line.split() for line in out.splitlines() if line.strip()]
    if not listed:
        return [], None, None
    files = repository.files_at([(fields[0], path) for fields in listed])
    changes = []
    for index, (fields, here) in enumerate(zip(listed, files)):
        commit, moment, parents = fields[0], parse_timestamp(fields[1]), fields[2:]
        changes.append(Change(commit, moment.astimezone(timezone.utc), path, len(parents) > 1))
        before = files[index + 1] if index + 1 < len(files) else FileAt(None)
        if here.blob is not None and before.blob is None and parents:
            source = _renamed_to(repository, parents[0], commit, path)
            if source is not None:
                return changes, source, parents[0]
    parents = listed[-1][2:]
    return changes, None, parents[0] if parents else None


def _renamed_to(repository: Repository, parent: str, commit: str, path: str) -> str | None:
    """The path `commit` renamed to `path` (compared with its first parent), if any."""
    out = repository.run("diff-tree", "-r", "-M", "-z", "--raw", *_NO_PROGRAMS, parent, commit).split(b"\0")
    fields = iter(out)
    for meta in fields:
        if not meta.startswith(b":"):
            continue
        status = meta.split()[-1]
        first = next(fields, b"")
        if status[:1] in (b"R", b"C"):
            second = next(fields, b"")
            if status[:1] == b"R" and second.decode(errors="surrogateescape") == path:
                return first.decode(errors="surrogateescape")
    return None
