"""A captures folder: its layout (`HOST/TIMESTAMP.EXT` and `HOST/observations.log`), which
`pipeline.evidence.robots_table` reads, and its writer.

A capture file is written only when a host's outcome changes; every fetch, changed or not,
adds one line to the host's observations log (`TIMESTAMP  what  capture-file`), which is what
makes `observed_before` of the next change exact. Writers of one host hold a lock on its
folder, so runs for different hosts never wait on each other and two runs for one host cannot
interleave; capture files appear whole (written aside, then linked into place) and are never
replaced.
"""
from __future__ import annotations

import fcntl
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from matcher.history import RobotsTableError
from matcher.hosts import host_key
from matcher.records import rfc3339
from matcher.timerange import in_span

OBSERVATIONS_LOG = "observations.log"
# A capture's name: when it was fetched and what the fetch gave.
CAPTURE_NAME = re.compile(r"(?P<stamp>\d{8}T\d{6}Z|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)\.(?P<ext>txt|\d{3}|unreachable)")

# Lower-case DNS labels (the form robots lookups compare in), which also covers IPv4 addresses;
# nothing that could name another folder.
_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*")


@dataclass(frozen=True)
class Outcome:
    """What one fetch of a robots.txt gave: a status (None: unreachable) and, for a 2xx, the body."""

    status: int | None
    body: bytes | None = None

    @property
    def key(self) -> tuple:
        """What decides whether two outcomes differ: the status class, and a 2xx body exactly."""
        if self.status is None:
            return ("unreachable",)
        status_class = self.status // 100
        return (status_class, self.body) if status_class == 2 else (status_class,)

    @property
    def extension(self) -> str:
        if self.status is None:
            return "unreachable"
        return "txt" if self.status == 200 else str(self.status)


def checked_host(text: str) -> str:
    """The folder name of a host: its one form (`hosts.host_key`: IDNA A-labels, lower case, no
    trailing dot), the name the robots table and the logs give it; ValueError for anything else."""
    host = host_key(text) if ":" not in text else text
    if not _HOST.fullmatch(host):
        raise ValueError(f"not a host name: {text!r}")
    return host


def stamp(moment: datetime) -> str:
    """A capture's file-name timestamp (UTC, to the second); ValueError (one line) for a time
    outside 1970..9999, which no reader of the name would take back."""
    utc = in_span(moment)
    return f"{utc.year:04d}{utc:%m%dT%H%M%S}Z"


class HostFolder:
    """One host's folder of a captures folder."""

    def __init__(self, root: Path, host: str) -> None:
        self.host = checked_host(host)
        self.path = root / self.host

    @contextmanager
    def locked(self) -> Iterator[HostFolder]:
        self.path.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield self
        finally:
            os.close(descriptor)  # closing releases the lock

    def captures(self) -> list[tuple[datetime, Path]]:
        """Every capture file, oldest first."""
        found = []
        if self.path.is_dir():
            for path in self.path.iterdir():
                match = CAPTURE_NAME.fullmatch(path.name)
                if match is not None:
                    found.append((capture_time(match["stamp"]), path))
        return sorted(found)

    def latest(self) -> tuple[datetime, Path, Outcome] | None:
        captures = self.captures()
        if not captures:
            return None
        moment, path = captures[-1]
        return moment, path, outcome_of(path)

    def write(self, moment: datetime, outcome: Outcome) -> Path:
        """Save a capture; FileExistsError when one with that timestamp exists already."""
        target = self.path / f"{stamp(moment)}.{outcome.extension}"
        if any(path.name.startswith(stamp(moment) + ".") for _, path in self.captures()):
            raise FileExistsError(f"{self.path} already has a capture at {stamp(moment)}")
        handle, temporary = tempfile.mkstemp(dir=self.path, prefix=".", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(outcome.body or b"")
            os.link(temporary, target)  # never replaces a file, unlike a rename
        finally:
            os.unlink(temporary)
        return target

    def observe(self, moment: datetime, what: str, capture: Path) -> None:
        with open(self.path / OBSERVATIONS_LOG, "a", encoding="utf-8") as log:
            log.write(observation_line(moment, what, capture) + "\n")

    def observed(self) -> set[str]:
        """The observation lines already logged, for writers that resume."""
        log = self.path / OBSERVATIONS_LOG
        return set(log.read_text("utf-8").splitlines()) if log.exists() else set()


def observation_line(moment: datetime, what: str, capture: Path) -> str:
    """One line of the observations log: when, what the fetch found, and the capture it matched."""
    return f"{rfc3339(moment.replace(microsecond=0))}  {what}  {capture.name}"


def outcome_of(path: Path) -> Outcome:
    extension = path.name.rsplit(".", 1)[1]
    if extension == "unreachable":
        return Outcome(None)
    status = 200 if extension == "txt" else int(extension)
    return Outcome(status, path.read_bytes() if status // 100 == 2 else None)


def capture_time(stamp: str) -> datetime:
    """The UTC time a capture's name gives, either spelling."""
    compact = "%Y%m%dT%H%M%SZ" if "-" not in stamp else "%Y-%m-%dT%H:%M:%SZ"
    try:
        return datetime.strptime(stamp, compact).replace(tzinfo=timezone.utc)
    except ValueError as error:
        raise RobotsTableError(f"{stamp} is not a valid time: {error}") from None
